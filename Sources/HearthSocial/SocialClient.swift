import Foundation
import HearthClient

/// The app's connection to a Hearth server: its accounts, database and file storage, sharing
/// one signed-in user. ViewModels are given one; tests give each simulated user their own.
public final class SocialClient: Sendable {
    public let auth: Auth
    public let database: Database
    public let storage: Storage
    /// The server, for share links.
    public let url: URL
    /// Writes the server refused after the app had moved on (they were made offline), in
    /// words; ``SyncStatusViewModel`` shows them.
    let lateRefusals: AsyncStream<String>
    let lateRefusalSink: AsyncStream<String>.Continuation
    /// Posts with photos made offline, waiting on this device to be sent.
    public let postQueue: PostQueue

    /// - Parameters:
    ///   - cacheURL: the SQLite file keeping what the app has seen and the writes not yet sent,
    ///     so screens show at once and work offline, across launches (nil: memory only). Posts
    ///     with photos made offline wait beside it, in the folder `<name>-post-queue` (without
    ///     one, in a temporary folder of this process).
    ///   - clock: milliseconds since the epoch (when a post was queued).
    public init(
        url: URL, bucket: String = "hearth.appspot.com", cacheURL: URL? = nil,
        clock: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    ) {
        self.url = url
        auth = Auth(url: url)
        database = Database(url: url, auth: auth, cacheURL: cacheURL)
        storage = Storage(url: url, bucket: bucket, auth: auth)
        (lateRefusals, lateRefusalSink) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(10))
        let queueFolder = cacheURL.map {
            $0.deletingLastPathComponent().appendingPathComponent("\($0.deletingPathExtension().lastPathComponent)-post-queue", isDirectory: true)
        } ?? FileManager.default.temporaryDirectory.appendingPathComponent("hearth-post-queue-\(UUID().uuidString)", isDirectory: true)
        postQueue = PostQueue(folder: queueFolder, database: database, storage: storage, auth: auth, refusals: lateRefusalSink, clock: clock)
    }

    /// Waits for the server's answer to `write` while connected (a refusal throws). Offline,
    /// or once the connection goes while it waits, returns: the write is shown and queued, and
    /// a later refusal goes to ``lateRefusals``.
    func settle(_ write: DatabaseWrite) async throws {
        let sink = lateRefusalSink
        guard database.isConnected else {
            Task {
                do { try await write.acknowledged() } catch { sink.yield(SocialError.words(for: error)) }
            }
            return
        }
        let statuses = database.observeSyncStatus()
        var watcher: Task<Void, Never>?
        defer { watcher?.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let first = FirstOutcome(continuation)
            Task {
                do {
                    try await write.acknowledged()
                    first.settle(.success(()))
                } catch {
                    if !first.settle(.failure(error)) { sink.yield(SocialError.words(for: error)) }
                }
            }
            watcher = Task {
                for await status in statuses where !status.isConnected {
                    first.settle(.success(()))
                    return
                }
            }
        }
    }

    /// The signed-in user's uid.
    var uid: String? { auth.currentUser?.uid }

    /// The signed-in user as an author: their token's name, or "Anonymous" (the name rules accept).
    var author: Author? { auth.currentUser.map(Author.init(user:)) }

    func requireUser() throws -> User {
        guard let user = auth.currentUser else { throw SocialError.notSignedIn }
        return user
    }
}

/// What went wrong, in words for the person using the app.
public enum SocialError: Error, Equatable, Sendable, CustomStringConvertible {
    case notSignedIn
    case invalid(String)
    case denied(String)
    case failed(String)

    public var description: String {
        switch self {
        case .notSignedIn: "Sign in first."
        case .invalid(let text), .denied(let text), .failed(let text): text
        }
    }

    /// Whether the server said no (rules, a size, a bad request), rather than not answering.
    static func isRefusal(_ error: any Error) -> Bool {
        if error is SocialError { return true }
        guard let error = error as? HearthClientError else { return false }
        return [.permissionDenied, .badRequest, .notFound].contains(error.kind)
    }

    /// The words for an error from the client or the server.
    public static func words(for error: any Error) -> String {
        if let social = error as? SocialError { return social.description }
        guard let client = error as? HearthClientError else { return "Something went wrong: \(error)" }
        switch client.message {
        case "EMAIL_EXISTS": return "That email address already has an account."
        case "INVALID_LOGIN_CREDENTIALS", "INVALID_PASSWORD", "EMAIL_NOT_FOUND": return "Wrong email address or password."
        case "INVALID_EMAIL", "MISSING_EMAIL": return "That is not an email address."
        case "MISSING_PASSWORD": return "Enter a password."
        case "TOO_MANY_ATTEMPTS_TRY_LATER": return "Too many attempts. Try again later."
        case "USER_DISABLED": return "This account has been disabled."
        case "CREDENTIAL_TOO_OLD_LOGIN_AGAIN": return "For your safety, sign in again first."
        default: break
        }
        if client.message.hasPrefix("WEAK_PASSWORD") { return "The password must be at least 6 characters." }
        switch client.kind {
        case .permissionDenied: return "You are not allowed to do that."
        case .notFound: return "It is not there any more."
        case .notSignedIn: return "Your session has ended. Sign in again."
        case .transactionConflict: return "Too many people at once. Try again."
        case .badRequest: return client.message.contains("exceeds") ? "That is too large." : "That was refused: \(client.message)"
        case .unexpectedResponse: return "The server could not be reached or answered strangely."
        case .offline: return "You are offline, and this is not saved on this device yet."
        }
    }
}
