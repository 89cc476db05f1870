import HearthCore
import HearthFiles
import Hummingbird
import Logging

/// Cloud Storage's error format, which Firebase's Storage clients read:
/// `{"error": {"code": 403, "message": "Permission denied. No READ permission."}}`.
///
/// A ``HearthFiles/FilesError`` is answered with its kind's status. A credential that could not
/// be verified (the shared ``HearthEngine/RequestAuth`` throws ``HearthCore/HearthError``) is
/// 401; Hummingbird's own errors keep their status (an unknown path is logged at debug level); anything else is logged and answered 500.
struct StorageErrors: APIErrorFormat {
    func response(for error: any Error, to request: Request, context: HearthRequestContext) -> Response {
        if let range = error as? ObjectDownload.UnsatisfiableRange {
            return Self.response(for: FilesError(.rangeNotSatisfiable, "Requested range not satisfiable."), headers: range.headers)
        }
        if let error = error as? any HTTPResponseError, error.status == .notFound {
            context.logger.unknownAPIPath(request)
        }
        return Self.response(for: filesError(error, context: context))
    }

    func filesError(_ error: any Error, context: HearthRequestContext) -> FilesError {
        switch error {
        case let error as FilesError:
            return error
        case let error as HearthError where error.code == .permissionDenied:
            return FilesError(.unauthenticated, error.message)
        case let error as HearthError where error.code == .unavailable:
            return FilesError(.unavailable, error.message)
        case let error as HearthError where error.code.httpStatus == .badRequest:
            return FilesError(.invalid, error.message)
        case let error as any HTTPResponseError where error.status == .notFound:
            return .notFound
        case let error as any HTTPResponseError where error.status == .methodNotAllowed:
            return FilesError(.methodNotAllowed, "Method not allowed.")
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return FilesError(.tooLarge, "The request body is too large.")
        default:
            context.logger.requestFailed("file request failed", error: error)
            return FilesError(.internalError, "Internal error.")
        }
    }

    static func response(for error: FilesError, headers: HTTPFields = [:]) -> Response {
        let status = error.kind.httpStatus
        let body = StorageErrorBody(error: .init(code: Int(status.code), message: error.message))
        return JSONResponse.encoding(body, status: status, headers: headers, contentType: FilesResponder.contentType, pretty: true)
    }
}

/// The body of a Cloud Storage error.
struct StorageErrorBody: Encodable {
    struct Detail: Encodable {
        var code: Int
        var message: String
    }

    var error: Detail
}

extension FilesError.Kind {
    /// The status Cloud Storage's JSON API answers this kind of refusal with.
    var httpStatus: HTTPResponse.Status {
        switch self {
        case .invalid: .badRequest
        case .unauthenticated: .unauthorized
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict: .conflict
        case .tooLarge: .contentTooLarge
        case .rangeNotSatisfiable: .rangeNotSatisfiable
        case .preconditionFailed: .preconditionFailed
        case .tooMany: .tooManyRequests
        case .unavailable: .serviceUnavailable
        case .internalError: .internalServerError
        }
    }
}
