import HearthAuth
import Hummingbird
import Logging

/// Identity Toolkit's error format, which Firebase's Auth clients parse:
/// `{"error": {"code": 400, "message": "EMAIL_EXISTS", "errors": [{"message", "domain", "reason"}]}}`.
///
/// An ``HearthAuth/AuthError`` is answered with its code's status; Hummingbird's own errors
/// (an unknown path, a method the path does not take, a body over its limit) as
/// `NOT_FOUND` (logged at debug level), `METHOD_NOT_ALLOWED` and `INVALID_ARGUMENT`; anything else is logged and
/// answered `INTERNAL_ERROR`, showing only the failure's type in the log (an account
/// request's failure could carry a password or token in its text).
struct IdentityToolkitErrors: APIErrorFormat {
    var failureMessage: Logger.Message = "account request failed"

    func response(for error: any Error, to request: Request, context: HearthRequestContext) -> Response {
        if let error = error as? any HTTPResponseError, error.status == .notFound {
            context.logger.unknownAPIPath(request)
        }
        return Self.response(for: authError(error, context: context))
    }

    /// The ``HearthAuth/AuthError`` that `error` is answered as.
    func authError(_ error: any Error, context: HearthRequestContext) -> AuthError {
        switch error {
        case let error as AuthError: return error
        case let error as any HTTPResponseError:
            switch error.status {
            case .notFound: return .notFound
            case .methodNotAllowed: return .methodNotAllowed
            case .contentTooLarge: return .invalidArgument("the request body is too large")
            default: break
            }
        default: break
        }
        context.logger.requestFailed(failureMessage, error: error, shownAs: "\(type(of: error))")
        return .internalError
    }

    static func response(for error: AuthError) -> Response {
        let body = IdentityToolkitErrorBody(error: .init(
            code: Int(error.httpStatus.code), message: error.message,
            errors: [.init(message: error.message, domain: "global", reason: "invalid")]))
        return JSONResponse.encoding(body, status: error.httpStatus)
    }
}

/// The body of an Identity Toolkit error.
struct IdentityToolkitErrorBody: Encodable {
    struct Detail: Encodable {
        var code: Int
        var message: String
        var errors: [Reason]
    }

    struct Reason: Encodable {
        var message: String
        var domain: String
        var reason: String
    }

    var error: Detail
}
