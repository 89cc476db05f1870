import Hummingbird
import Logging

extension Logger {
    /// Logs, at debug level, a request for a path that an API Hearth answers (Identity
    /// Toolkit, securetoken, Firebase Storage) does not have: the next endpoint a client
    /// needs and Hearth lacks then shows in the log. The path is cut at 256 characters.
    func unknownAPIPath(_ request: Request) {
        debug(
            "unknown Google API path",
            metadata: ["method": "\(request.method.rawValue)", "path": "\(request.uri.path.prefix(256))"])
    }
}
