import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

extension RequestAuth {
    /// Reads the request's credential (`Authorization: Bearer`, `access_token=` or `auth=`).
    ///
    /// Admin credentials are checked by `admin`; with `auth_variable_override` an admin is
    /// judged by the rules as the given `auth` (`null`: signed out). In emulator mode,
    /// Firebase's unsigned test tokens (JWTs with `"alg":"none"`, as the SDKs'
    /// `mockUserToken` makes) name a user. Otherwise the credential must be an ID token that
    /// `issuer` signed, of an account `gate` still lets use it.
    /// - Parameter now: the server time in milliseconds, to refuse expired tokens.
    static func resolve(
        _ request: Request,
        parameters: [String: String],
        admin: AdminCredential,
        issuer: TokenIssuer,
        gate: AccountGate?,
        now: Int64
    ) async throws(HearthError) -> RequestAuth {
        guard let presented = AdminCredential.presented(by: request, parameters: parameters) else { return .anonymous }
        let auth = try await resolve(credential: presented, admin: admin, issuer: issuer, gate: gate, now: now)
        RequestLog.current?.uid = auth.logName
        if case .admin = auth, let override = parameters["auth_variable_override"] {
            // RESTRequest has already refused an override that is not an object or null.
            return .rules(auth: (try? JSONParser.parse(Array(override.utf8)).node) ?? .null, expires: nil)
        }
        return auth
    }
}
