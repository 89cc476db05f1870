import Synchronization

/// What the social app's server-side functions work with, handed over once the server has
/// built it: the functions are made (and given to the databases' event recorder) before the
/// server's file store exists, so they hold this box and fail (to be retried) until then.
///
/// Threading: ``connect(_:)`` and ``parts()`` may be called from any task; the lock is held only
/// to copy the parts.
public final class SocialBackend: Sendable {
    /// The server's parts the functions use.
    public struct Parts: Sendable {
        public var data: any SocialData
        public var files: any SocialFiles
        /// Nil where accounts cannot be changed (suspensions and admin claims are then skipped).
        public var accounts: (any SocialAccounts)?

        public init(data: any SocialData, files: any SocialFiles, accounts: (any SocialAccounts)?) {
            self.data = data
            self.files = files
            self.accounts = accounts
        }
    }

    /// The functions ran before the server handed over its parts (their events are retried).
    public struct NotReady: Error, CustomStringConvertible {
        public var description: String { "the social app's server side is still starting" }
    }

    private let connected = Mutex<Parts?>(nil)

    public init() {}

    /// Hands over the server's parts (a later call replaces them).
    public func connect(_ parts: Parts) {
        connected.withLock { $0 = parts }
    }

    /// The parts handed over.
    /// - Throws: ``NotReady`` before ``connect(_:)``.
    public func parts() throws -> Parts {
        guard let parts = connected.withLock({ $0 }) else { throw NotReady() }
        return parts
    }
}
