import HearthAuth
import HearthEngine
import Hummingbird

/// Who may use Cloud Storage's JSON API: admins only, as in Google, where it takes a service
/// account's credentials and no Firebase ID token, and storage rules do not apply. Every
/// request is judged here first, before its route or object is looked at, so a stranger learns
/// nothing of what exists.
///
/// The credential is read as everywhere else (``HearthEngine/RequestAuth``): without one, 401
/// `required`; with one that is not an admin's (a wrong token, an ID token), 401 `authError`.
///
/// In emulator mode every request is an admin's, as in Firebase's storage emulator, whose Cloud
/// Storage endpoints never read the credential: google-cloud-storage with
/// `STORAGE_EMULATOR_HOST` sends none, or whatever Application Default Credentials it found
/// (a Google access token Hearth cannot verify). Emulator mode gives anyone `Bearer owner`
/// anyway.
struct CloudStorageAccess: RouterMiddleware {
    typealias Context = HearthRequestContext

    let admin: AdminCredential
    let issuer: TokenIssuer
    let emulator: Bool
    let clock: @Sendable () -> Int64

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if emulator { return try await next(request, context) }
        let parameters = FilesResponder.parameters(of: request)
        guard AdminCredential.presented(by: request, parameters: parameters) != nil else { throw CloudStorageErrors.loginRequired }
        guard case .admin = try await RequestAuth.resolve(request, parameters: parameters, admin: admin, issuer: issuer, gate: nil, now: clock()) else {
            throw CloudStorageErrors.invalidCredentials
        }
        return try await next(request, context)
    }
}
