import Foundation
import HearthAuth
import HearthCore
import HearthStore
import HearthRules

/// Who a request speaks for: an admin (rules do not apply), or someone the rules judge by
/// their `auth` variable.
public enum RequestAuth: Sendable {
    case admin
    /// Rules apply with `auth` as the `auth` variable (`.null` when signed out); `expires` is
    /// when the credential stops being valid, in milliseconds.
    case rules(auth: Node, expires: Int64?)

    /// A signed-out client: the rules see `auth` as null.
    public static let anonymous = RequestAuth.rules(auth: .null, expires: nil)

    /// Who the writes made with it come from, for the events they record.
    public var writeOrigin: WriteOrigin {
        switch self {
        case .admin: return .admin
        case .rules(let auth, _):
            guard !auth.isNull else { return .unauthenticated }
            if case .string(let uid) = auth.child(ChildKey("uid")) { return .user(uid) }
            return WriteOrigin(kind: .appUser)
        }
    }

    static let unparseable = HearthError(.permissionDenied, "Could not parse auth token.")
    /// Thrown for a good token of an account that may no longer use it (disabled, deleted, its
    /// sessions ended); realtime answers it as `invalid_token`, which makes the SDKs fetch a new
    /// one (and so learn why).
    static func refused(_ refusal: AccountGate.Refusal) -> HearthError {
        HearthError(.permissionDenied, "\(refusedPrefix) \(refusal)")
    }

    static let refusedPrefix = "Auth token is revoked:"

    /// Whether `error` is a ``refused(_:)`` one.
    static func isRefused(_ error: HearthError) -> Bool {
        error.code == .permissionDenied && error.message.hasPrefix(refusedPrefix)
    }
    /// Thrown for a credential past its expiry; realtime answers it as `expired_token`.
    static let expired = HearthError(.permissionDenied, "Auth token is expired")

    /// A token's sign-in session (its `jti`), when it names one.
    static func sessionID(_ jti: Node) -> String? {
        if case .string(let session) = jti { return session }
        return nil
    }

    /// Who a credential speaks for, whatever carried it (a REST request, or a realtime `auth`):
    /// the admin token (or the emulator's `owner`), an unsigned test token in emulator mode,
    /// or an ID token `issuer` signed, of an account `gate` (when given) still lets use it.
    /// - Throws: `unparseable`, `expired` or `refused`.
    public static func resolve(
        credential presented: String, admin: AdminCredential, issuer: TokenIssuer, gate: AccountGate? = nil, now: Int64
    ) async throws(HearthError) -> RequestAuth {
        if await admin.isAdmin(credential: presented) { return .admin }
        guard admin.emulator, let claims = unsignedClaims(presented) else {
            let claims: Node
            do {
                claims = try await issuer.verifyIDToken(presented, now: now / 1000)
            } catch {
                throw error == .tokenExpired ? expired : unparseable
            }
            if let gate, case .string(let uid) = claims.child(ChildKey("sub")),
                let refusal = await gate.refusal(
                    uid: uid, issuedAt: claims.child(ChildKey("iat")).integerValue, session: sessionID(claims.child(ChildKey("jti"))))
            {
                throw refused(refusal)
            }
            let expires = claims.child(ChildKey("exp")).numberValue.map(milliseconds(seconds:))
            return .rules(auth: SecurityRules.authVariable(claims: claims), expires: expires)
        }
        var expires: Int64?
        if let seconds = claims.child(ChildKey("exp")).numberValue {
            expires = milliseconds(seconds: seconds)
            if expires! <= now { throw expired }
        }
        return .rules(auth: SecurityRules.authVariable(claims: claims), expires: expires)
    }

    /// An `exp` claim, in seconds, as milliseconds: an `exp` too far off for an `Int64` (an
    /// unsigned test token can say anything, such as `1e300`) is the farthest time there is.
    static func milliseconds(seconds: Double) -> Int64 {
        let milliseconds = seconds * 1000
        guard milliseconds < 9.2e18 else { return .max }
        guard milliseconds > -9.2e18 else { return .min }
        return Int64(milliseconds)
    }

    /// The payload of an unsigned JWT (`header.payload.` with `"alg":"none"`), or nil.
    static func unsignedClaims(_ token: String) -> Node? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].isEmpty,
            let header = decodeJSON(parts[0]), case .string("none") = header.child(ChildKey("alg")),
            let payload = decodeJSON(parts[1]), payload.children != nil
        else { return nil }
        return payload
    }

    private static func decodeJSON(_ part: Substring) -> Node? {
        var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return try? JSONParser.parseDocument(Array(data))
    }

    /// The `auth` variable the rules see; nil for an admin, whom they do not bind.
    var ruleAuth: Node? {
        if case .rules(let auth, _) = self { return auth }
        return nil
    }

    /// True for an admin (the rules do not bind it).
    public var isAdmin: Bool {
        if case .admin = self { return true }
        return false
    }

    /// When the credential stops being valid, in milliseconds, if it ever does.
    var expires: Int64? {
        if case .rules(_, let expires) = self { return expires }
        return nil
    }
}

extension RequestAuth {
    /// Who this is in the request log: `admin`, a user's uid, or nil when signed out.
    public var logName: String? {
        switch self {
        case .admin: return "admin"
        case .rules(let auth, _):
            if case .string(let uid) = auth.child(ChildKey("uid")) { return uid }
            return nil
        }
    }
}
