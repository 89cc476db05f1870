import Foundation
import HearthCore
import Hummingbird

/// Who a request speaks for: nobody, an admin, or a signed-in user with token claims.
enum RequestAuth: Sendable {
    case anonymous
    case admin
    /// A user; `claims` is the decoded token payload and `expires` its `exp` in milliseconds.
    case user(claims: Node, expires: Int64?)

    static let unparseable = HearthError(.permissionDenied, "Could not parse auth token.")
    static let expired = HearthError(.permissionDenied, "Auth token is expired")

    /// Reads the request's credential (`Authorization: Bearer`, `access_token=` or `auth=`).
    ///
    /// Admin credentials are checked by `admin`. In emulator mode, Firebase's unsigned test
    /// tokens (JWTs with `"alg":"none"`, as the SDKs' `mockUserToken` makes) name a user.
    /// Signed ID tokens are not accepted yet, so any other credential is refused.
    /// - Parameter now: the server time in milliseconds, to refuse expired tokens.
    static func resolve(
        _ request: Request,
        parameters: [String: String],
        admin: AdminCredential,
        now: Int64
    ) throws(HearthError) -> RequestAuth {
        guard let presented = AdminCredential.presented(by: request, parameters: parameters) else { return .anonymous }
        if admin.isAdmin(request, parameters: parameters) { return .admin }
        guard admin.emulator, let claims = unsignedClaims(presented) else { throw unparseable }
        var expires: Int64?
        if let seconds = claims.child(ChildKey("exp")).numberValue {
            expires = Int64(seconds * 1000)
            if expires! <= now { throw expired }
        }
        return .user(claims: claims, expires: expires)
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
        return try? JSONParser.parse(Array(data)).node
    }

    /// When the credential stops being valid, in milliseconds, if it ever does.
    var expires: Int64? {
        if case .user(_, let expires) = self { return expires }
        return nil
    }
}
