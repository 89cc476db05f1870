import Crypto
import Foundation
import HearthCore
import JWTKit

/// Talks to identity providers for sign-in: OpenID Connect (discovery, the authorization
/// code exchange with PKCE, ID tokens checked against the provider's published keys, issuer,
/// audience, expiry and nonce) and GitHub's OAuth 2.0 (code exchange, then its user API).
///
/// Discovery documents and key sets are cached for an hour; an ID token signed with a key
/// not in the cached set fetches the set again once (providers rotate keys).
public actor IdentityProviderClient {
    private let http: any HTTPFetching
    private let clock: @Sendable () -> Int64
    private var discoveries: [String: (document: Discovery, fetched: Int64)] = [:]
    private var keySets: [String: (keys: JWTKeyCollection, fetched: Int64)] = [:]
    private static let cacheMilliseconds: Int64 = 3_600_000

    /// The endpoints an OpenID provider publishes.
    struct Discovery: Sendable {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String
        var userinfoEndpoint: String?
    }

    /// - Parameter clock: milliseconds since the epoch.
    public init(http: any HTTPFetching, clock: @escaping @Sendable () -> Int64) {
        self.http = http
        self.clock = clock
    }

    // MARK: - Starting a sign-in

    /// The provider page that asks the user to sign in and comes back to `redirectURI` with a
    /// code and `state`.
    public func authorizationURL(
        _ config: ProviderConfig, redirectURI: String, state: String, nonce: String, codeVerifier: String,
        scopes: [String], customParameters: [(String, String)]
    ) async throws(AuthError) -> String {
        let endpoint: String
        var scope = scopes
        if let github = GitHubEndpoints(config) {
            endpoint = github.authorize
            if scope.isEmpty { scope = ["read:user", "user:email"] }
        } else {
            endpoint = try await discovery(for: config).authorizationEndpoint
            if !scope.contains("openid") { scope.insert("openid", at: 0) }
            for wanted in ["email", "profile"] where !scope.contains(wanted) { scope.append(wanted) }
        }
        guard var components = URLComponents(string: endpoint) else { throw Self.idpError("the provider's authorization endpoint is not a URL") }
        var items = components.queryItems ?? []
        // The provider's own parameters first; those sign-in depends on cannot be replaced.
        let reserved: Set<String> = ["response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"]
        for (name, value) in customParameters where !reserved.contains(name) { items.append(URLQueryItem(name: name, value: value)) }
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: config.clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI),
            URLQueryItem(name: "scope", value: scope.joined(separator: " ")),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "code_challenge", value: Self.codeChallenge(codeVerifier)),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if GitHubEndpoints(config) == nil { items.append(URLQueryItem(name: "nonce", value: nonce)) }
        components.queryItems = items
        // `+` in a query means a space to many servers: write it encoded.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.string else { throw Self.idpError("cannot build the authorization URL") }
        return url
    }

    // MARK: - Finishing it

    /// Exchanges the authorization code (with the PKCE verifier) and returns who signed in.
    /// For OpenID providers the ID token is checked, its nonce included.
    public func exchange(
        _ config: ProviderConfig, code: String, redirectURI: String, codeVerifier: String, nonce: String
    ) async throws(AuthError) -> FederatedProfile {
        let tokenEndpoint: String
        let github = GitHubEndpoints(config)
        if let github {
            tokenEndpoint = github.token
        } else {
            tokenEndpoint = try await discovery(for: config).tokenEndpoint
        }
        let form = Self.formEncoded([
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("client_id", config.clientID ?? ""), ("client_secret", config.clientSecret ?? ""), ("code_verifier", codeVerifier),
        ])
        let answer = try await json(OutboundRequest(
            method: "POST", url: tokenEndpoint,
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")], body: Data(form.utf8)),
            what: "the token endpoint")
        if case .string(let error) = answer.child(ChildKey("error")) {
            let detail = Self.string(answer, "error_description").map { "\(error): \($0)" } ?? error
            throw Self.idpError("the provider refused the code (\(detail))")
        }
        let accessToken = Self.string(answer, "access_token")
        if let github {
            guard let accessToken else { throw Self.idpError("the provider gave no access token") }
            return try await gitHubProfile(config, github: github, accessToken: accessToken)
        }
        guard let idToken = Self.string(answer, "id_token") else { throw Self.idpError("the provider gave no ID token") }
        var profile = try await verifiedIDToken(config, idToken: idToken, nonce: .exact(nonce))
        profile.accessToken = accessToken
        return profile
    }

    /// How an ID token's nonce is checked.
    public enum NonceCheck: Sendable {
        /// A token an app got itself: the app sends the raw nonce, the token holds its SHA-256
        /// in hex (required when the token has a nonce), as Firebase checks it.
        case raw(String?)
        /// A token from a sign-in Hearth started: it must hold exactly the nonce Hearth sent.
        case exact(String)
    }

    /// Checks an ID token: signature, issuer, audience, expiry, and the nonce.
    public func verifiedIDToken(_ config: ProviderConfig, idToken: String, nonce: NonceCheck) async throws(AuthError) -> FederatedProfile {
        let document = try await discovery(for: config)
        let claims: ExternalIDTokenClaims
        do {
            claims = try await keys(for: document, refresh: false).verify(idToken, as: ExternalIDTokenClaims.self)
        } catch {
            // A key the cached set lacks: the provider may have rotated its keys.
            do {
                claims = try await keys(for: document, refresh: true).verify(idToken, as: ExternalIDTokenClaims.self)
            } catch let error as AuthError {
                throw error
            } catch {
                throw Self.idpError("the ID token's signature does not check out")
            }
        }
        let now = Double(clock()) / 1000
        // Google's tokens may name their issuer without the scheme, as Google documents.
        guard claims.iss == document.issuer || (config.id == "google.com" && claims.iss == "accounts.google.com") else {
            throw Self.idpError("the ID token comes from another issuer")
        }
        guard let client = config.clientID, claims.aud.value.contains(client) else { throw Self.idpError("the ID token is for another client") }
        guard let expires = claims.exp, expires > now - 60 else { throw Self.idpError("the ID token has expired") }
        if let issued = claims.iat, issued > now + 300 { throw Self.idpError("the ID token is issued in the future") }
        switch nonce {
        case .raw(let raw):
            // As Firebase: the app keeps the raw nonce and gave the provider its SHA-256 (hex).
            if let expected = claims.nonce {
                guard let raw else { throw AuthError("MISSING_OR_INVALID_NONCE", detail: "Nonce is missing in the request.") }
                let hashed = Data(SHA256.hash(data: Data(raw.utf8))).map { String(format: "%02x", $0) }.joined()
                guard IdentityProviderClient.constantTimeEqual(hashed, expected) else {
                    throw AuthError("MISSING_OR_INVALID_NONCE", detail: "the nonce does not match the ID token's")
                }
            }
        case .exact(let sent):
            // A sign-in Hearth started itself: the nonce it sent must come back as it was.
            guard let returned = claims.nonce, IdentityProviderClient.constantTimeEqual(returned, sent) else {
                throw AuthError("MISSING_OR_INVALID_NONCE", detail: "the ID token's nonce does not match this sign-in")
            }
        }
        guard let subject = claims.sub, !subject.isEmpty, subject.utf8.count <= 255 else { throw Self.idpError("the ID token names no subject") }
        let raw = TokenIssuer.payload(of: idToken) ?? .null
        return FederatedProfile(
            providerID: config.id, rawID: subject, email: claims.email?.lowercased(), emailVerified: claims.emailVerified ?? false,
            displayName: claims.name, photoURL: claims.picture, rawUserInfo: raw, idToken: idToken)
    }

    // MARK: - GitHub

    /// Who a GitHub access token an app holds belongs to. The token must have been issued to
    /// this server's OAuth app (GitHub's "check a token" API): a token another app or person
    /// holds for the same user signs nobody in.
    public func gitHubProfile(_ config: ProviderConfig, accessToken: String) async throws(AuthError) -> FederatedProfile {
        guard let github = GitHubEndpoints(config), let client = config.clientID, let secret = config.clientSecret else {
            throw AuthError("INVALID_CREDENTIAL_OR_PROVIDER_ID")
        }
        let credentials = Data("\(client):\(secret)".utf8).base64EncodedString()
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let path = client.addingPercentEncoding(withAllowedCharacters: allowed) ?? client
        let body = JSONWriter.bytes(.object([(ChildKey("access_token"), .string(accessToken))]))
        let check = try await fetch(OutboundRequest(
            method: "POST", url: "\(github.api)/applications/\(path)/token",
            headers: [
                ("Authorization", "Basic \(credentials)"), ("Accept", "application/vnd.github+json"),
                ("Content-Type", "application/json"), ("User-Agent", "Hearth"),
            ],
            body: Data(body)), what: "GitHub's token check")
        guard check.status == 200 else { throw Self.idpError("the access token was not issued to this app") }
        return try await gitHubProfile(config, github: github, accessToken: accessToken)
    }

    private func gitHubProfile(_ config: ProviderConfig, github: GitHubEndpoints, accessToken: String) async throws(AuthError) -> FederatedProfile {
        let headers = [("Authorization", "Bearer \(accessToken)"), ("Accept", "application/vnd.github+json"), ("User-Agent", "Hearth")]
        let user = try await json(OutboundRequest(url: github.user, headers: headers), what: "GitHub's user API")
        guard let id = user.child(ChildKey("id")).integerValue.map({ String($0) }) ?? Self.string(user, "id") else {
            throw Self.idpError("GitHub gave no user ID")
        }
        // The address GitHub has verified and marked primary; the public one is not vouched for.
        var email: String?
        var verified = false
        if let emails = try? await json(OutboundRequest(url: github.emails, headers: headers), what: "GitHub's email API").children {
            for entry in emails.map(\.value) {
                guard case .bool(true) = entry.child(ChildKey("primary")), let address = Self.string(entry, "email") else { continue }
                email = address.lowercased()
                if case .bool(true) = entry.child(ChildKey("verified")) { verified = true }
            }
        }
        if email == nil { email = Self.string(user, "email")?.lowercased() }
        return FederatedProfile(
            providerID: config.id, rawID: id, email: email, emailVerified: verified,
            displayName: Self.string(user, "name") ?? Self.string(user, "login"), photoURL: Self.string(user, "avatar_url"),
            rawUserInfo: user, accessToken: accessToken)
    }

    // MARK: - Discovery and keys

    private func discovery(for config: ProviderConfig) async throws(AuthError) -> Discovery {
        guard let issuer = config.issuer else { throw AuthError("INVALID_CONFIG", detail: "the provider has no issuer") }
        if let cached = discoveries[issuer], clock() - cached.fetched < Self.cacheMilliseconds { return cached.document }
        let base = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        let document = try await json(OutboundRequest(url: base + "/.well-known/openid-configuration"), what: "the provider's discovery document")
        guard let published = Self.string(document, "issuer"), let authorization = Self.string(document, "authorization_endpoint"),
            let token = Self.string(document, "token_endpoint"), let jwks = Self.string(document, "jwks_uri")
        else { throw Self.idpError("the provider's discovery document lacks its endpoints") }
        // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
        guard published == issuer || published == base else { throw Self.idpError("the provider's discovery document names another issuer") }
        let found = Discovery(
            issuer: published, authorizationEndpoint: authorization, tokenEndpoint: token, jwksURI: jwks,
            userinfoEndpoint: Self.string(document, "userinfo_endpoint"))
        discoveries[issuer] = (found, clock())
        return found
    }

    private func keys(for document: Discovery, refresh: Bool) async throws(AuthError) -> JWTKeyCollection {
        if let cached = keySets[document.jwksURI] {
            let age = clock() - cached.fetched
            // A token the keys do not verify fetches them again at most once a minute, so
            // made-up tokens cannot drive requests to the provider.
            if age < (refresh ? 60_000 : Self.cacheMilliseconds) { return cached.keys }
        }
        let response = try await fetch(OutboundRequest(url: document.jwksURI, headers: [("Accept", "application/json")]), what: "the provider's keys")
        let collection = JWTKeyCollection()
        do {
            _ = try await collection.add(jwksJSON: String(decoding: response.body, as: UTF8.self))
        } catch {
            throw Self.idpError("the provider's key set cannot be read")
        }
        keySets[document.jwksURI] = (collection, clock())
        return collection
    }

    // MARK: - HTTP

    private func fetch(_ request: OutboundRequest, what: String) async throws(AuthError) -> OutboundResponse {
        let response: OutboundResponse
        do {
            response = try await http.fetch(request)
        } catch {
            throw Self.idpError("\(what) cannot be reached")
        }
        guard response.body.count <= 1 << 20 else { throw Self.idpError("\(what) answered too much") }
        return response
    }

    private func json(_ request: OutboundRequest, what: String) async throws(AuthError) -> Node {
        let response = try await fetch(request, what: what)
        guard let node = try? JSONParser.parseDocument(Array(response.body)) else {
            throw Self.idpError("\(what) answered \(response.status) with something that is not JSON")
        }
        // Token endpoints answer errors with a JSON body: the caller reads `error`.
        guard (200..<300).contains(response.status) || node.child(ChildKey("error")) != .null else {
            throw Self.idpError("\(what) answered \(response.status)")
        }
        return node
    }

    // MARK: - Helpers

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        SymmetricKey(data: Data(SHA256.hash(data: Data(a.utf8)))) == SymmetricKey(data: Data(SHA256.hash(data: Data(b.utf8))))
    }

    static func idpError(_ detail: String) -> AuthError { AuthError("INVALID_IDP_RESPONSE", detail: detail) }

    static func string(_ node: Node, _ key: String) -> String? {
        if case .string(let text) = node.child(ChildKey(key)) { return text }
        return nil
    }

    /// RFC 7636's S256 challenge of a verifier.
    public static func codeChallenge(_ verifier: String) -> String {
        TokenIssuer.base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    static func formEncoded(_ pairs: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return pairs.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")"
        }.joined(separator: "&")
    }
}

/// GitHub's endpoints: github.com's, or a GitHub Enterprise Server's when the provider's
/// configuration has `githubURL` (a Hearth setting; its API is at `<githubURL>/api/v3`).
struct GitHubEndpoints {
    var authorize: String
    var token: String
    /// The REST API's root.
    var api: String
    var user: String
    var emails: String

    init?(_ config: ProviderConfig) {
        guard config.id == "github.com" else { return nil }
        if case .string(let base) = config.resource.child(ChildKey("githubURL")) {
            let web = base.hasSuffix("/") ? String(base.dropLast()) : base
            authorize = web + "/login/oauth/authorize"
            token = web + "/login/oauth/access_token"
            api = web + "/api/v3"
            user = api + "/user"
            emails = api + "/user/emails"
        } else {
            authorize = "https://github.com/login/oauth/authorize"
            token = "https://github.com/login/oauth/access_token"
            api = "https://api.github.com"
            user = api + "/user"
            emails = api + "/user/emails"
        }
    }
}

/// The claims of a provider's ID token that sign-in reads.
struct ExternalIDTokenClaims: JWTPayload {
    var iss: String?
    var sub: String?
    var aud: AudienceClaim
    var exp: Double?
    var iat: Double?
    var nonce: String?
    var email: String?
    var emailVerified: Bool?
    var name: String?
    var picture: String?

    enum CodingKeys: String, CodingKey {
        case iss, sub, aud, exp, iat, nonce, email, name, picture
        case emailVerified = "email_verified"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decodeIfPresent(String.self, forKey: .iss)
        sub = try container.decodeIfPresent(String.self, forKey: .sub)
        aud = try container.decode(AudienceClaim.self, forKey: .aud)
        exp = try container.decodeIfPresent(Double.self, forKey: .exp)
        iat = try container.decodeIfPresent(Double.self, forKey: .iat)
        nonce = try container.decodeIfPresent(String.self, forKey: .nonce)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        picture = try container.decodeIfPresent(String.self, forKey: .picture)
        // Some providers (Apple among them) send "true" as a string.
        if let flag = try? container.decodeIfPresent(Bool.self, forKey: .emailVerified) {
            emailVerified = flag
        } else {
            emailVerified = (try? container.decodeIfPresent(String.self, forKey: .emailVerified)) == "true"
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(iss, forKey: .iss)
        try container.encodeIfPresent(sub, forKey: .sub)
        try container.encode(aud, forKey: .aud)
        try container.encodeIfPresent(exp, forKey: .exp)
        try container.encodeIfPresent(iat, forKey: .iat)
        try container.encodeIfPresent(nonce, forKey: .nonce)
        try container.encodeIfPresent(email, forKey: .email)
        try container.encodeIfPresent(emailVerified, forKey: .emailVerified)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(picture, forKey: .picture)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
