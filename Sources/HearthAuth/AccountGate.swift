import HearthCore
import Synchronization

/// Whether the account behind a signed, unexpired ID token may still use it: not disabled, not
/// deleted, and the token issued after the account's sessions were last ended (`validSince`: a
/// sign-out everywhere, a password change, a revocation). Firebase's Realtime Database takes
/// any such token until it expires, up to an hour; Hearth's database refuses these at once, so
/// that disabling an account ends what its open sessions can do.
///
/// Answers come from the account store and are kept for `ttl` per account: a change made
/// through this process's ``AuthService`` clears its entry and tells the observers at once
/// (realtime connections signed in as that account check again); a change made by another
/// process or cluster node is seen within `ttl`. At most `capacity` accounts are kept.
///
/// Threading: the cache and the observers are behind one lock each; lookups run unlocked. A
/// lookup that overlapped a ``changed(uid:)`` (of any account) answers its own request but is
/// not kept: it may have read the store before the change.
public final class AccountGate: Sendable {
    /// Why an account's token is refused.
    public enum Refusal: Sendable, Equatable, CustomStringConvertible {
        case disabled
        case deleted
        /// Issued before the account's sessions were ended.
        case revoked

        public var description: String {
            switch self {
            case .disabled: "The account is disabled."
            case .deleted: "The account was deleted."
            case .revoked: "The sign-in was ended."
            }
        }
    }

    private struct Entry {
        /// Nil: the account does not exist.
        var disabled: Bool?
        var validSince: Int64
        var checked: Int64
    }

    private let lookup: @Sendable (String) async throws -> UserRecord?
    private let ttl: Int64
    private let capacity: Int
    private let clock: @Sendable () -> Int64
    /// The sign-in session that ended an account's other sessions itself (a new password, a new
    /// email): it was given new tokens in the answer, and goes on until it uses them.
    private struct Continuing {
        var session: String
        /// The account's `validSince` that change set: a later change ends this one too.
        var validSince: Int64
    }

    private struct Cache {
        var entries: [String: Entry] = [:]
        var continuing: [String: Continuing] = [:]
        /// Counts ``changed(uid:)`` calls: a lookup keeps its answer only if none came meanwhile.
        var changes: UInt64 = 0
    }

    private let cache = Mutex(Cache())
    private let observers = Mutex<[@Sendable (String) -> Void]>([])

    /// - Parameters:
    ///   - lookup: the account by uid (the account store's), nil when there is none.
    ///   - ttl: how long an answer is kept, in milliseconds.
    ///   - clock: milliseconds since the epoch.
    public init(
        ttl: Int64 = 2_000, capacity: Int = 100_000, clock: @escaping @Sendable () -> Int64,
        lookup: @escaping @Sendable (String) async throws -> UserRecord?
    ) {
        self.lookup = lookup
        self.ttl = ttl
        self.capacity = capacity
        self.clock = clock
    }

    /// Why a token of `uid` issued at `issuedAt` (seconds) for the sign-in session `session`
    /// (its `jti`) is refused, or nil when it is not.
    /// A store that cannot answer refuses nothing: the signature and expiry were checked, and
    /// an outage of the account store must not sign everyone out.
    public func refusal(uid: String, issuedAt: Int64?, session: String? = nil) async -> Refusal? {
        let now = clock()
        let (cached, changesBefore, continuing) = cache.withLock { ($0.entries[uid], $0.changes, $0.continuing[uid]) }
        if let cached, now - cached.checked < ttl { return Self.refusal(cached, issuedAt: issuedAt, session: session, continuing: continuing) }
        let user: UserRecord?
        do {
            user = try await lookup(uid)
        } catch {
            return nil
        }
        let entry = Entry(disabled: user.map(\.disabled), validSince: user?.validSince ?? 0, checked: now)
        cache.withLock { cache in
            guard cache.changes == changesBefore else { return }
            if cache.entries.count >= capacity {
                cache.entries = cache.entries.filter { now - $0.value.checked < ttl }
                if cache.entries.count >= capacity { cache.entries.removeAll(keepingCapacity: true) }
            }
            cache.entries[uid] = entry
        }
        return Self.refusal(entry, issuedAt: issuedAt, session: session, continuing: continuing)
    }

    private static func refusal(_ entry: Entry, issuedAt: Int64?, session: String?, continuing: Continuing?) -> Refusal? {
        guard let disabled = entry.disabled else { return .deleted }
        if disabled { return .disabled }
        // Whole seconds, as token times are: a token issued in the same second stays valid.
        if let issuedAt, issuedAt < entry.validSince {
            if let session, let continuing, continuing.session == session, continuing.validSince == entry.validSince { return nil }
            return .revoked
        }
        return nil
    }

    /// `uid` was disabled, deleted, or its sessions ended through this process: its answer is
    /// looked up again, and the observers are told. When the sign-in session `continuing` (a
    /// token's `jti`) ended the others itself, setting `validSince`, its tokens stay valid: it
    /// was answered with new ones, and its open connections must not be signed out before it
    /// uses them (its SDK would refresh with the ended refresh token, and sign the person out).
    public func changed(uid: String, continuing: (session: String, validSince: Int64)? = nil) {
        cache.withLock { cache in
            cache.entries.removeValue(forKey: uid)
            cache.changes &+= 1
            if let continuing {
                if cache.continuing.count >= capacity { cache.continuing.removeAll(keepingCapacity: true) }
                cache.continuing[uid] = Continuing(session: continuing.session, validSince: continuing.validSince)
            } else {
                cache.continuing.removeValue(forKey: uid)
            }
        }
        for observer in observers.withLock({ $0 }) { observer(uid) }
    }

    /// Calls `observer` with each uid ``changed(uid:)`` is told of.
    public func observe(_ observer: @escaping @Sendable (String) -> Void) {
        observers.withLock { $0.append(observer) }
    }
}
