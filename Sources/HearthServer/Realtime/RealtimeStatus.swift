import HearthCore

/// How a failure reads in a realtime response (`{"s": <status>, "d": <message>}`): the status
/// codes the SDKs know (reference §7.4), so they raise the error their apps expect
/// (`PERMISSION_DENIED: Permission denied`, a transaction retried on `datastale`, …). The one
/// path from an operation's error to the realtime protocol, as ``HearthError/response()`` is
/// REST's.
struct RealtimeStatus: Equatable, Sendable {
    var status: String
    var message: String

    static let ok = "ok"

    /// The status and message for an error thrown by ``DatabaseOperations``.
    init(_ error: any Error) {
        switch error {
        case is DatabaseOperations.ConditionFailed:
            self.init(status: "datastale", message: "Transaction hash does not match")
        case let error as HearthError:
            self.init(error)
        case let error as RealtimeProtocolError:
            if case .invalidData(let cause) = error { self.init(cause) } else { self.init(status: "failed", message: error.description) }
        default:
            self.init(status: "failed", message: "Internal server error.")
        }
    }

    private init(_ error: HearthError) {
        switch error.code {
        case .permissionDenied:
            // Expired and unreadable credentials have statuses of their own.
            if error == RequestAuth.expired {
                self.init(status: "expired_token", message: error.message)
            } else if error == RequestAuth.unparseable {
                self.init(status: "invalid_token", message: error.message)
            } else {
                self.init(status: "permission_denied", message: error.message)
            }
        case .writeTooBig: self.init(status: "write_too_big", message: error.message)
        case .unavailable: self.init(status: "unavailable", message: error.message)
        case .preconditionFailed: self.init(status: "datastale", message: error.message)
        default: self.init(status: "failed", message: error.message)
        }
    }

    init(status: String, message: String) {
        self.status = status
        self.message = message
    }
}
