import Foundation
import HearthServer
import HearthTesting
import Testing

/// Firebase Auth's REST API on a real server over HTTP: the user endpoints, token refresh,
/// Firebase's error bodies, the admin endpoints and their credential, the JWKS, and the
/// database accepting (and refusing) the ID tokens the server signs.
@Suite("Auth endpoints")
struct AuthEndpointTests {
    static let identity = "/identitytoolkit.googleapis.com/v1/"
    static let owner = ["Authorization": "Bearer owner"]
    static let password = "secret123"

    /// POSTs `body` as JSON to an Identity Toolkit endpoint (`accounts:signUp`, `projects/p/accounts`, …).
    static func post(
        _ server: TestServer, _ endpoint: String, _ body: [String: Any], headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        let data = try JSONSerialization.data(withJSONObject: body)
        return try await server.request(
            "POST", identity + endpoint, body: String(decoding: data, as: UTF8.self),
            headers: headers.merging(["Content-Type": "application/json"]) { first, _ in first })
    }

    /// The JSON object of a response, expecting 200.
    static func object(
        _ result: HTTPResult, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String: Any] {
        #expect(result.status == 200, "\(result.text)", sourceLocation: sourceLocation)
        #expect(result.header("Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
        return try #require(result.json as? [String: Any], "\(result.text)", sourceLocation: sourceLocation)
    }

    /// Checks Firebase's error body: `{"error":{"code":…,"errors":[{"domain":"global","message":…,"reason":"invalid"}],"message":…}}`.
    static func expectError(
        _ result: HTTPResult, _ message: String, status: Int = 400, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == status, "\(result.text)", sourceLocation: sourceLocation)
        let body = result.json as? [String: Any]
        #expect(body?.keys.sorted() == ["error"], "\(result.text)", sourceLocation: sourceLocation)
        let error = body?["error"] as? [String: Any]
        #expect(error?.keys.sorted() == ["code", "errors", "message"], "\(result.text)", sourceLocation: sourceLocation)
        #expect(error?["code"] as? Int == status, sourceLocation: sourceLocation)
        #expect(error?["message"] as? String == message, "\(result.text)", sourceLocation: sourceLocation)
        let errors = error?["errors"] as? [[String: String]]
        #expect(errors == [["domain": "global", "message": message, "reason": "invalid"]], "\(result.text)", sourceLocation: sourceLocation)
    }

    /// Signs up with an email and password and returns the response.
    static func signUp(_ server: TestServer, _ email: String, password: String = password) async throws -> [String: Any] {
        try object(try await post(server, "accounts:signUp", ["email": email, "password": password, "returnSecureToken": true]))
    }

    /// A JWT's payload as JSON (unchecked).
    static func payload(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var text = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func form(_ fields: [(String, String)]) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return fields.map { "\($0)=\($1.addingPercentEncoding(withAllowedCharacters: allowed)!)" }.joined(separator: "&")
    }

    // MARK: - Users

    @Test func signUpSignInLookUpUpdateAndDelete() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "Alice@Example.com")
            #expect(signedUp["kind"] as? String == "identitytoolkit#SignupNewUserResponse")
            let uid = try #require(signedUp["localId"] as? String)
            #expect(signedUp["email"] as? String == "alice@example.com")
            #expect(signedUp["expiresIn"] as? String == "3600")
            #expect((signedUp["refreshToken"] as? String)?.isEmpty == false)
            let idToken = try #require(signedUp["idToken"] as? String)
            #expect(Self.payload(idToken)?["sub"] as? String == uid)
            #expect(Self.payload(idToken)?["aud"] as? String == "hearth")

            let signedIn = try Self.object(try await Self.post(
                server, "accounts:signInWithPassword", ["email": "alice@example.com", "password": Self.password, "returnSecureToken": true]))
            #expect(signedIn["kind"] as? String == "identitytoolkit#VerifyPasswordResponse")
            #expect(signedIn["localId"] as? String == uid)
            #expect(signedIn["registered"] as? Bool == true)
            #expect(signedIn["expiresIn"] as? String == "3600")
            #expect(signedIn["idToken"] is String)
            #expect(signedIn["refreshToken"] is String)

            let lookup = try await Self.post(server, "accounts:lookup", ["idToken": idToken])
            let looked = try Self.object(lookup)
            #expect(looked["kind"] as? String == "identitytoolkit#GetAccountInfoResponse")
            let user = try #require((looked["users"] as? [[String: Any]])?.first)
            #expect(user["localId"] as? String == uid)
            #expect(user["email"] as? String == "alice@example.com")
            #expect(user["emailVerified"] as? Bool == false)
            #expect(user["createdAt"] is String)
            #expect(((user["providerUserInfo"] as? [[String: Any]])?.first?["providerId"]) as? String == "password")
            // The password hash never leaves the server.
            #expect(!lookup.text.contains("scrypt"))

            let renamed = try Self.object(try await Self.post(
                server, "accounts:update", ["idToken": idToken, "displayName": "Alice", "returnSecureToken": true]))
            #expect(renamed["kind"] as? String == "identitytoolkit#SetAccountInfoResponse")
            #expect(renamed["displayName"] as? String == "Alice")
            #expect(renamed["idToken"] == nil)

            let changed = try Self.object(try await Self.post(
                server, "accounts:update", ["idToken": idToken, "password": "new secret", "returnSecureToken": true]))
            let newIDToken = try #require(changed["idToken"] as? String)
            #expect(changed["refreshToken"] is String)
            #expect(changed["expiresIn"] as? String == "3600")
            Self.expectError(
                try await Self.post(server, "accounts:signInWithPassword", ["email": "alice@example.com", "password": Self.password]),
                "INVALID_LOGIN_CREDENTIALS")

            let deleted = try Self.object(try await Self.post(server, "accounts:delete", ["idToken": newIDToken]))
            #expect(deleted["kind"] as? String == "identitytoolkit#DeleteAccountResponse")
            Self.expectError(try await Self.post(server, "accounts:lookup", ["idToken": newIDToken]), "USER_NOT_FOUND")
        }
    }

    @Test func anonymousAndCustomTokenSignIn() async throws {
        try await TestServer.with { server in
            let anonymous = try Self.object(try await Self.post(server, "accounts:signUp", ["returnSecureToken": true]))
            #expect(anonymous["localId"] is String)
            #expect(anonymous["email"] == nil)
            let provider = (Self.payload(anonymous["idToken"] as? String ?? "")?["firebase"] as? [String: Any])?["sign_in_provider"]
            #expect(provider as? String == "anonymous")

            // Test servers run in emulator mode, so unsigned custom tokens (as the Admin SDKs make them for the emulator) work.
            let header = Self.base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
            let claims = Self.base64URL(Data(#"{"aud":"https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit","uid":"custom-1"}"#.utf8))
            let token = "\(header).\(claims)."
            let first = try Self.object(try await Self.post(server, "accounts:signInWithCustomToken", ["token": token]))
            #expect(first["kind"] as? String == "identitytoolkit#VerifyCustomTokenResponse")
            #expect(first["localId"] as? String == "custom-1")
            #expect(first["isNewUser"] as? Bool == true)
            #expect(first["expiresIn"] as? String == "3600")
            let second = try Self.object(try await Self.post(server, "accounts:signInWithCustomToken", ["token": token]))
            #expect(second["isNewUser"] as? Bool == false)
            Self.expectError(try await Self.post(server, "accounts:signInWithCustomToken", ["token": "garbage"]), "INVALID_CUSTOM_TOKEN")
        }
    }

    @Test func refreshTakesAFormOrJSON() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "alice@example.com")
            let uid = try #require(signedUp["localId"] as? String)
            let refreshToken = try #require(signedUp["refreshToken"] as? String)
            let form = ["Content-Type": "application/x-www-form-urlencoded"]
            let refreshed = try Self.object(try await server.request(
                "POST", "/securetoken.googleapis.com/v1/token",
                body: Self.form([("grant_type", "refresh_token"), ("refresh_token", refreshToken)]), headers: form))
            #expect(refreshed["refresh_token"] as? String == refreshToken)
            #expect(refreshed["expires_in"] as? String == "3600")
            #expect(refreshed["token_type"] as? String == "Bearer")
            #expect(refreshed["user_id"] as? String == uid)
            #expect(refreshed["project_id"] as? String == "hearth")
            let idToken = try #require(refreshed["id_token"] as? String)
            #expect(refreshed["access_token"] as? String == idToken)
            #expect(Self.payload(idToken)?["sub"] as? String == uid)
            // The refreshed ID token is good for the account endpoints.
            _ = try Self.object(try await Self.post(server, "accounts:lookup", ["idToken": idToken]))

            let json = try Self.object(try await server.request(
                "POST", "/securetoken.googleapis.com/v1/token",
                body: #"{"grantType":"refresh_token","refreshToken":"\#(refreshToken)"}"#, headers: ["Content-Type": "application/json"]))
            #expect(json["user_id"] as? String == uid)

            Self.expectError(try await server.request(
                "POST", "/securetoken.googleapis.com/v1/token",
                body: Self.form([("grant_type", "password"), ("refresh_token", refreshToken)]), headers: form), "INVALID_GRANT_TYPE")
            Self.expectError(try await server.request(
                "POST", "/securetoken.googleapis.com/v1/token",
                body: Self.form([("grant_type", "refresh_token"), ("refresh_token", "not-a-token")]), headers: form),
                "INVALID_REFRESH_TOKEN")
            // After signing out everywhere, the refresh token is dead (TOKEN_EXPIRED, as Firebase's).
            _ = try Self.object(try await Self.post(server, "accounts:signOut", ["idToken": signedUp["idToken"] as? String ?? ""]))
            Self.expectError(try await server.request(
                "POST", "/securetoken.googleapis.com/v1/token",
                body: Self.form([("grant_type", "refresh_token"), ("refresh_token", refreshToken)]), headers: form),
                "TOKEN_EXPIRED")
        }
    }

    // MARK: - Errors

    @Test func errorsHaveFirebasesShape() async throws {
        try await TestServer.with { server in
            _ = try await Self.signUp(server, "alice@example.com")
            let taken = try await Self.post(server, "accounts:signUp", ["email": "alice@example.com", "password": Self.password])
            Self.expectError(taken, "EMAIL_EXISTS")
            #expect(taken.header("Content-Type")?.hasPrefix("application/json") == true)
            Self.expectError(
                try await Self.post(server, "accounts:signUp", ["email": "bob@example.com", "password": "12345"]),
                "WEAK_PASSWORD : Password should be at least 6 characters")
            Self.expectError(
                try await Self.post(server, "accounts:signUp", ["email": "bob", "password": Self.password]), "INVALID_EMAIL")
            Self.expectError(
                try await Self.post(server, "accounts:signInWithPassword", ["email": "alice@example.com", "password": "wrong one"]),
                "INVALID_LOGIN_CREDENTIALS")
            Self.expectError(
                try await Self.post(server, "accounts:signInWithPassword", ["email": "nobody@example.com", "password": "wrong one"]),
                "INVALID_LOGIN_CREDENTIALS")
            Self.expectError(try await Self.post(server, "accounts:lookup", ["idToken": "garbage"]), "INVALID_ID_TOKEN")
        }
    }

    @Test func aMalformedBodyIsAnInvalidArgument() async throws {
        try await TestServer.with { server in
            for body in [#"{"email": "alice@example.com", "#, "not json", #""a string""#] {
                let result = try await server.request(
                    "POST", Self.identity + "accounts:signUp", body: body, headers: ["Content-Type": "application/json"])
                #expect(result.status == 400, "\(body): \(result.text)")
                let error = (result.json as? [String: Any])?["error"] as? [String: Any]
                #expect(error?["code"] as? Int == 400)
                #expect((error?["message"] as? String)?.hasPrefix("INVALID_ARGUMENT") == true, "\(body): \(result.text)")
            }
            // Nothing was created by any of them.
            let list = try Self.object(try await server.request(
                "GET", Self.identity + "projects/p/accounts:batchGet", headers: Self.owner))
            #expect((list["users"] as? [Any] ?? []).isEmpty)
        }
    }

    @Test func aJSONArrayBodyIsAnInvalidArgument() async throws {
        try await TestServer.with { server in
            let result = try await server.request(
                "POST", Self.identity + "accounts:signUp", body: "[1, 2]", headers: ["Content-Type": "application/json"])
            #expect(result.status == 400, "\(result.text)")
            let error = (result.json as? [String: Any])?["error"] as? [String: Any]
            #expect((error?["message"] as? String)?.hasPrefix("INVALID_ARGUMENT") == true, "\(result.text)")
        }
    }

    // MARK: - Admin

    @Test func adminEndpointsNeedAnAdminCredential() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "alice@example.com")
            let uid = try #require(signedUp["localId"] as? String)
            let user = ["Authorization": "Bearer \(signedUp["idToken"] as? String ?? "")"]
            for headers in [[:], user, ["Authorization": "Bearer not-the-admin-token"]] {
                Self.expectError(
                    try await Self.post(server, "projects/p/accounts", ["localId": "x", "email": "x@example.com"], headers: headers),
                    "INSUFFICIENT_PERMISSION", status: 403)
                Self.expectError(
                    try await Self.post(server, "projects/p/accounts:lookup", ["localId": [uid]], headers: headers),
                    "INSUFFICIENT_PERMISSION", status: 403)
                Self.expectError(
                    try await Self.post(server, "projects/p/accounts:update", ["localId": uid, "disableUser": true], headers: headers),
                    "INSUFFICIENT_PERMISSION", status: 403)
                Self.expectError(
                    try await Self.post(server, "projects/p/accounts:delete", ["localId": uid], headers: headers),
                    "INSUFFICIENT_PERMISSION", status: 403)
                Self.expectError(
                    try await server.request("GET", Self.identity + "projects/p/accounts:batchGet", headers: headers),
                    "INSUFFICIENT_PERMISSION", status: 403)
            }
            // Nothing changed: Alice still signs in.
            _ = try Self.object(try await Self.post(
                server, "accounts:signInWithPassword", ["email": "alice@example.com", "password": Self.password]))
            // The configured admin token works as well as the emulator's `owner`.
            _ = try Self.object(try await server.request(
                "GET", Self.identity + "projects/p/accounts:batchGet", headers: ["Authorization": "Bearer \(TestServer.adminToken)"]))
        }
    }

    @Test func adminsCreateLookUpListUpdateAndDeleteAccounts() async throws {
        try await TestServer.with { server in
            for index in [3, 1, 2] {
                let created = try Self.object(try await Self.post(
                    server, "projects/p/accounts",
                    ["localId": "admin-\(index)", "email": "User\(index)@Example.com", "password": Self.password, "displayName": "User \(index)"],
                    headers: Self.owner))
                #expect(created["localId"] as? String == "admin-\(index)")
                #expect(created["email"] as? String == "user\(index)@example.com")
                #expect(created["kind"] as? String == "identitytoolkit#SignupNewUserResponse")
            }
            Self.expectError(
                try await Self.post(server, "projects/p/accounts", ["localId": "admin-1"], headers: Self.owner), "DUPLICATE_LOCAL_ID")

            let lookup = try Self.object(try await Self.post(
                server, "projects/p/accounts:lookup", ["localId": ["admin-2"], "email": ["USER3@example.com"]], headers: Self.owner))
            let found = (lookup["users"] as? [[String: Any]] ?? []).compactMap { $0["localId"] as? String }
            #expect(found == ["admin-2", "admin-3"])

            let batch = Self.identity + "projects/p/accounts:batchGet"
            let first = try Self.object(try await server.request("GET", batch + "?maxResults=2", headers: Self.owner))
            #expect((first["users"] as? [[String: Any]])?.compactMap { $0["localId"] as? String } == ["admin-1", "admin-2"])
            #expect(first["nextPageToken"] as? String == "admin-2")
            let second = try Self.object(try await server.request(
                "GET", batch + "?maxResults=2&nextPageToken=admin-2", headers: Self.owner))
            #expect((second["users"] as? [[String: Any]])?.compactMap { $0["localId"] as? String } == ["admin-3"])
            #expect(second["nextPageToken"] == nil)

            let updated = try Self.object(try await Self.post(
                server, "projects/p/accounts:update",
                ["localId": "admin-1", "customAttributes": #"{"role":"admin","level":2}"#, "emailVerified": true], headers: Self.owner))
            #expect(updated["localId"] as? String == "admin-1")
            let after = try Self.object(try await Self.post(
                server, "projects/p/accounts:lookup", ["localId": ["admin-1"]], headers: Self.owner))
            let record = try #require((after["users"] as? [[String: Any]])?.first)
            #expect(record["emailVerified"] as? Bool == true)
            let attributes = try #require((record["customAttributes"] as? String)?.data(using: .utf8))
            let claims = try JSONSerialization.jsonObject(with: attributes) as? [String: Any]
            #expect(claims?["role"] as? String == "admin")
            #expect(claims?["level"] as? Int == 2)
            // The claims are in the account's next ID token.
            let signedIn = try Self.object(try await Self.post(
                server, "accounts:signInWithPassword", ["email": "user1@example.com", "password": Self.password]))
            #expect(Self.payload(signedIn["idToken"] as? String ?? "")?["role"] as? String == "admin")
            #expect(Self.payload(signedIn["idToken"] as? String ?? "")?["email_verified"] as? Bool == true)
            Self.expectError(
                try await Self.post(
                    server, "projects/p/accounts:update", ["localId": "admin-1", "customAttributes": #"{"sub":"x"}"#], headers: Self.owner),
                #"INVALID_CLAIMS : Developer claim "sub" is reserved"#)

            let deleted = try Self.object(try await Self.post(
                server, "projects/p/accounts:delete", ["localId": "admin-1"], headers: Self.owner))
            #expect(deleted["kind"] as? String == "identitytoolkit#DeleteAccountResponse")
            let gone = try Self.object(try await Self.post(
                server, "projects/p/accounts:lookup", ["localId": ["admin-1"]], headers: Self.owner))
            #expect((gone["users"] as? [Any] ?? []).isEmpty)
            Self.expectError(
                try await Self.post(server, "projects/p/accounts:delete", ["localId": "admin-1"], headers: Self.owner), "USER_NOT_FOUND")
            Self.expectError(
                try await Self.post(
                    server, "accounts:signInWithPassword", ["email": "user1@example.com", "password": Self.password]),
                "INVALID_LOGIN_CREDENTIALS")
        }
    }

    // MARK: - Keys

    @Test func theJWKSHoldsTheKeyThatSignsIDTokens() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.signUp(server, "alice@example.com")
            let idToken = try #require(signedUp["idToken"] as? String)
            let headerPart = try #require(idToken.split(separator: ".").first)
            let headerData = try #require(Data(base64Encoded: String(headerPart) + String(repeating: "=", count: (4 - headerPart.count % 4) % 4)))
            let header = try #require(try JSONSerialization.jsonObject(with: headerData) as? [String: Any])
            #expect(header["alg"] as? String == "RS256")
            for path in ["/.well-known/jwks.json", "/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"] {
                let jwks = try Self.object(try await server.request("GET", path))
                let keys = try #require(jwks["keys"] as? [[String: Any]], "\(path)")
                #expect(keys.count == 1)
                #expect(keys.first?["kid"] as? String == header["kid"] as? String)
                #expect(keys.first?["kty"] as? String == "RSA")
                #expect(keys.first?["alg"] as? String == "RS256")
                #expect(keys.first?["e"] as? String == "AQAB")
                #expect((keys.first?["n"] as? String)?.count ?? 0 > 300)
                #expect(keys.first?["d"] == nil)
            }
        }
    }

    // MARK: - The database and Hearth's ID tokens

    static let ownDataRules = #"{"rules":{"users":{"$uid":{".read":"auth.uid === $uid",".write":"auth.uid === $uid"}}}}"#

    @Test func theDatabaseAcceptsTheServersIDTokens() async throws {
        try await TestServer.with(configure: { $0.defaultRules = Self.ownDataRules }) { server in
            let signedUp = try await Self.signUp(server, "alice@example.com")
            let uid = try #require(signedUp["localId"] as? String)
            let idToken = try #require(signedUp["idToken"] as? String)
            let bearer = ["Authorization": "Bearer \(idToken)"]

            let own = try await server.request("PUT", "/users/\(uid).json", body: #"{"name":"Alice"}"#, headers: bearer)
            #expect(own.status == 200, "\(own.text)")
            let read = try await server.request("GET", "/users/\(uid)/name.json", headers: bearer)
            #expect(read.status == 200)
            #expect(read.text == #""Alice""#)
            let other = try await server.request("PUT", "/users/someone-else.json", body: #"{"name":"x"}"#, headers: bearer)
            #expect(other.status == 401)
            #expect(other.errorText == "Permission denied")
            let signedOut = try await server.request("PUT", "/users/\(uid).json", body: #"{"name":"x"}"#)
            #expect(signedOut.status == 401)
            #expect(signedOut.errorText == "Permission denied")
            // The token as the `auth` query parameter.
            let viaQuery = try await server.request("PUT", "/users/\(uid)/city.json?auth=\(idToken)", body: #""Paris""#)
            #expect(viaQuery.status == 200, "\(viaQuery.text)")
            #expect(try await server.request("GET", "/users/\(uid)/city.json?auth=\(idToken)").text == #""Paris""#)
        }
    }

    @Test func theDatabaseRefusesTamperedAndForeignTokens() async throws {
        try await TestServer.with(configure: { $0.defaultRules = Self.ownDataRules }) { server in
            let signedUp = try await Self.signUp(server, "alice@example.com")
            let uid = try #require(signedUp["localId"] as? String)
            let idToken = try #require(signedUp["idToken"] as? String)

            // Claiming to be someone else: the signature no longer matches.
            let parts = idToken.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            var claims = try #require(Self.payload(idToken))
            claims["sub"] = "mallory"
            claims["user_id"] = "mallory"
            let forged = "\(parts[0]).\(Self.base64URL(try JSONSerialization.data(withJSONObject: claims))).\(parts[2])"
            let tampered = try await server.request(
                "PUT", "/users/mallory.json", body: "1", headers: ["Authorization": "Bearer \(forged)"])
            #expect(tampered.status == 401)
            #expect(tampered.errorText == "Could not parse auth token.")
            let viaQuery = try await server.request("PUT", "/users/mallory.json?auth=\(forged)", body: "1")
            #expect(viaQuery.status == 401)
            #expect(viaQuery.errorText == "Could not parse auth token.")
            let garbage = try await server.request("GET", "/users/\(uid).json", headers: ["Authorization": "Bearer garbage"])
            #expect(garbage.status == 401)
            #expect(garbage.errorText == "Could not parse auth token.")

            // A real token from another Hearth server (same project, another key).
            try await TestServer.with { other in
                let elsewhere = try await Self.signUp(other, "mallory@example.com")
                let foreignUID = try #require(elsewhere["localId"] as? String)
                let foreignToken = try #require(elsewhere["idToken"] as? String)
                let foreign = try await server.request(
                    "PUT", "/users/\(foreignUID).json", body: "1", headers: ["Authorization": "Bearer \(foreignToken)"])
                #expect(foreign.status == 401)
                #expect(foreign.errorText == "Could not parse auth token.")
            }
            let stored = try await server.request("GET", "/users.json", headers: TestServer.adminHeaders)
            #expect(stored.text == "null")
        }
    }

    @Test func theDatabaseRefusesAnExpiredToken() async throws {
        let clock = TestClock(start: Int64(Date().timeIntervalSince1970 * 1000))
        try await TestServer.with(configure: {
            $0.defaultRules = Self.ownDataRules
            $0.clock = { clock.now }
        }) { server in
            let signedUp = try await Self.signUp(server, "alice@example.com")
            let uid = try #require(signedUp["localId"] as? String)
            let bearer = ["Authorization": "Bearer \(signedUp["idToken"] as? String ?? "")"]
            clock.advance(by: 3599 * 1000)
            let fresh = try await server.request("PUT", "/users/\(uid).json", body: "1", headers: bearer)
            #expect(fresh.status == 200, "\(fresh.text)")
            clock.advance(by: 2 * 1000)
            let expired = try await server.request("PUT", "/users/\(uid).json", body: "2", headers: bearer)
            #expect(expired.status == 401)
            #expect(expired.errorText == "Auth token is expired")
            // The account endpoints agree.
            Self.expectError(
                try await Self.post(server, "accounts:lookup", ["idToken": signedUp["idToken"] as? String ?? ""]), "TOKEN_EXPIRED")
            #expect(try await server.request("GET", "/users/\(uid).json", headers: TestServer.adminHeaders).text == "1")
        }
    }
}
