import HearthCore
import HearthEngine
import Hummingbird

extension HearthError.Code {
    /// The HTTP status Firebase answers with for this kind of failure.
    var httpStatus: HTTPResponse.Status {
        switch self {
        case .invalidData, .invalidPath, .writeTooBig, .invalidQuery, .indexNotDefined: return .badRequest
        case .permissionDenied: return .unauthorized
        case .preconditionFailed: return .preconditionFailed
        case .notFound: return .notFound
        case .unavailable: return .serviceUnavailable
        default: return .internalServerError
        }
    }
}

extension HearthError {
    /// `{"error": "<message>"}` with the matching status, pretty-printed as Firebase does.
    func response() -> Response {
        let body = Node.object([(ChildKey("error"), .string(message))])
        var bytes = JSONWriter.bytes(body, format: .init(pretty: true))
        bytes.append(0x0A)
        return JSONResponse.make(status: code.httpStatus, bytes: bytes)
    }
}
