import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird
import Logging

/// Answers Firebase Auth's REST API, so Firebase clients and `firebase-admin` (with
/// `FIREBASE_AUTH_EMULATOR_HOST`) work against Hearth:
///
/// - users: `/identitytoolkit.googleapis.com/v1/accounts:signUp`, `:signInWithPassword`,
///   `:signInWithCustomToken`, `:lookup`, `:update`, `:delete`, and `:signOut` (Hearth's own:
///   with a `refreshToken`, that session ends; without, every session of the account),
///   and `/securetoken.googleapis.com/v1/token` to refresh an ID token;
/// - admins: `/identitytoolkit.googleapis.com/v1/projects/<project>/accounts` (create),
///   `accounts:lookup`, `accounts:batchGet`, `accounts:update`, `accounts:delete`,
///   `accounts:batchDelete`, and the emulator's `DELETE /emulator/v1/projects/<project>/accounts`;
/// - keys: the ID-token signing keys as a JWKS at `/.well-known/jwks.json`.
///
/// Errors have Firebase's shape: `{"error": {"code": 400, "message": "EMAIL_EXISTS", ...}}`.
/// Request bodies are never logged.
struct AuthResponder: Sendable {
    let service: AuthService
    let admin: AdminCredential
    /// Whose word is taken for the client's address (sign-in attempts are counted by it).
    let proxies: ProxyTrust
    let maxBodyBytes = 1 << 20

    static let identityToolkit = "/identitytoolkit.googleapis.com/v1/"
    static let identityToolkitV2 = "/identitytoolkit.googleapis.com/v2/"
    static let secureToken = "/securetoken.googleapis.com/v1/token"
    static let emulatorAccounts = "/emulator/v1/projects/"
    /// Hearth's own: the providers a sign-in page offers (`{"providers": [{providerId, displayName}]}`).
    static let providersPath = "/__/auth/providers"
    static let jwksPaths: Set<String> = [
        "/.well-known/jwks.json", "/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com",
    ]

    /// True for the paths this responder answers.
    static func handles(_ path: String) -> Bool {
        path.hasPrefix(identityToolkit) || path.hasPrefix(identityToolkitV2) || path == secureToken || path == providersPath || path.hasPrefix(emulatorAccounts) || jwksPaths.contains(path)
    }

    func respond(to request: Request, context: HearthRequestContext) async -> Response {
        do {
            return try await route(request, context: context)
        } catch let error as AuthError {
            return Self.errorResponse(error)
        } catch {
            context.logger.requestFailed("account request failed", error: error, shownAs: "\(type(of: error))")
            return Self.errorResponse(AuthError("INTERNAL_ERROR", status: 500))
        }
    }

    private func route(_ request: Request, context: HearthRequestContext) async throws -> Response {
        let path = request.uri.path
        if Self.jwksPaths.contains(path) {
            guard request.method == .get else { throw AuthError("METHOD_NOT_ALLOWED", status: 405) }
            return Self.json(try service.issuer.jwks())
        }
        if path == Self.providersPath {
            guard request.method == .get else { throw AuthError("METHOD_NOT_ALLOWED", status: 405) }
            let providers = try await service.signInProviders()
            if providers.isEmpty { return JSONResponse.make(status: .ok, bytes: Array(#"{"providers":[]}"#.utf8)) }
            return Self.json(.object([(ChildKey("providers"), Self.list(providers.map { config in
                .object([
                    (ChildKey("providerId"), .string(config.id)),
                    (ChildKey("displayName"), .string(config.displayName ?? Self.providerName(config.id))),
                ])
            }))]))
        }
        if path == Self.secureToken {
            guard request.method == .post else { throw AuthError("METHOD_NOT_ALLOWED", status: 405) }
            return try await refresh(try await body(of: request, allowForm: true))
        }
        if path.hasPrefix(Self.emulatorAccounts) {
            guard service.policy.emulator else { throw AuthError("NOT_FOUND", status: 404) }
            return try await emulatorEndpoint(path, request: request)
        }
        if path.hasPrefix(Self.identityToolkitV2) {
            try requireAdmin(request)
            return try await providerConfigEndpoint(String(path.dropFirst(Self.identityToolkitV2.count)), request: request)
        }
        let endpoint = String(path.dropFirst(Self.identityToolkit.count))
        // Admin endpoints name the project: projects/<project>/accounts…, projects/<project>:createSessionCookie
        if endpoint.hasPrefix("projects/") {
            try requireAdmin(request)
            let parts = endpoint.split(separator: "/", maxSplits: 2)
            if parts.count == 2, parts[1].hasSuffix(":createSessionCookie") {
                guard request.method == .post else { throw AuthError("METHOD_NOT_ALLOWED", status: 405) }
                return try await createSessionCookie(try await body(of: request, allowForm: false))
            }
            guard parts.count == 3 else { throw AuthError("NOT_FOUND", status: 404) }
            return try await adminEndpoint(String(parts[2]), request: request)
        }
        guard request.method == .post else { throw AuthError("METHOD_NOT_ALLOWED", status: 405) }
        let body = try await body(of: request, allowForm: false)
        switch endpoint {
        case "accounts:signUp":
            // With an admin credential this is Firebase's admin create; otherwise a sign-up,
            // counted against the client's address unless an admin makes it.
            let admin = isAdmin(request)
            if admin && body.string("localId") != nil { return try await adminCreate(body) }
            let session = try await service.signUp(
                email: body.string("email"), password: body.string("password"), displayName: body.string("displayName"),
                client: admin ? nil : proxies.clientAddress(of: request, peer: context.remoteAddress))
            return Self.json(Self.sessionBody(session, kind: "identitytoolkit#SignupNewUserResponse"))
        case "accounts:signInWithPassword":
            let session = try await service.signIn(
                email: body.string("email"), password: body.string("password"), client: proxies.clientAddress(of: request, peer: context.remoteAddress))
            var extra: [(ChildKey, Node)] = [(ChildKey("registered"), .bool(true))]
            if let name = session.user.displayName { extra.append((ChildKey("displayName"), .string(name))) }
            return Self.json(Self.sessionBody(session, kind: "identitytoolkit#VerifyPasswordResponse", extra: extra))
        case "accounts:signInWithCustomToken":
            guard let token = body.string("token") else { throw AuthError.invalidCustomToken }
            let session = try await service.signIn(customToken: token)
            return Self.json(Self.sessionBody(
                session, kind: "identitytoolkit#VerifyCustomTokenResponse",
                extra: [(ChildKey("isNewUser"), .bool(session.isNewUser))], withEmail: false))
        case "accounts:lookup":
            if body.string("idToken") == nil, isAdmin(request) { return try await adminLookup(body) }
            let user = try await service.user(idToken: body.string("idToken"))
            RequestLog.current?.uid = user.uid
            return Self.json(.object([
                (ChildKey("kind"), .string("identitytoolkit#GetAccountInfoResponse")),
                (ChildKey("users"), Self.list([Self.userInfo(user)])),
            ]))
        case "accounts:update":
            if body.string("oobCode") != nil { return try await applyActionCode(body) }
            if body.string("idToken") == nil, isAdmin(request) { return try await adminUpdate(body) }
            let change = AuthService.ProfileChange(
                displayName: body.string("displayName"), photoURL: body.string("photoUrl"), email: body.string("email"),
                password: body.string("password"), deleteAttributes: body.strings("deleteAttribute"),
                deleteProviders: body.strings("deleteProvider"))
            let (user, session) = try await service.update(idToken: body.string("idToken"), change)
            RequestLog.current?.uid = user.uid
            var entries = Self.userInfo(user).children.map { Array($0) } ?? []
            entries.append((ChildKey("kind"), .string("identitytoolkit#SetAccountInfoResponse")))
            if let session {
                entries += [
                    (ChildKey("idToken"), .string(session.idToken)),
                    (ChildKey("refreshToken"), .string(session.refreshToken)),
                    (ChildKey("expiresIn"), .string(String(session.expiresIn))),
                ]
            }
            return Self.json(.object(entries))
        case "accounts:delete":
            if body.string("idToken") == nil, isAdmin(request) { return try await adminDelete(body) }
            try await service.delete(idToken: body.string("idToken"))
            return Self.json(.object([(ChildKey("kind"), .string("identitytoolkit#DeleteAccountResponse"))]))
        case "accounts:createAuthUri":
            return try await createAuthUri(body, client: proxies.clientAddress(of: request, peer: context.remoteAddress))
        case "accounts:signInWithIdp":
            return try await signInWithIdp(body)
        case "accounts:sendOobCode":
            return try await sendOobCode(body, request: request, client: proxies.clientAddress(of: request, peer: context.remoteAddress))
        case "accounts:resetPassword":
            return try await resetPassword(body)
        case "accounts:signInWithEmailLink":
            return try await signInWithEmailLink(body)
        case "accounts:signOut":
            try await service.signOut(idToken: body.string("idToken"), refreshToken: body.string("refreshToken"))
            return Self.json(.object([(ChildKey("kind"), .string("hearth#SignOutResponse"))]))
        default:
            throw AuthError("NOT_FOUND", status: 404)
        }
    }

    /// A provider's name for people when its configuration gives none.
    static func providerName(_ id: String) -> String {
        switch id {
        case "github.com": "GitHub"
        case "google.com": "Google"
        case "apple.com": "Apple"
        case "microsoft.com": "Microsoft"
        case "yahoo.com": "Yahoo"
        default: String(id.drop { $0 != "." }.dropFirst())
        }
    }

    // MARK: - Tokens

    private func refresh(_ body: RequestFields) async throws -> Response {
        guard let grant = body.string("grant_type") ?? body.string("grantType"), grant == "refresh_token" else {
            throw AuthError.invalidGrantType
        }
        let session = try await service.refresh(refreshToken: body.string("refresh_token") ?? body.string("refreshToken"))
        RequestLog.current?.uid = session.user.uid
        return Self.json(.object([
            (ChildKey("access_token"), .string(session.idToken)),
            (ChildKey("expires_in"), .string(String(session.expiresIn))),
            (ChildKey("token_type"), .string("Bearer")),
            (ChildKey("refresh_token"), .string(session.refreshToken)),
            (ChildKey("id_token"), .string(session.idToken)),
            (ChildKey("user_id"), .string(session.user.uid)),
            (ChildKey("project_id"), .string(service.issuer.projectID)),
        ]))
    }

    // MARK: - Admin

    private func adminEndpoint(_ endpoint: String, request: Request) async throws -> Response {
        if endpoint == "accounts:batchGet" {
            guard request.method == .get else { throw AuthError("METHOD_NOT_ALLOWED", status: 405) }
            let parameters = request.uri.queryParameters
            let maxResults = parameters["maxResults"].flatMap { Int(String($0)) } ?? 1000
            let (users, next) = try await service.listUsers(
                pageToken: parameters["nextPageToken"].map(String.init), maxResults: maxResults)
            var entries: [(ChildKey, Node)] = [
                (ChildKey("kind"), .string("identitytoolkit#DownloadAccountResponse")),
                (ChildKey("users"), Self.list(users.map(Self.userInfo))),
            ]
            if let next { entries.append((ChildKey("nextPageToken"), .string(next))) }
            return Self.json(.object(entries))
        }
        guard request.method == .post else { throw AuthError("METHOD_NOT_ALLOWED", status: 405) }
        let body = try await body(of: request, allowForm: false)
        switch endpoint {
        case "accounts": return try await adminCreate(body)
        case "accounts:batchCreate": return try await importUsers(body)
        case "accounts:sendOobCode": return try await sendOobCode(body, request: request, client: nil)
        case "accounts:query": return try await queryUsers(body)
        case "accounts:lookup": return try await adminLookup(body)
        case "accounts:update": return try await adminUpdate(body)
        case "accounts:delete": return try await adminDelete(body)
        case "accounts:batchDelete":
            var errors: [Node] = []
            for (index, uid) in body.strings("localIds").enumerated() {
                do {
                    try await service.deleteUser(uid: uid)
                } catch let error where error == .userNotFound {
                    // Firebase treats deleting a missing user as success.
                } catch {
                    errors.append(.object([
                        (ChildKey("index"), .int(Int64(index))), (ChildKey("localId"), .string(uid)),
                        (ChildKey("message"), .string(error.message)),
                    ]))
                }
            }
            var entries: [(ChildKey, Node)] = [(ChildKey("kind"), .string("identitytoolkit#BatchDeleteAccountsResponse"))]
            if !errors.isEmpty { entries.append((ChildKey("errors"), Self.list(errors))) }
            return Self.json(.object(entries))
        default:
            throw AuthError("NOT_FOUND", status: 404)
        }
    }

    func adminCreate(_ body: RequestFields) async throws -> Response {
        let user = try await service.createUser(try accountFields(body, creating: true))
        var entries = Self.userInfo(user).children.map { Array($0) } ?? []
        entries.append((ChildKey("kind"), .string("identitytoolkit#SignupNewUserResponse")))
        return Self.json(.object(entries))
    }

    func adminDelete(_ body: RequestFields) async throws -> Response {
        guard let uid = body.string("localId") else { throw AuthError("MISSING_LOCAL_ID") }
        try await service.deleteUser(uid: uid)
        return Self.json(.object([(ChildKey("kind"), .string("identitytoolkit#DeleteAccountResponse"))]))
    }

    func isAdmin(_ request: Request) -> Bool {
        let isAdmin = admin.isAdmin(request, parameters: [:])
        if isAdmin { RequestLog.current?.uid = RequestAuth.admin.logName }
        return isAdmin
    }

    func requireAdmin(_ request: Request) throws {
        guard isAdmin(request) else { throw AuthError.insufficientPermission }
    }

    // MARK: - Bodies

    /// A request body's fields: a JSON object, or (for the token endpoint) a form.
    struct RequestFields {
        let node: Node

        func string(_ key: String) -> String? {
            if case .string(let text) = node.child(ChildKey(key)) { return text }
            return nil
        }

        func bool(_ key: String) -> Bool? {
            switch node.child(ChildKey(key)) {
            case .bool(let flag): return flag
            case .string("true"): return true
            case .string("false"): return false
            default: return nil
            }
        }

        /// A whole number given as a JSON number or as a string (as Google's APIs write int64s);
        /// nil when absent or not a whole number within `Int64`.
        func integer(_ key: String) -> Int64? {
            if let text = string(key) { return Int64(text) }
            return node.child(ChildKey(key)).integerValue
        }

        /// A list of strings (a JSON array), or a single string as a list of one.
        func strings(_ key: String) -> [String] {
            let value = node.child(ChildKey(key))
            if case .string(let text) = value { return [text] }
            guard let children = value.children else { return [] }
            return children.compactMap { entry -> String? in
                if case .string(let text) = entry.value { return text }
                return nil
            }
        }
    }

    func body(of request: Request, allowForm: Bool) async throws -> RequestFields {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: maxBodyBytes)
        } catch {
            throw AuthError.invalidArgument("the request body is too large")
        }
        let bytes = Array(buffer.readableBytesView)
        if bytes.isEmpty { return RequestFields(node: .null) }
        let isForm = request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") ?? false
        if allowForm && isForm {
            var components = URLComponents()
            components.percentEncodedQuery = String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "+", with: "%20")
            let entries = (components.queryItems ?? []).compactMap { item -> (ChildKey, Node)? in
                guard Path.isValidKey(item.name), let value = item.value else { return nil }
                return (ChildKey(item.name), .string(value))
            }
            return RequestFields(node: .object(entries))
        }
        // Arrays parse to objects keyed 0, 1, …, so the first byte tells an object from an array.
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        guard first == UInt8(ascii: "{"), let parsed = try? JSONParser.parseDocument(bytes),
            parsed.isNull || parsed.children != nil
        else {
            throw AuthError.invalidArgument("the request body must be a JSON object")
        }
        return RequestFields(node: parsed)
    }

    // MARK: - Responses

    static func json(_ node: Node, status: HTTPResponse.Status = .ok) -> Response {
        // An empty object is written as {} (a Node cannot hold one).
        let bytes = node.isNull ? Array("{}".utf8) : JSONWriter.bytes(node)
        return JSONResponse.make(status: status, bytes: bytes)
    }

    static func errorResponse(_ error: AuthError) -> Response {
        let reason: Node = .object([
            (ChildKey("domain"), .string("global")), (ChildKey("message"), .string(error.message)),
            (ChildKey("reason"), .string("invalid")),
        ])
        let body: Node = .object([
            (ChildKey("error"), .object([
                (ChildKey("code"), .int(Int64(error.status))),
                (ChildKey("errors"), list([reason])),
                (ChildKey("message"), .string(error.message)),
            ]))
        ])
        return json(body, status: HTTPResponse.Status(code: error.status))
    }

    /// A JSON array of `items` (as an object keyed 0, 1, …, which is how arrays are written).
    static func list(_ items: [Node]) -> Node {
        .object(items.enumerated().map { (ChildKey(String($0.offset)), $0.element) })
    }

    static func sessionBody(
        _ session: AuthService.Session, kind: String, extra: [(ChildKey, Node)] = [], withEmail: Bool = true
    ) -> Node {
        // The request log names whom a sign-in, sign-up or link spoke for.
        RequestLog.current?.uid = session.user.uid
        var entries: [(ChildKey, Node)] = [
            (ChildKey("kind"), .string(kind)),
            (ChildKey("localId"), .string(session.user.uid)),
            (ChildKey("idToken"), .string(session.idToken)),
            (ChildKey("refreshToken"), .string(session.refreshToken)),
            (ChildKey("expiresIn"), .string(String(session.expiresIn))),
        ]
        if withEmail, let email = session.user.email { entries.append((ChildKey("email"), .string(email))) }
        return .object(entries + extra)
    }

    /// A user as Firebase's `UserInfo` (what `accounts:lookup` and the Admin SDKs read).
    static func userInfo(_ user: UserRecord) -> Node {
        var entries: [(ChildKey, Node)] = [
            (ChildKey("localId"), .string(user.uid)),
            (ChildKey("emailVerified"), .bool(user.emailVerified)),
            (ChildKey("disabled"), .bool(user.disabled)),
            (ChildKey("createdAt"), .string(String(user.createdAt))),
            (ChildKey("validSince"), .string(String(user.validSince))),
        ]
        if let email = user.email { entries.append((ChildKey("email"), .string(email))) }
        if let name = user.displayName { entries.append((ChildKey("displayName"), .string(name))) }
        if let photo = user.photoURL { entries.append((ChildKey("photoUrl"), .string(photo))) }
        if let login = user.lastLoginAt { entries.append((ChildKey("lastLoginAt"), .string(String(login)))) }
        if user.emailLinkSignIn { entries.append((ChildKey("emailLinkSignin"), .bool(true))) }
        if user.customClaims.children != nil {
            entries.append((ChildKey("customAttributes"), .string(JSONWriter.string(user.customClaims))))
        }
        if let phone = user.phoneNumber { entries.append((ChildKey("phoneNumber"), .string(phone))) }
        if let changed = user.passwordUpdatedAt { entries.append((ChildKey("passwordUpdatedAt"), .int(changed))) }
        var providers: [Node] = []
        if let email = user.email, user.passwordHash != nil || user.emailLinkSignIn {
            var provider: [(ChildKey, Node)] = [
                (ChildKey("providerId"), .string("password")), (ChildKey("email"), .string(email)),
                (ChildKey("federatedId"), .string(email)), (ChildKey("rawId"), .string(email)),
            ]
            if let name = user.displayName { provider.append((ChildKey("displayName"), .string(name))) }
            if let photo = user.photoURL { provider.append((ChildKey("photoUrl"), .string(photo))) }
            providers.append(.object(provider))
        }
        if let phone = user.phoneNumber {
            providers.append(.object([
                (ChildKey("providerId"), .string("phone")), (ChildKey("phoneNumber"), .string(phone)),
                (ChildKey("rawId"), .string(phone)),
            ]))
        }
        for identity in user.identities {
            var provider: [(ChildKey, Node)] = [
                (ChildKey("providerId"), .string(identity.providerID)), (ChildKey("rawId"), .string(identity.rawID)),
                (ChildKey("federatedId"), .string(identity.rawID)),
            ]
            if let email = identity.email { provider.append((ChildKey("email"), .string(email))) }
            if let name = identity.displayName { provider.append((ChildKey("displayName"), .string(name))) }
            if let photo = identity.photoURL { provider.append((ChildKey("photoUrl"), .string(photo))) }
            providers.append(.object(provider))
        }
        if !providers.isEmpty { entries.append((ChildKey("providerUserInfo"), list(providers))) }
        return .object(entries)
    }
}
