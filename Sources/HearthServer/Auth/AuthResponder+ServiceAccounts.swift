import HearthAuth
import HearthCore
import Hummingbird

/// The OAuth 2.0 token endpoint service accounts trade signed assertions at (the JWT-bearer
/// grant, RFC 7523), as Google's `https://oauth2.googleapis.com/token`. Its answers and
/// refusals are RFC 6749's (`{"access_token", "expires_in", "token_type"}`;
/// `{"error", "error_description"}` with 400), not Identity Toolkit's, so it writes them itself.
extension AuthResponder {
    /// Hearth's own path (what `hearth admin service-account create` writes as `token_uri`),
    /// and Google's, for a client that reaches Hearth under Google's host names.
    static let tokenEndpoints: Set<String> = ["/oauth2/token", "/oauth2.googleapis.com/token"]
    static let jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    struct AccessTokenAnswer: Encodable {
        var accessToken: String
        var expiresIn: Int64
        var tokenType = "Bearer"

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case expiresIn = "expires_in"
            case tokenType = "token_type"
        }
    }

    struct RefusalAnswer: Encodable {
        var error: String
        var errorDescription: String

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
        }
    }

    func token(_ request: Request) async -> Response {
        do throws(OAuthError) {
            let fields: RequestFields
            do {
                fields = try await body(of: request, allowForm: true)
            } catch {
                throw OAuthError("invalid_request", "The request body must be a form (application/x-www-form-urlencoded).")
            }
            guard let grant = fields.string("grant_type") else { throw OAuthError("invalid_request", "Missing required parameter: grant_type") }
            guard grant == Self.jwtBearerGrant else {
                throw OAuthError("unsupported_grant_type", "Invalid grant_type: \(grant.prefix(100))")
            }
            let (token, lifetime) = try await serviceAccounts.exchange(assertion: fields.string("assertion"))
            return JSONResponse.encoding(AccessTokenAnswer(accessToken: token, expiresIn: lifetime), headers: [.cacheControl: "no-store"])
        } catch {
            let status: HTTPResponse.Status = error.error == "server_error" ? .internalServerError : .badRequest
            return JSONResponse.encoding(
                RefusalAnswer(error: error.error, errorDescription: error.description), status: status,
                headers: [.cacheControl: "no-store"])
        }
    }
}
