import HearthAuth
import HearthEngine
import Hummingbird

/// Who may use Cloud Storage's JSON API: admins only, as in Google, where it takes a service
/// account's credentials and no Firebase ID token, and storage rules do not apply. Every
/// request is judged here first, before its route or object is looked at, so a stranger learns
/// nothing of what exists.
///
/// The credential is read as everywhere else (``HearthEngine/RequestAuth``). In emulator mode a
/// request without one is an admin's, as Firebase's storage emulator takes google-cloud-storage's
/// anonymous requests; outside it that is 401 `required`. A credential that is not an admin's is
/// 401 `authError`.
struct CloudStorageAccess: RouterMiddleware {
    typealias Context = HearthRequestContext

    let admin: AdminCredential
    let issuer: TokenIssuer
    let emulator: Bool
    let clock: @Sendable () -> Int64

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let parameters = FilesResponder.parameters(of: request)
        guard AdminCredential.presented(by: request, parameters: parameters) != nil else {
            guard emulator else { throw CloudStorageErrors.loginRequired }
            return try await next(request, context)
        }
        guard case .admin = try await RequestAuth.resolve(request, parameters: parameters, admin: admin, issuer: issuer, now: clock()) else {
            throw CloudStorageErrors.invalidCredentials
        }
        return try await next(request, context)
    }
}
