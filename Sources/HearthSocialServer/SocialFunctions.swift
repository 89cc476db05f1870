import HearthFunctions
import Logging

/// The social app's own functions, run in the server's process by `hearth serve` with the demo
/// app: what FriendlyPix does on its server because a client must not be trusted with it.
public struct SocialFunctions: Sendable {
    let backend: SocialBackend
    let logger: Logger

    public init(backend: SocialBackend, logger: Logger) {
        self.backend = backend
        self.logger = logger
    }

    /// Every function, for ``HearthFunctions/FunctionsService``.
    public var definitions: [FunctionDefinition] {
        [deleteUserData]
    }

    /// When an account is deleted (by its owner, the console, the admin API or the CLI), all
    /// its data goes (``AccountCleanup``). A run cut short (a crash, the timeout) is delivered
    /// again and finishes what is left.
    var deleteUserData: FunctionDefinition {
        let (backend, logger) = (backend, logger)
        return FunctionDefinition.onAccount(
            .deleted, name: "deleteUserData",
            policy: DeliveryPolicy(maxAttempts: 20, minBackoff: .seconds(1), maxBackoff: .seconds(300), timeout: .seconds(600))
        ) { event in
            let parts = try backend.parts()
            let report = try await AccountCleanup(data: parts.data, files: parts.files).run(uid: event.uid)
            logger.info("removed a deleted account's data", metadata: [
                "uid": "\(event.uid)", "posts": "\(report.posts)", "likes": "\(report.likes)", "comments": "\(report.comments)",
                "conversations": "\(report.conversations)", "files": "\(report.files)", "paths": "\(report.paths)",
            ])
        }
    }
}
