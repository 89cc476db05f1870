import HearthAuth
import Hummingbird

extension AuthError {
    /// The HTTP status Identity Toolkit answers this code with: 400 for nearly every refusal,
    /// as Firebase does, and the few codes Google's front end answers otherwise.
    var httpStatus: HTTPResponse.Status {
        switch code {
        case "INSUFFICIENT_PERMISSION", "CROSS_ORIGIN_REQUEST": .forbidden
        case "NOT_FOUND", "CONFIGURATION_NOT_FOUND": .notFound
        case "METHOD_NOT_ALLOWED": .methodNotAllowed
        case "CONFIGURATION_EXISTS": .conflict
        case "EMAIL_NOT_CONFIGURED", "EMAIL_SEND_FAILED": .serviceUnavailable
        case "INTERNAL_ERROR": .internalServerError
        default: .badRequest
        }
    }

    static let notFound = AuthError("NOT_FOUND")
    static let methodNotAllowed = AuthError("METHOD_NOT_ALLOWED")
    static let internalError = AuthError("INTERNAL_ERROR")
}
