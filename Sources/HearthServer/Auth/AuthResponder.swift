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
/// - the same under v3's older names, `/www.googleapis.com/identitytoolkit/v3/relyingparty/…`
///   (`signupNewUser`, `verifyPassword`, …), for SDK 8 and older SDKs
///   (`AuthResponder+IdentityToolkitV3.swift`);
/// - admins: `/identitytoolkit.googleapis.com/v1/projects/<project>/accounts` (create),
///   `accounts:lookup`, `accounts:batchGet`, `accounts:update`, `accounts:delete`,
///   `accounts:batchDelete`, and the emulator's `DELETE /emulator/v1/projects/<project>/accounts`;
/// - keys: the ID-token signing keys as a JWKS at `/.well-known/jwks.json`.
///
/// Its routes are in `AuthResponder+Routes.swift`; errors are thrown and written by
/// ``IdentityToolkitErrors`` in Firebase's shape: `{"error": {"code": 400, "message": "EMAIL_EXISTS", ...}}`.
/// Request bodies are never logged.
struct AuthResponder: Sendable {
    let service: AuthService
    let admin: AdminCredential
    /// Service accounts' keys, for the token endpoint.
    let serviceAccounts: ServiceAccounts
    /// Whose word is taken for the client's address (sign-in attempts are counted by it).
    let proxies: ProxyTrust
    /// The web files holding the emulator's sign-in pages (`emulator/auth/`); nil serves none.
    var pages: WebFiles? = nil
    let maxBodyBytes = 1 << 20

    static let identityToolkit = "/identitytoolkit.googleapis.com/v1/"
    static let identityToolkitV2 = "/identitytoolkit.googleapis.com/v2/"
    static let secureToken = "/securetoken.googleapis.com/v1/token"
    static let emulatorAccounts = "/emulator/v1/projects/"
    /// The emulator's sign-in pages for the SDKs' popups and redirects (`AuthResponder+EmulatorPages.swift`).
    static let emulatorPages = "/emulator/auth/"
    /// Hearth's own: the providers a sign-in page offers (`{"providers": [{providerId, displayName}]}`).
    static let providersPath = "/__/auth/providers"
    /// Where Google serves its token keys as X.509 certificates, which the Admin SDKs read
    /// outside emulator mode: ID tokens' (`verify_id_token`) and session cookies'.
    static let x509Paths: Set<String> = [
        "/www.googleapis.com/robot/v1/metadata/x509/securetoken@system.gserviceaccount.com",
        "/www.googleapis.com/identitytoolkit/v3/relyingparty/publicKeys",
    ]
    static let jwksPaths: Set<String> = [
        "/.well-known/jwks.json", "/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com",
    ]

    /// The Google API hosts, as the SDKs put them in the path when pointed at an emulator. Any
    /// path under them is this responder's, so one it does not know answers `NOT_FOUND` in
    /// Google's error format (and is logged) instead of reaching the database.
    static let googleAPIPrefixes = ["/identitytoolkit.googleapis.com/", "/securetoken.googleapis.com/", "/www.googleapis.com/"]

    /// True for the paths this responder answers.
    static func handles(_ path: String) -> Bool {
        googleAPIPrefixes.contains { path.hasPrefix($0) } || path == providersPath || path.hasPrefix(emulatorAccounts) || path.hasPrefix(emulatorPages)
            || jwksPaths.contains(path) || tokenEndpoints.contains(path)
    }

    // MARK: - Users' endpoints

    func providers() async throws -> Response {
        let providers = try await service.signInProviders()
        return Self.answer(ProvidersAnswer(providers: providers.map { config in
            .init(providerId: config.id, displayName: config.displayName ?? Self.providerName(config.id))
        }))
    }

    func signUp(_ request: Request, context: HearthRequestContext) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        // With an admin credential this is Firebase's admin create; otherwise a sign-up,
        // counted against the client's address unless an admin makes it.
        let admin = await isAdmin(request)
        if admin && body.string("localId") != nil { return try await adminCreate(body) }
        let session = try await service.signUp(
            email: body.string("email"), password: body.string("password"), displayName: body.string("displayName"),
            client: admin ? nil : proxies.clientAddress(of: request, peer: context.remoteAddress))
        var answer = Self.session(session, kind: "identitytoolkit#SignupNewUserResponse")
        answer.displayName = session.user.displayName
        return Self.answer(answer)
    }

    func signInWithPassword(_ request: Request, context: HearthRequestContext) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        let session = try await service.signIn(
            email: body.string("email"), password: body.string("password"), client: proxies.clientAddress(of: request, peer: context.remoteAddress))
        var answer = Self.session(session, kind: "identitytoolkit#VerifyPasswordResponse")
        answer.registered = true
        answer.displayName = session.user.displayName
        return Self.answer(answer)
    }

    func signInWithCustomToken(_ request: Request) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        guard let token = body.string("token") else { throw AuthError.invalidCustomToken }
        let session = try await service.signIn(customToken: token)
        var answer = Self.session(session, kind: "identitytoolkit#VerifyCustomTokenResponse", withEmail: false)
        answer.isNewUser = session.isNewUser
        return Self.answer(answer)
    }

    func lookup(_ request: Request) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        if body.string("idToken") == nil, await isAdmin(request) { return try await adminLookup(body) }
        let user = try await service.user(idToken: body.string("idToken"))
        RequestLog.current?.uid = user.uid
        return Self.answer(AccountInfoAnswer(users: [UserInfoAnswer(user)]))
    }

    func update(_ request: Request) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        if body.string("oobCode") != nil { return try await applyActionCode(body) }
        if body.string("idToken") == nil, await isAdmin(request) { return try await adminUpdate(body) }
        let change = AuthService.ProfileChange(
            displayName: body.string("displayName"), photoURL: body.string("photoUrl"), email: body.string("email"),
            password: body.string("password"), deleteAttributes: body.strings("deleteAttribute"),
            deleteProviders: body.strings("deleteProvider"))
        let (user, session) = try await service.update(idToken: body.string("idToken"), change)
        RequestLog.current?.uid = user.uid
        return Self.answer(UserAnswer(kind: "identitytoolkit#SetAccountInfoResponse", user: UserInfoAnswer(user), session: session))
    }

    func delete(_ request: Request) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        if body.string("idToken") == nil, await isAdmin(request) { return try await adminDelete(body) }
        try await service.delete(idToken: body.string("idToken"))
        return Self.answer(KindAnswer(kind: "identitytoolkit#DeleteAccountResponse"))
    }

    func signOut(_ request: Request) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        try await service.signOut(idToken: body.string("idToken"), refreshToken: body.string("refreshToken"))
        return Self.answer(KindAnswer(kind: "hearth#SignOutResponse"))
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

    func refresh(_ body: RequestFields) async throws -> Response {
        guard let grant = body.string("grant_type") ?? body.string("grantType"), grant == "refresh_token" else {
            throw AuthError.invalidGrantType
        }
        let session = try await service.refresh(refreshToken: body.string("refresh_token") ?? body.string("refreshToken"))
        RequestLog.current?.uid = session.user.uid
        return Self.answer(TokenAnswer(
            accessToken: session.idToken, expiresIn: String(session.expiresIn), refreshToken: session.refreshToken,
            idToken: session.idToken, userId: session.user.uid, projectId: service.issuer.projectID))
    }

    // MARK: - Admin

    func batchGet(_ request: Request) async throws -> Response {
        let parameters = request.uri.queryParameters
        return try await downloadAccounts(
            pageToken: parameters["nextPageToken"].map(String.init), maxResults: parameters["maxResults"].flatMap { Int(String($0)) })
    }

    /// A page of accounts (`accounts:batchGet`, v3's `downloadAccount`), 1000 unless `maxResults` says.
    func downloadAccounts(pageToken: String?, maxResults: Int?) async throws -> Response {
        let (users, next) = try await service.listUsers(pageToken: pageToken, maxResults: maxResults ?? 1000)
        return Self.answer(DownloadAccountAnswer(users: Self.nonEmpty(users.map(UserInfoAnswer.exported)), nextPageToken: next))
    }

    func batchDelete(_ body: RequestFields) async throws -> Response {
        var errors: [BatchDeleteAnswer.Failure] = []
        for (index, uid) in body.strings("localIds").enumerated() {
            do {
                try await service.deleteUser(uid: uid)
            } catch let error where error == .userNotFound {
                // Firebase treats deleting a missing user as success.
            } catch {
                errors.append(.init(index: index, localId: uid, message: error.message))
            }
        }
        return Self.answer(BatchDeleteAnswer(errors: Self.nonEmpty(errors)))
    }

    func adminCreate(_ body: RequestFields) async throws -> Response {
        let user = try await service.createUser(try accountFields(body, creating: true))
        return Self.answer(UserAnswer(kind: "identitytoolkit#SignupNewUserResponse", user: UserInfoAnswer(user)))
    }

    func adminDelete(_ body: RequestFields) async throws -> Response {
        guard let uid = body.string("localId") else { throw AuthError("MISSING_LOCAL_ID") }
        try await service.deleteUser(uid: uid)
        return Self.answer(KindAnswer(kind: "identitytoolkit#DeleteAccountResponse"))
    }

    func isAdmin(_ request: Request) async -> Bool {
        let isAdmin = await admin.isAdmin(request, parameters: [:])
        if isAdmin { RequestLog.current?.uid = RequestAuth.admin.logName }
        return isAdmin
    }

    func requireAdmin(_ request: Request) async throws {
        guard await isAdmin(request) else { throw AuthError.insufficientPermission }
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

    /// A resource document held as a ``HearthCore/Node`` (signing keys, provider configurations).
    static func json(_ node: Node) -> Response {
        // An empty object is written as {} (a Node cannot hold one).
        let bytes = node.isNull ? Array("{}".utf8) : JSONWriter.bytes(node)
        return JSONResponse.make(status: .ok, bytes: bytes)
    }

    /// A JSON array of resource documents (as an object keyed 0, 1, …, which is how a Node
    /// writes arrays).
    static func list(_ items: [Node]) -> Node {
        .object(items.enumerated().map { (ChildKey(String($0.offset)), $0.element) })
    }

    /// `value` as the answer's JSON body.
    static func answer(_ value: some Encodable) -> Response {
        JSONResponse.encoding(value)
    }

    /// `items`, or nil when there are none (Firebase leaves such lists out).
    static func nonEmpty<Item>(_ items: [Item]) -> [Item]? {
        items.isEmpty ? nil : items
    }

    static func session(_ session: AuthService.Session, kind: String, withEmail: Bool = true) -> SessionAnswer {
        // The request log names whom a sign-in, sign-up or link spoke for.
        RequestLog.current?.uid = session.user.uid
        return SessionAnswer(session, kind: kind, withEmail: withEmail)
    }
}
