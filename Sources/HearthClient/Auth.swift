import AsyncHTTPClient
import Foundation
import HearthCore
import NIOCore
import NIOHTTP1
import Synchronization

/// A signed-in user.
public struct User: Sendable, Equatable, Identifiable {
    public let uid: String
    public var email: String?
    public var displayName: String?
    public var photoURL: String?
    public var isAnonymous: Bool
    public var id: String { uid }

    /// The session: an ID token (the credential requests carry) and what renews it.
    var idToken: String
    var refreshToken: String
    /// When the ID token stops working (ms since the epoch).
    var expiresAt: Int64
}

/// Accounts through Hearth's Firebase Auth REST API: sign up, sign in (password, anonymous,
/// custom token), sign out, profile changes, and ID tokens that renew themselves.
///
/// ```swift
/// let auth = Auth(url: server)
/// for await user in auth.stateChanges() { … }      // nil when signed out
/// try await auth.createUser(email: "ann@example.com", password: "secret-pw")
/// ```
public final class Auth: Sendable {
    public let url: URL
    let transport: HTTPTransport
    let clock: @Sendable () -> Int64
    private let state = Mutex<State>(State())

    private struct State {
        var user: User?
        var sessionEndedBy: String?
        var watchers: [UUID: AsyncStream<User?>.Continuation] = [:]
        var credentialObservers: [UUID: @Sendable () -> Void] = [:]
    }

    /// - Parameters:
    ///   - url: the server, such as `http://127.0.0.1:9000`.
    ///   - httpClient: the HTTP client requests go through.
    ///   - clock: milliseconds since the epoch (token expiry).
    public init(url: URL, httpClient: HTTPClient = .hearth, clock: @escaping @Sendable () -> Int64 = Database.systemClock) {
        self.url = url
        self.transport = HTTPTransport(client: httpClient)
        self.clock = clock
    }

    /// The signed-in user, or nil.
    public var currentUser: User? { state.withLock { $0.user } }

    /// Why the server ended the last session (`USER_DISABLED`, `TOKEN_EXPIRED`, …), when it
    /// did rather than the person; cleared by the next sign-in.
    public var sessionEndedBy: String? { state.withLock { $0.sessionEndedBy } }

    /// The signed-in user now and after every change (sign-in, profile change, sign-out).
    public func stateChanges() -> AsyncStream<User?> {
        let (stream, continuation) = AsyncStream<User?>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = UUID()
        state.withLock { state in
            continuation.yield(state.user)
            state.watchers[id] = continuation
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: - Signing in and out

    /// Makes an email/password account, named `displayName` when one is given (in the same
    /// request), and signs in as it.
    @discardableResult
    public func createUser(email: String, password: String, displayName: String? = nil) async throws -> User {
        var fields: [String: Node] = ["email": .string(email), "password": .string(password)]
        if let displayName { fields["displayName"] = .string(displayName) }
        return try await signIn(through: "accounts:signUp", fields)
    }

    @discardableResult
    public func signIn(email: String, password: String) async throws -> User {
        try await signIn(through: "accounts:signInWithPassword", ["email": .string(email), "password": .string(password)])
    }

    /// Signs in as a new anonymous account (to browse and try things before signing up).
    @discardableResult
    public func signInAnonymously() async throws -> User {
        try await signIn(through: "accounts:signUp", [:])
    }

    /// Signs in with a custom token made by the server (`hearth users token`).
    @discardableResult
    public func signIn(customToken: String) async throws -> User {
        try await signIn(through: "accounts:signInWithCustomToken", ["token": .string(customToken)])
    }

    /// Signs out here and ends this session's refresh token on the server (other devices stay
    /// signed in).
    public func signOut() async {
        guard let user = currentUser else { return }
        _ = try? await call("accounts:signOut", ["idToken": .string(user.idToken), "refreshToken": .string(user.refreshToken)])
        setUser(nil)
    }

    // MARK: - The signed-in user

    /// A valid ID token for the signed-in user, renewed when it has less than five minutes
    /// left (or when `forceRefresh`); nil when signed out.
    public func idToken(forceRefresh: Bool = false) async throws -> String? {
        guard let user = currentUser else { return nil }
        guard forceRefresh || user.expiresAt - clock() < 5 * 60 * 1000 else { return user.idToken }
        let renewed: User
        do {
            renewed = try await refresh(user)
        } catch let error as HearthClientError where error.kind == .notSignedIn {
            // The session is over (the account disabled or deleted, signed out everywhere):
            // signed out here too, as Firebase's SDKs do; `sessionEndedBy` says why.
            if state.withLock({ $0.user?.uid == user.uid }) {
                state.withLock { $0.sessionEndedBy = error.message }
                setUser(nil)
            }
            throw error
        }
        if forceRefresh {
            // Asked for because the claims changed (an admin role given since): connections
            // send the new token, as Firebase's SDKs do.
            for observer in state.withLock({ Array($0.credentialObservers.values) }) { observer() }
        }
        return renewed.idToken
    }

    /// Sets the display name and/or photo URL (nil leaves it); later ID tokens carry them.
    @discardableResult
    public func updateProfile(displayName: String? = nil, photoURL: String? = nil) async throws -> User {
        guard let user = currentUser else { throw HearthClientError(.notSignedIn, "Nobody is signed in.") }
        var fields: [String: Node] = ["idToken": .string(try await idToken() ?? user.idToken), "returnSecureToken": .bool(true)]
        if let displayName { fields["displayName"] = .string(displayName) }
        if let photoURL { fields["photoUrl"] = .string(photoURL) }
        _ = try await call("accounts:update", fields)
        var updated = try await refresh(user)
        if let displayName { updated.displayName = displayName }
        if let photoURL { updated.photoURL = photoURL }
        setUser(updated)
        return updated
    }

    /// Changes the password; the session continues with new tokens, other sessions end.
    public func updatePassword(_ password: String) async throws {
        guard let user = currentUser else { throw HearthClientError(.notSignedIn, "Nobody is signed in.") }
        let answer = try await call(
            "accounts:update", ["idToken": .string(try await idToken() ?? user.idToken), "password": .string(password),
                                "returnSecureToken": .bool(true)])
        var updated = user
        if case .string(let token) = answer.child(ChildKey("idToken")) { updated.idToken = token }
        if case .string(let token) = answer.child(ChildKey("refreshToken")) { updated.refreshToken = token }
        updated.expiresAt = clock() + Self.seconds(answer.child(ChildKey("expiresIn"))) * 1000
        updated.isAnonymous = false
        setUser(updated)
    }

    /// Gives the signed-in anonymous account an email and password (and `displayName`, when one
    /// is given, in the same request: nobody sees the account with its email but not its name):
    /// it keeps its uid and everything it made, and becomes an ordinary account.
    @discardableResult
    public func linkEmail(_ email: String, password: String, displayName: String? = nil) async throws -> User {
        guard let user = currentUser else { throw HearthClientError(.notSignedIn, "Nobody is signed in.") }
        var fields: [String: Node] = [
            "idToken": .string(try await idToken() ?? user.idToken), "email": .string(email),
            "password": .string(password), "returnSecureToken": .bool(true),
        ]
        if let displayName { fields["displayName"] = .string(displayName) }
        let answer = try await call("accounts:update", fields)
        var updated = user
        if let displayName { updated.displayName = Self.string(answer, "displayName") ?? displayName }
        if case .string(let token) = answer.child(ChildKey("idToken")) { updated.idToken = token }
        if case .string(let token) = answer.child(ChildKey("refreshToken")) { updated.refreshToken = token }
        updated.expiresAt = clock() + Self.seconds(answer.child(ChildKey("expiresIn"))) * 1000
        updated.email = Self.string(answer, "email") ?? email.lowercased()
        updated.isAnonymous = false
        setUser(updated)
        return updated
    }

    /// Removes a way of signing in from the account: `password`, `phone`, or a provider ID
    /// such as `github.com` or `oidc.corp`.
    public func unlink(_ providerID: String) async throws {
        guard let user = currentUser else { throw HearthClientError(.notSignedIn, "Nobody is signed in.") }
        _ = try await call(
            "accounts:update", ["idToken": .string(try await idToken() ?? user.idToken), "deleteProvider": .object([(ChildKey("0"), .string(providerID))])])
        setUser(try await refresh(user))
    }

    /// Emails a link to choose a new password. The answer is the same whether or not the
    /// address has an account.
    public func sendPasswordReset(to email: String) async throws {
        _ = try await call("accounts:sendOobCode", ["requestType": .string("PASSWORD_RESET"), "email": .string(email)])
    }

    /// Emails the signed-in user a link that verifies their address.
    public func sendEmailVerification() async throws {
        guard let user = currentUser else { throw HearthClientError(.notSignedIn, "Nobody is signed in.") }
        _ = try await call("accounts:sendOobCode", ["requestType": .string("VERIFY_EMAIL"), "idToken": .string(try await idToken() ?? user.idToken)])
    }

    /// The address an emailed password reset code is for; the code stays usable.
    public func verifyPasswordResetCode(_ code: String) async throws -> String {
        let answer = try await call("accounts:resetPassword", ["oobCode": .string(code)])
        guard let email = Self.string(answer, "email") else { throw HearthClientError(.unexpectedResponse, "The answer names no email.") }
        return email
    }

    /// Sets a new password with an emailed code (every session of the account ends).
    public func confirmPasswordReset(code: String, newPassword: String) async throws {
        _ = try await call("accounts:resetPassword", ["oobCode": .string(code), "newPassword": .string(newPassword)])
    }

    /// Applies an emailed verification code; the signed-in user's next token says so.
    public func applyActionCode(_ code: String) async throws {
        _ = try await call("accounts:update", ["oobCode": .string(code)])
        if let user = currentUser { setUser(try await refresh(user)) }
    }

    /// Deletes the signed-in account and signs out.
    public func deleteAccount() async throws {
        guard let user = currentUser else { throw HearthClientError(.notSignedIn, "Nobody is signed in.") }
        _ = try await call("accounts:delete", ["idToken": .string(try await idToken() ?? user.idToken)])
        setUser(nil)
    }

    // MARK: - Requests

    private func signIn(through endpoint: String, _ fields: [String: Node]) async throws -> User {
        var body = fields
        body["returnSecureToken"] = .bool(true)
        let answer = try await call(endpoint, body)
        guard case .string(let uid) = answer.child(ChildKey("localId")),
            case .string(let idToken) = answer.child(ChildKey("idToken")),
            case .string(let refreshToken) = answer.child(ChildKey("refreshToken"))
        else { throw HearthClientError(.unexpectedResponse, "The sign-in answer has no tokens.") }
        var user = User(
            uid: uid, email: Self.string(answer, "email"), displayName: Self.string(answer, "displayName"),
            photoURL: Self.string(answer, "photoUrl"), isAnonymous: fields["email"] == nil && fields["token"] == nil,
            idToken: idToken, refreshToken: refreshToken,
            expiresAt: clock() + Self.seconds(answer.child(ChildKey("expiresIn"))) * 1000)
        if user.displayName == nil || user.photoURL == nil, let profile = try? await lookup(idToken) {
            user.displayName = user.displayName ?? Self.string(profile, "displayName")
            user.photoURL = user.photoURL ?? Self.string(profile, "photoUrl")
            user.email = user.email ?? Self.string(profile, "email")
        }
        setUser(user)
        return user
    }

    private func lookup(_ idToken: String) async throws -> Node {
        let answer = try await call("accounts:lookup", ["idToken": .string(idToken)])
        return answer.child(ChildKey("users")).child(ChildKey("0"))
    }

    /// A new ID token from the user's refresh token.
    private func refresh(_ user: User) async throws -> User {
        let form = "grant_type=refresh_token&refresh_token=\(user.refreshToken)"
        let response = try await transport.send(
            .POST, endpoint("/securetoken.googleapis.com/v1/token"),
            headers: [("Content-Type", "application/x-www-form-urlencoded")], body: ByteBuffer(string: form))
        let answer = try Self.answer(response)
        guard case .string(let idToken) = answer.child(ChildKey("id_token")) else {
            throw HearthClientError(.unexpectedResponse, "The refresh answer has no ID token.")
        }
        var renewed = user
        renewed.idToken = idToken
        if case .string(let token) = answer.child(ChildKey("refresh_token")) { renewed.refreshToken = token }
        renewed.expiresAt = clock() + Self.seconds(answer.child(ChildKey("expires_in"))) * 1000
        state.withLock { state in
            // Keep what changed meanwhile (a profile update), but the new tokens.
            if state.user?.uid == renewed.uid { state.user?.idToken = renewed.idToken; state.user?.expiresAt = renewed.expiresAt }
        }
        return renewed
    }

    private func call(_ endpoint: String, _ fields: [String: Node]) async throws -> Node {
        let body = Node.object(fields.map { (ChildKey($0.key), $0.value) })
        let response = try await transport.send(
            .POST, self.endpoint("/identitytoolkit.googleapis.com/v1/\(endpoint)?key=hearth"),
            headers: [("Content-Type", "application/json")], body: ByteBuffer(bytes: JSONWriter.bytes(body)))
        return try Self.answer(response)
    }

    private func endpoint(_ path: String) -> String {
        var base = url.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// The JSON answer, or the error it carries (`EMAIL_EXISTS`, `INVALID_LOGIN_CREDENTIALS`, …).
    private static func answer(_ response: HTTPTransport.Response) throws -> Node {
        let node = (try? JSONParser.parse(response.bytes).node) ?? .null
        guard response.status == 200 else {
            var message = response.text
            if case .string(let text) = node.child(ChildKey("error")).child(ChildKey("message")) { message = text }
            // The session is over (Firebase's SDKs sign the user out on these too).
            if ["TOKEN_EXPIRED", "USER_NOT_FOUND", "USER_DISABLED", "INVALID_REFRESH_TOKEN"].contains(message) {
                throw HearthClientError(.notSignedIn, status: response.status, message)
            }
            throw HearthClientError.from(status: response.status, message: message)
        }
        return node
    }

    private func setUser(_ user: User?) {
        let observers = state.withLock { state in
            state.user = user
            if user != nil { state.sessionEndedBy = nil }
            for watcher in state.watchers.values { watcher.yield(user) }
            return Array(state.credentialObservers.values)
        }
        for observer in observers { observer() }
    }

    /// Calls `observer` synchronously whenever the user or their ID token changes, before the
    /// call that changed it returns (so a database connection re-authenticates before the next
    /// write is sent). Returns the ID to remove it with.
    func addCredentialObserver(_ observer: @escaping @Sendable () -> Void) -> UUID {
        let id = UUID()
        state.withLock { $0.credentialObservers[id] = observer }
        return id
    }

    func removeCredentialObserver(_ id: UUID) {
        _ = state.withLock { $0.credentialObservers.removeValue(forKey: id) }
    }

    private static func string(_ node: Node, _ key: String) -> String? {
        if case .string(let text) = node.child(ChildKey(key)) { return text }
        return nil
    }

    private static func seconds(_ node: Node) -> Int64 {
        switch node {
        case .string(let text): return Int64(text) ?? 3600
        case .int(let value): return value
        default: return 3600
        }
    }
}
