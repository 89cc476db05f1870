import Foundation
import HearthCore
import HearthFunctions
import Logging

/// The social app's own functions, run in the server's process by `hearth serve` with the demo
/// app: what FriendlyPix does on its server because a client must not be trusted with it.
public struct SocialFunctions: Sendable {
    let backend: SocialBackend
    let moderation: @Sendable () -> TextModeration
    let now: @Sendable () -> Int64
    let ledger: DeletedAccountsLedger?
    let retention: Retention
    let push: Push?
    let logger: Logger

    /// Web Push: how messages are sent, and the key browsers subscribe with.
    public struct Push: Sendable {
        /// Sends one message to one browser.
        public var send: @Sendable (_ payload: [UInt8], _ to: WebPushSubscription, _ urgency: WebPushSender.Urgency) async throws -> WebPushSender.Outcome
        /// The VAPID public key (base64url), published at `pushConfig/vapidPublicKey`.
        public var publicKey: String
        /// Plain `http` endpoints on this machine are taken too: for tests against a local push service.
        public var allowsLoopbackHTTP: Bool

        public init(
            sender: WebPushSender, publicKey: String, allowsLoopbackHTTP: Bool = false
        ) {
            self.send = { payload, subscription, urgency in try await sender.send(payload, to: subscription, urgency: urgency) }
            self.publicKey = publicKey
            self.allowsLoopbackHTTP = allowsLoopbackHTTP
        }
    }

    /// The operator's retention settings (off by default).
    public struct Retention: Sendable, Equatable {
        /// Posts older than this many days are removed; nil keeps them.
        public var postDays: Int?
        /// Accounts not used for this many days (not signed in to, no session refreshed) are
        /// deleted, with all their data; nil keeps them.
        public var inactiveAccountDays: Int?
        /// When the retention jobs run (cron, or App Engine's `every …`).
        public var schedule: String

        public init(postDays: Int? = nil, inactiveAccountDays: Int? = nil, schedule: String = "every 1 hours") {
            self.postDays = postDays
            self.inactiveAccountDays = inactiveAccountDays
            self.schedule = schedule
        }
    }

    /// How long after a deletion its clean-up runs again: the ID tokens the account had
    /// (valid for an hour) have expired by then.
    public static let tokenLifetime: Int64 = 65 * 60 * 1000

    /// - Parameters:
    ///   - moderation: the moderation to apply, asked at each event (the operator's word list may change).
    ///   - now: milliseconds since the epoch.
    ///   - ledger: where deleted accounts are noted, for the clean-up's second run (nil: one run).
    public init(
        backend: SocialBackend, moderation: @escaping @Sendable () -> TextModeration, now: @escaping @Sendable () -> Int64,
        ledger: DeletedAccountsLedger? = nil, retention: Retention = Retention(), push: Push? = nil, logger: Logger
    ) {
        self.backend = backend
        self.moderation = moderation
        self.now = now
        self.ledger = ledger
        self.retention = retention
        self.push = push
        self.logger = logger
    }

    /// Called once the server handed over its parts: publishes what browsers subscribe with,
    /// and counts the comments of posts that have none counted (data from before the count).
    public func started() async throws {
        let data = try backend.parts().data
        if let push { try await data.update([.of("pushConfig", "vapidPublicKey"): .string(push.publicKey)]) }
        try await CommentCount(data: data).countUncounted()
    }

    /// The functions run on a schedule, for ``HearthFunctions/Scheduler``.
    public var scheduled: [ScheduledFunction] {
        get throws {
            var functions: [ScheduledFunction] = []
            if let ledger {
                let (backend, now, logger) = (backend, now, logger)
                functions.append(.swift(
                    name: "sweepDeletedAccounts", schedule: try CronSchedule("every 15 minutes", timeZone: nil, function: "sweepDeletedAccounts")
                ) { _ in
                    let parts = try backend.parts()
                    let cleanup = AccountCleanup(data: parts.data, files: parts.files)
                    let entries = try ledger.entries()
                    for entry in entries {
                        let report = try await cleanup.run(uid: entry.uid)
                        if report.paths > 0 || report.files > 0 {
                            logger.info("removed data written again by a deleted account", metadata: [
                                "uid": "\(entry.uid)", "paths": "\(report.paths)", "files": "\(report.files)",
                            ])
                        }
                    }
                    try ledger.forget(deletedAtOrBefore: now() - Self.tokenLifetime, uids: Set(entries.map(\.uid)))
                })
            }
            if let days = retention.postDays {
                let (backend, now, logger) = (backend, now, logger)
                functions.append(.swift(
                    name: "deleteOldPosts", schedule: try CronSchedule(retention.schedule, timeZone: nil, function: "deleteOldPosts"),
                    timeout: .seconds(3600)
                ) { _ in
                    let parts = try backend.parts()
                    let removed = try await PostRetention(data: parts.data, files: parts.files, batch: 200)
                        .removePosts(publishedBefore: now() - Int64(days) * 86_400_000)
                    if removed > 0 { logger.info("removed posts past the retention period", metadata: ["posts": "\(removed)", "days": "\(days)"]) }
                })
            }
            if let days = retention.inactiveAccountDays {
                let (backend, now, logger) = (backend, now, logger)
                functions.append(.swift(
                    name: "deleteInactiveAccounts",
                    schedule: try CronSchedule(retention.schedule, timeZone: nil, function: "deleteInactiveAccounts"), timeout: .seconds(3600)
                ) { _ in
                    guard let accounts = try backend.parts().accounts else { return }
                    var deleted = 0
                    for uid in try await accounts.unused(since: now() - Int64(days) * 86_400_000) where try await accounts.delete(uid: uid) {
                        deleted += 1
                    }
                    if deleted > 0 {
                        logger.info("deleted accounts unused past the retention period", metadata: ["accounts": "\(deleted)", "days": "\(days)"])
                    }
                })
            }
            return functions
        }
    }

    /// True when `data` is a data folder the demo app's server side runs in (it keeps its
    /// state there): `hearth users`, run beside the server, then records the account events
    /// these functions take, which the server delivers.
    public static func runs(in data: URL) -> Bool {
        FileManager.default.fileExists(atPath: data.appendingPathComponent("social").path)
    }

    /// The account triggers among the functions (`deleteUserData`).
    public static var accountSubscriptions: [AccountTriggerRecorder.Subscription] {
        [AccountTriggerRecorder.Subscription(function: "deleteUserData", trigger: AccountTrigger(change: .deleted))]
    }

    /// Every function, for ``HearthFunctions/FunctionsService``.
    public var definitions: [FunctionDefinition] {
        get throws {
            [deleteUserData, try moderatePosts, try moderateComments, try countComments, try queuePostReports, try queueCommentReports,
             try runAdminRequests, try syncAdmins] + (try pushFunctions)
        }
    }

    /// When an account is deleted (by its owner, the console, the admin API or the CLI), all
    /// its data goes (``AccountCleanup``). A run cut short (a crash, the timeout) is delivered
    /// again and finishes what is left; `sweepDeletedAccounts` runs it again until the
    /// account's last ID token has expired.
    var deleteUserData: FunctionDefinition {
        let (backend, ledger, logger) = (backend, ledger, logger)
        return FunctionDefinition.onAccount(
            .deleted, name: "deleteUserData",
            policy: DeliveryPolicy(maxAttempts: 20, minBackoff: .seconds(1), maxBackoff: .seconds(300), timeout: .seconds(600))
        ) { event in
            let parts = try backend.parts()
            // Noted first, so a device still signed in cannot outlast the clean-up (see the ledger).
            try ledger?.record(event.uid, at: event.time)
            let report = try await AccountCleanup(data: parts.data, files: parts.files).run(uid: event.uid)
            logger.info("removed a deleted account's data", metadata: [
                "uid": "\(event.uid)", "posts": "\(report.posts)", "likes": "\(report.likes)", "comments": "\(report.comments)",
                "conversations": "\(report.conversations)", "files": "\(report.files)", "paths": "\(report.paths)",
            ])
        }
    }

    /// A new post is moderated and the people it names are told; a deleted one takes with it
    /// what its author could not remove (other people's saved and feed entries, its reports,
    /// the originals moderation kept, the mentions' notifications).
    var moderatePosts: FunctionDefinition {
        get throws {
            let (backend, moderation, now) = (backend, moderation, now)
            return try FunctionDefinition.onValue(.written, ref: "posts/{postId}", name: "moderatePosts") { event in
                let parts = try backend.parts()
                guard let id = event.parameters["postId"] else { return }
                if event.before.at("mentions") != event.after.at("mentions") {
                    try await MentionNotifications(data: parts.data, now: now).update(post: id, comment: nil, before: event.before, after: event.after)
                }
                if event.after.isNull {
                    guard let author = event.before.at("author", "uid").string else { return }
                    let removal = PostRemoval(data: parts.data, files: parts.files)
                    for chunk in try await removal.changes(removing: [id: author]).chunks(of: 500) { try await parts.data.update(chunk) }
                } else if event.before.isNull || event.before.at("title") != event.after.at("title") || event.before.at("body") != event.after.at("body") {
                    try await ContentModeration(data: parts.data, moderation: moderation()).moderatePost(id)
                }
            }
        }
    }

    /// A comment written or edited is moderated and the people it names are told; a deleted one
    /// takes its reports, original and mentions' notifications along.
    var moderateComments: FunctionDefinition {
        get throws {
            let (backend, moderation, now) = (backend, moderation, now)
            return try FunctionDefinition.onValue(.written, ref: "comments/{postId}/{commentId}", name: "moderateComments") { event in
                let parts = try backend.parts()
                guard let post = event.parameters["postId"], let comment = event.parameters["commentId"] else { return }
                if event.before.at("mentions") != event.after.at("mentions") {
                    try await MentionNotifications(data: parts.data, now: now).update(
                        post: post, comment: comment, before: event.before, after: event.after)
                }
                if event.after.isNull {
                    try await parts.data.update([
                        .of("commentFlags", post, comment): .null, .of("reports", "comments", post, comment): .null,
                        .of("moderated", "comments", post, comment): .null,
                    ])
                } else if event.before.at("text") != event.after.at("text") {
                    try await ContentModeration(data: parts.data, moderation: moderation()).moderateComment(post: post, comment: comment)
                }
            }
        }
    }

    /// A comment added or removed changes its post's `commentCount` (``CommentCount``).
    var countComments: FunctionDefinition {
        get throws {
            let backend = backend
            return try FunctionDefinition.onValue(.written, ref: "comments/{postId}/{commentId}", name: "countComments") { event in
                guard let post = event.parameters["postId"], event.before.isNull != event.after.isNull else { return }
                try await CommentCount(data: try backend.parts().data).recount(post: post)
            }
        }
    }

    /// Reports of posts reach the moderation queue.
    var queuePostReports: FunctionDefinition {
        get throws {
            let (backend, now) = (backend, now)
            return try FunctionDefinition.onValue(.written, ref: "postFlags/{postId}/{uid}", name: "queuePostReports") { event in
                guard let post = event.parameters["postId"] else { return }
                try await ReportQueue(data: try backend.parts().data, now: now).recountPost(post)
            }
        }
    }

    /// Reports of comments reach the moderation queue.
    var queueCommentReports: FunctionDefinition {
        get throws {
            let (backend, now) = (backend, now)
            return try FunctionDefinition.onValue(
                .written, ref: "commentFlags/{postId}/{commentId}/{uid}", name: "queueCommentReports"
            ) { event in
                guard let post = event.parameters["postId"], let comment = event.parameters["commentId"] else { return }
                try await ReportQueue(data: try backend.parts().data, now: now).recountComment(post: post, comment: comment)
            }
        }
    }

    /// Admins' requests (remove, dismiss, suspend) carried out with the server's authority.
    var runAdminRequests: FunctionDefinition {
        get throws {
            let backend = backend
            return try FunctionDefinition.onValue(
                .created, ref: "adminRequests/{requestId}", name: "runAdminRequests",
                policy: DeliveryPolicy(maxAttempts: 8, timeout: .seconds(300))
            ) { event in
                guard let id = event.parameters["requestId"] else { return }
                let parts = try backend.parts()
                try await AdminRequests(data: parts.data, files: parts.files, accounts: parts.accounts).run(id)
            }
        }
    }

    /// FriendlyPix's `admins/{uid}` entries, which only the operator writes, give and take the
    /// `admin` claim (the console and `hearth users claims` set it directly too).
    var syncAdmins: FunctionDefinition {
        get throws {
            let (backend, logger) = (backend, logger)
            return try FunctionDefinition.onValue(.written, ref: "admins/{uid}", name: "syncAdmins") { event in
                guard let uid = event.parameters["uid"], let accounts = try backend.parts().accounts else { return }
                let admin = event.after.unprioritized == .bool(true)
                if try await !accounts.setAdmin(admin, uid: uid) {
                    logger.warning("admins/ names no account", metadata: ["uid": "\(uid)"])
                }
            }
        }
    }

    // MARK: - Web Push

    /// Notifications and direct messages pushed to the person's browsers, and subscriptions checked.
    var pushFunctions: [FunctionDefinition] {
        get throws {
            guard let push else { return [] }
            let backend = backend
            let delivery: @Sendable (SocialBackend.Parts) -> PushDelivery = { parts in
                PushDelivery(
                    data: parts.data, send: { message, subscription in
                        try await push.send(message.payload, subscription, message.kind == "message" ? .high : .normal)
                    }, allowsLoopbackHTTP: push.allowsLoopbackHTTP)
            }
            let policy = DeliveryPolicy(maxAttempts: 5, minBackoff: .seconds(5), maxBackoff: .seconds(300), timeout: .seconds(120), maxConcurrency: 8)
            return [
                try FunctionDefinition.onValue(.created, ref: "notifications/{uid}/{notificationId}", name: "pushNotifications", policy: policy) { event in
                    guard let uid = event.parameters["uid"], let id = event.parameters["notificationId"] else { return }
                    let parts = try backend.parts()
                    let title = try await event.after.at("post").string.asyncMap { try await parts.data.value(at: .of("posts", $0, "title")).string }
                    guard let message = PushDelivery.message(for: event.after, id: id, postTitle: title ?? nil) else { return }
                    _ = try await delivery(parts).deliver(message, to: uid)
                },
                try FunctionDefinition.onValue(.created, ref: "messages/{conversationId}/{messageId}", name: "pushMessages", policy: policy) { event in
                    guard let conversation = event.parameters["conversationId"], let from = event.after.at("from").string,
                        let recipient = AccountCleanup.otherMember(of: conversation, than: from)
                    else { return }
                    let parts = try backend.parts()
                    let name = try await parts.data.value(at: .of("people", from, "full_name")).string
                    guard let message = PushDelivery.message(forChat: event.after, conversation: conversation, senderName: name) else { return }
                    _ = try await delivery(parts).deliver(message, to: recipient)
                },
                // What a browser stored is checked fully (the rules check its shape): one that is not
                // a usable subscription, or stored under another ID, is removed; past the bound,
                // the oldest go.
                try FunctionDefinition.onValue(.written, ref: "pushSubscriptions/{uid}/{subscriptionId}", name: "checkPushSubscriptions") { event in
                    guard let uid = event.parameters["uid"], let id = event.parameters["subscriptionId"], !event.after.isNull else { return }
                    let usable = PushDelivery.subscription(event.after, allowsLoopbackHTTP: push.allowsLoopbackHTTP)
                    guard usable?.id == id else {
                        return try await backend.parts().data.update([.of("pushSubscriptions", uid, id): .null])
                    }
                    // A new browser beyond the bound replaces the one stored longest ago.
                    try await delivery(try backend.parts()).trimSubscriptions(of: uid)
                },
            ]
        }
    }
}

extension Optional {
    /// The wrapped value transformed by an async function.
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
