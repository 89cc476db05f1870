import Foundation
import HearthClient
import Observation

/// The signed-in user's conversations, most recent first, with unread counts, live.
@MainActor
@Observable
public final class ConversationListViewModel {
    public private(set) var conversations: [ConversationSummary] = []
    public private(set) var errorMessage: String?

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init(client: SocialClient) {
        self.client = client
    }

    isolated deinit {
        listener?.cancel()
    }

    /// Messages not yet read, in all conversations.
    public var unreadTotal: Int { conversations.reduce(0) { $0 + $1.unread } }

    public func start() {
        listener?.cancel()
        guard let uid = client.uid else { return errorMessage = SocialError.notSignedIn.description }
        let query = client.database.root.child("user-chats/\(uid)").queryOrdered(byChild: "updated")
        listener = watchValue(query, for: self) { model, snapshot in
            model.conversations = snapshot.children.compactMap { $0.decoded(ConversationSummary.self) }.reversed()
        } fail: { model, message in
            model.errorMessage = message
        }
    }

    public func stop() {
        listener?.cancel()
        listener = nil
    }
}

/// A one-to-one conversation: its messages, live, and sending.
@MainActor
@Observable
public final class ConversationViewModel {
    /// The other person's uid.
    public let otherUID: String
    /// Oldest first.
    public private(set) var messages: [Message] = []
    public private(set) var errorMessage: String?
    public var draft = ""

    /// How many of the latest messages are shown.
    public let window: Int
    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init(client: SocialClient, with otherUID: String, window: Int = 100) {
        self.client = client
        self.otherUID = otherUID
        self.window = window
    }

    isolated deinit {
        listener?.cancel()
    }

    public var conversationID: String? {
        client.uid.map { ConversationSummary.id(between: $0, and: otherUID) }
    }

    public func isMine(_ message: Message) -> Bool { message.from == client.uid }

    /// Listens to the messages and marks the conversation read as they arrive.
    public func start() {
        listener?.cancel()
        guard let conversationID else { return errorMessage = SocialError.notSignedIn.description }
        let query = client.database.root.child("messages/\(conversationID)").queryOrderedByKey().queryLimited(toLast: window)
        listener = watchValue(query, for: self) { model, snapshot in
            model.messages = snapshot.children.compactMap { $0.decoded(Message.self) }
            await model.markRead()
        } fail: { model, message in
            model.errorMessage = message
        }
    }

    public func stop() {
        listener?.cancel()
        listener = nil
    }

    /// Sends ``draft``: the message and both members' conversation summaries in one write (the
    /// other member's unread count goes up by one).
    public func send() async {
        let text = draft.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return errorMessage = "Write something first." }
        guard text.count <= Message.maxLength else { return errorMessage = "The message is too long." }
        errorMessage = nil
        do {
            let me = try client.requireUser().uid
            guard me != otherUID else { throw SocialError.invalid("You cannot message yourself.") }
            let conversation = ConversationSummary.id(between: me, and: otherUID)
            let root = client.database.root
            let messageID = root.child("messages/\(conversation)").childByAutoId().key!
            let preview = String(text.prefix(200))
            let write = root.updateChildValues([
                "messages/\(conversation)/\(messageID)": try DatabaseValue.encoding(Message(from: me, text: text)),
                "user-chats/\(me)/\(conversation)": [
                    "with": DatabaseValue(otherUID), "lastMessage": DatabaseValue(preview), "updated": .serverTimestamp, "unread": 0,
                ],
                "user-chats/\(otherUID)/\(conversation)": [
                    "with": DatabaseValue(me), "lastMessage": DatabaseValue(preview), "updated": .serverTimestamp, "unread": .increment(1),
                ],
            ])
            draft = ""
            try await client.settle(write)
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }

    /// Sets the signed-in user's unread count for this conversation to zero.
    public func markRead() async {
        guard let me = client.uid, let conversationID else { return }
        let unread = client.database.root.child("user-chats/\(me)/\(conversationID)/unread")
        if let count = try? await unread.getData().number, count > 0 {
            unread.setValue(DatabaseValue(0))
        }
    }
}

/// The signed-in user's saved posts, most recently saved first, live.
@MainActor
@Observable
public final class SavedPostsViewModel {
    /// What was saved and when, most recent first.
    public private(set) var entries: [SavedPost] = []
    /// The saved posts that still exist, in the same order.
    public private(set) var posts: [Post] = []
    public private(set) var errorMessage: String?

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init(client: SocialClient) {
        self.client = client
    }

    isolated deinit {
        listener?.cancel()
    }

    public func start() {
        listener?.cancel()
        guard let uid = client.uid else { return errorMessage = SocialError.notSignedIn.description }
        let query = client.database.root.child("saved/\(uid)").queryOrderedByValue()
        let loader = PostLoader(client: client)
        listener = watchValue(query, for: self) { model, snapshot in
            let entries = snapshot.children.reversed().compactMap { child in
                child.key.map { SavedPost(postID: $0, savedAt: Int64(child.number ?? 0)) }
            }
            // Both at once, so `posts` is always in `entries`' order (a save's local time estimate
            // may order it differently until the server's time arrives).
            let posts = try await loader.posts(entries.map(\.postID))
            model.entries = entries
            model.posts = posts
        } fail: { model, message in
            model.errorMessage = message
        }
    }

    public func stop() {
        listener?.cancel()
        listener = nil
    }
}
