import HearthCore
import HearthFiles
import Hummingbird
import Logging

/// The error format of Cloud Storage's JSON API (``CloudStorageResponder``), which
/// google-cloud-storage reads into its exceptions:
/// `{"error": {"code": 404, "message": "No such object: b/o", "errors": [{"message": "No such
/// object: b/o", "domain": "global", "reason": "notFound"}]}}`.
///
/// ``HearthFiles/FilesError`` gets its kind's status (as for Firebase Storage's API) and
/// Google's reason for it; a credential that could not be verified is 401 `authError`; a range
/// outside the object 416 with `Content-Range`; anything else is logged and answered 500.
struct CloudStorageErrors: APIErrorFormat {
    /// A request without a credential, outside emulator mode.
    static let loginRequired = Refusal(
        status: .unauthorized, reason: "required",
        message: "Anonymous caller does not have storage access: this API takes an admin credential.")
    /// A credential that is not an admin's (an ID token is not one, as in Google's API).
    static let invalidCredentials = Refusal(status: .unauthorized, reason: "authError", message: "Invalid Credentials")

    /// A refusal with Google's reason spelled out.
    struct Refusal: Error {
        let status: HTTPResponse.Status
        let reason: String
        let message: String
    }

    func response(for error: any Error, to request: Request, context: HearthRequestContext) -> Response {
        switch error {
        case let refusal as Refusal:
            return Self.response(refusal)
        case let range as ObjectDownload.UnsatisfiableRange:
            return Self.response(
                Refusal(status: .rangeNotSatisfiable, reason: "requestedRangeNotSatisfiable", message: "The requested range cannot be satisfied."),
                headers: range.headers)
        case let error as HearthError where error.code == .permissionDenied:
            return Self.response(Self.invalidCredentials)
        default:
            // The same reading of the errors as Firebase Storage's API (HearthError, Hummingbird's own).
            let files = StorageErrors().filesError(error, context: context)
            return Self.response(Refusal(status: files.kind.httpStatus, reason: files.kind.googleReason, message: files.message))
        }
    }

    static func response(_ refusal: Refusal, headers: HTTPFields = [:]) -> Response {
        let detail = ErrorBody.Detail(
            code: Int(refusal.status.code), message: refusal.message,
            errors: [.init(message: refusal.message, domain: "global", reason: refusal.reason)])
        return JSONResponse.encoding(
            ErrorBody(error: detail), status: refusal.status, headers: headers, contentType: FilesResponder.contentType, pretty: true)
    }

    /// The body of a JSON API error.
    struct ErrorBody: Encodable {
        struct Detail: Encodable {
            struct Item: Encodable {
                var message: String
                var domain: String
                var reason: String
            }

            var code: Int
            var message: String
            var errors: [Item]
        }

        var error: Detail
    }
}

extension FilesError.Kind {
    /// The `reason` Cloud Storage's JSON API gives this kind of refusal.
    var googleReason: String {
        switch self {
        case .invalid: "invalid"
        case .unauthenticated: "required"
        case .forbidden: "forbidden"
        case .notFound: "notFound"
        case .methodNotAllowed: "methodNotAllowed"
        case .conflict: "conflict"
        case .tooLarge: "uploadTooLarge"
        case .rangeNotSatisfiable: "requestedRangeNotSatisfiable"
        case .preconditionFailed: "conditionNotMet"
        case .tooMany: "rateLimitExceeded"
        case .unavailable: "backendError"
        case .internalError: "backendError"
        }
    }
}
