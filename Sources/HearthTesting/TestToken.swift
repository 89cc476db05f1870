import Foundation

/// Credentials for tests against an emulator-mode server.
public enum TestToken {
    /// An unsigned ID token (`"alg":"none"`) like the Firebase SDKs' `mockUserToken`, which
    /// emulator-mode servers accept as the user `uid`.
    /// - Parameters:
    ///   - name: the `name` claim, if any.
    ///   - claims: extra claims (custom claims such as `["admin": true]`).
    ///   - expiresIn: seconds from now until `exp`.
    public static func unsigned(
        uid: String, name: String? = nil, claims: [String: any Sendable] = [:], expiresIn: Int = 3600
    ) -> String {
        let now = Int(Date().timeIntervalSince1970)
        var payload: [String: Any] = [
            "iss": "https://securetoken.google.com/fake-project-id", "aud": "fake-project-id",
            "iat": now, "exp": now + expiresIn, "auth_time": now, "sub": uid, "user_id": uid,
            "firebase": ["sign_in_provider": "custom", "identities": [String: Any]()],
        ]
        if let name { payload["name"] = name }
        for (key, value) in claims { payload[key] = value }
        return part(["alg": "none", "typ": "JWT"]) + "." + part(payload) + "."
    }

    private static func part(_ value: [String: Any]) -> String {
        let data = try! JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
        return data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
