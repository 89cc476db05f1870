import HearthCore
import HearthProtocol

extension RealtimeStatus {
    /// The status and message for an error thrown by ``DatabaseOperations``: the one path from
    /// an operation's error to the realtime protocol, as ``HearthError/response()`` is REST's.
    init(_ error: any Error) {
        switch error {
        case is DatabaseOperations.ConditionFailed:
            self.init(status: Self.dataStale, message: "Transaction hash does not match")
        case let error as HearthError:
            self.init(error)
        case let error as RealtimeProtocolError:
            if case .invalidData(let cause) = error { self.init(cause) } else { self.init(status: Self.failed, message: error.description) }
        default:
            self.init(status: Self.failed, message: "Internal server error.")
        }
    }

    private init(_ error: HearthError) {
        switch error.code {
        case .permissionDenied:
            // Expired and unreadable credentials have statuses of their own.
            if error == RequestAuth.expired {
                self.init(status: Self.expiredToken, message: error.message)
            } else if error == RequestAuth.unparseable || RequestAuth.isRefused(error) {
                self.init(status: Self.invalidToken, message: error.message)
            } else {
                self.init(status: Self.permissionDenied, message: error.message)
            }
        case .writeTooBig: self.init(status: Self.writeTooBig, message: error.message)
        case .unavailable: self.init(status: Self.unavailable, message: error.message)
        case .preconditionFailed: self.init(status: Self.dataStale, message: error.message)
        default: self.init(status: Self.failed, message: error.message)
        }
    }
}
