import HearthBackup
import HearthCore
import HearthEngine
import Hummingbird
import Logging

/// The Realtime Database's error format, `{"error": "<message>"}` (pretty-printed, as Firebase
/// writes it), for the REST API, the web app's pages and the server's admin endpoints.
///
/// - ``HearthCore/HearthError``: its message, with its code's status;
/// - a failed ETag condition: `412` with the current value and its ETag, as Firebase answers;
/// - a backup that cannot be read or restored: `422` with what is wrong with it (admins only
///   reach the endpoints that throw it);
/// - Hummingbird's own errors (an unknown route, a body over its limit): their status, with
///   the status's reason as the message;
/// - anything else: logged, and answered `500 Internal server error.`, never echoed.
struct RealtimeDatabaseErrors: APIErrorFormat {
    /// What the log calls a failure no type here knows.
    var failureMessage: Logger.Message = "request failed"

    func response(for error: any Error, to request: Request, context: HearthRequestContext) -> Response {
        switch error {
        case let error as HearthError:
            // A refusal by the rules, the commonest error, costs no more than an answer.
            return error == .permissionDeniedByRules ? DatabaseResponder.permissionDenied() : error.response()
        case let failed as DatabaseOperations.ConditionFailed:
            return ETagConditions.mismatch(current: failed.current)
        case let error as BackupError:
            return HearthError.response(status: .unprocessableContent, message: error.description)
        case let error as any HTTPResponseError:
            return HearthError.response(status: error.status, message: error.status.reasonPhrase + ".")
        default:
            context.logger.requestFailed(failureMessage, error: error)
            return HearthError(.internalError, "Internal server error.").response()
        }
    }
}
