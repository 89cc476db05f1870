import Foundation
import HearthServer
import HearthStore
import HearthTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

/// Identity Toolkit's older v3 API (`/www.googleapis.com/identitytoolkit/v3/relyingparty/…`),
/// as SDK 8 speaks it, on a real server over HTTP: each method's answer fields and `kind`, its
/// refusals in Google's error body (a refused request changes nothing), a failed password
/// sign-in answered `INVALID_PASSWORD`, and unknown paths under the Google API hosts.
@Suite("Identity Toolkit v3")
struct IdentityToolkitV3Tests {
    static let relyingParty = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"
    static let password = AuthEndpointTests.password
    static let owner = AuthEndpointTests.owner
    static let invalidPassword = "INVALID_PASSWORD : The password is invalid or the user does not have a password."

    /// POSTs `body` as JSON to a v3 method, with an API key as SDK 8 sends it.
    static func post(
        _ server: TestServer, _ method: String, _ body: [String: Any], headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        let data = try JSONSerialization.data(withJSONObject: body)
        return try await server.request(
            "POST", relyingParty + method + "?key=fake-api-key", body: String(decoding: data, as: UTF8.self),
            headers: headers.merging(["Content-Type": "application/json"]) { first, _ in first })
    }

    /// The answer of a v3 method that must succeed.
    static func call(
        _ server: TestServer, _ method: String, _ body: [String: Any], headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        try AuthEndpointTests.object(try await post(server, method, body, headers: headers), sourceLocation: sourceLocation)
    }

    static func expectError(
        _ result: HTTPResult, _ message: String, status: Int = 400, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        AuthEndpointTests.expectError(result, message, status: status, sourceLocation: sourceLocation)
    }

    /// Refreshes a session at securetoken, as SDK 8 does (a form).
    static func refresh(_ server: TestServer, _ refreshToken: String) async throws -> HTTPResult {
        try await server.request(
            "POST", "/securetoken.googleapis.com/v1/token?key=fake-api-key",
            body: AuthEndpointTests.form([("grant_type", "refresh_token"), ("refresh_token", refreshToken)]),
            headers: ["Content-Type": "application/x-www-form-urlencoded"])
    }

    /// The accounts with `emails`, looked up by an admin (v3's `getAccountInfo` by `email`).
    static func accounts(_ server: TestServer, _ emails: [String]) async throws -> [[String: Any]] {
        try await call(server, "getAccountInfo", ["email": emails], headers: owner)["users"] as? [[String: Any]] ?? []
    }

    /// The newest code the emulator listed for `email` of `type`.
    static func code(_ server: TestServer, _ type: String, email: String) async throws -> [String: Any] {
        let listed = try AuthEndpointTests.object(try await server.request("GET", "/emulator/v1/projects/hearth/oobCodes"))
        let codes = (listed["oobCodes"] as? [[String: Any]] ?? []).filter { $0["requestType"] as? String == type && $0["email"] as? String == email }
        return try #require(codes.last, "no \(type) code for \(email): \(listed)")
    }

    // MARK: - Accounts

    @Test func signUpSignInLookUpUpdateAndDelete() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.call(
                server, "signupNewUser", ["email": "Vera@Example.com", "password": Self.password, "returnSecureToken": true])
            #expect(signedUp["kind"] as? String == "identitytoolkit#SignupNewUserResponse")
            #expect(signedUp["email"] as? String == "vera@example.com")
            #expect(signedUp["expiresIn"] as? String == "3600")
            #expect(signedUp["refreshToken"] is String)
            let uid = try #require(signedUp["localId"] as? String)
            let idToken = try #require(signedUp["idToken"] as? String)
            #expect(AuthEndpointTests.payload(idToken)?["sub"] as? String == uid)

            let anonymous = try await Self.call(server, "signupNewUser", ["returnSecureToken": true])
            #expect(anonymous["kind"] as? String == "identitytoolkit#SignupNewUserResponse")
            #expect(anonymous["idToken"] is String && anonymous["email"] == nil)

            let signedIn = try await Self.call(
                server, "verifyPassword", ["email": "vera@example.com", "password": Self.password, "returnSecureToken": true])
            #expect(signedIn["kind"] as? String == "identitytoolkit#VerifyPasswordResponse")
            #expect(signedIn["localId"] as? String == uid)
            #expect(signedIn["registered"] as? Bool == true)
            #expect(signedIn["email"] as? String == "vera@example.com")
            #expect(signedIn["idToken"] is String && signedIn["refreshToken"] is String && signedIn["expiresIn"] as? String == "3600")

            let info = try await Self.call(server, "getAccountInfo", ["idToken": idToken])
            #expect(info["kind"] as? String == "identitytoolkit#GetAccountInfoResponse")
            let user = try #require((info["users"] as? [[String: Any]])?.first)
            #expect(user["localId"] as? String == uid)
            #expect(user["email"] as? String == "vera@example.com")
            #expect(user["emailVerified"] as? Bool == false)
            #expect(user["createdAt"] is String && user["lastLoginAt"] is String)
            #expect((user["providerUserInfo"] as? [[String: Any]])?.first?["providerId"] as? String == "password")

            let renamed = try await Self.call(
                server, "setAccountInfo",
                ["idToken": idToken, "displayName": "Vera", "photoUrl": "https://example.com/v.png", "returnSecureToken": true])
            #expect(renamed["kind"] as? String == "identitytoolkit#SetAccountInfoResponse")
            #expect(renamed["localId"] as? String == uid)
            #expect(renamed["displayName"] as? String == "Vera")
            #expect(renamed["photoUrl"] as? String == "https://example.com/v.png")
            #expect(renamed["idToken"] == nil)
            // SDK 8's `updateProfile({photoURL: null})`.
            let cleared = try await Self.call(
                server, "setAccountInfo", ["idToken": idToken, "deleteAttribute": ["PHOTO_URL"], "returnSecureToken": true])
            #expect(cleared["photoUrl"] == nil && cleared["displayName"] as? String == "Vera")

            // A new password ends the other sessions and hands back new tokens.
            let changed = try await Self.call(server, "setAccountInfo", ["idToken": idToken, "password": "new secret", "returnSecureToken": true])
            let newToken = try #require(changed["idToken"] as? String)
            #expect(changed["refreshToken"] is String && changed["expiresIn"] as? String == "3600")
            _ = try await Self.call(server, "verifyPassword", ["email": "vera@example.com", "password": "new secret", "returnSecureToken": true])

            let deleted = try await Self.call(server, "deleteAccount", ["idToken": newToken])
            #expect(deleted.keys.sorted() == ["kind"])
            #expect(deleted["kind"] as? String == "identitytoolkit#DeleteAccountResponse")
            Self.expectError(try await Self.post(server, "getAccountInfo", ["idToken": newToken]), "USER_NOT_FOUND")
        }
    }

    @Test func aFailedPasswordSignInIsInvalidPasswordWhetherOrNotTheAddressHasAnAccount() async throws {
        try await TestServer.with { server in
            _ = try await Self.call(server, "signupNewUser", ["email": "walt@example.com", "password": Self.password, "returnSecureToken": true])
            let wrongPassword = try await Self.post(server, "verifyPassword", ["email": "walt@example.com", "password": "guess1234"])
            let unknownAddress = try await Self.post(server, "verifyPassword", ["email": "nobody@example.com", "password": "guess1234"])
            // SDK 8 knows INVALID_PASSWORD (`auth/wrong-password`), not INVALID_LOGIN_CREDENTIALS,
            // and both answers are the same body: neither tells whether the address has an account.
            Self.expectError(wrongPassword, Self.invalidPassword)
            Self.expectError(unknownAddress, Self.invalidPassword)
            #expect(wrongPassword.text == unknownAddress.text)
            // v1 answers as before.
            AuthEndpointTests.expectError(
                try await AuthEndpointTests.post(server, "accounts:signInWithPassword", ["email": "walt@example.com", "password": "guess1234"]),
                "INVALID_LOGIN_CREDENTIALS")

            Self.expectError(try await Self.post(server, "verifyPassword", ["password": Self.password]), "INVALID_EMAIL")
            Self.expectError(try await Self.post(server, "verifyPassword", ["email": "walt@example.com"]), "MISSING_PASSWORD")
        }
        // Without email enumeration protection, v3 answers as v1 does: which of the two it was.
        try await TestServer.with(configure: { $0.emailEnumerationProtection = false }) { server in
            _ = try await Self.call(server, "signupNewUser", ["email": "walt@example.com", "password": Self.password])
            Self.expectError(try await Self.post(server, "verifyPassword", ["email": "walt@example.com", "password": "guess1234"]), Self.invalidPassword)
            Self.expectError(try await Self.post(server, "verifyPassword", ["email": "nobody@example.com", "password": "guess1234"]), "EMAIL_NOT_FOUND")
        }
    }

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.call(
                server, "signupNewUser", ["email": "xena@example.com", "password": Self.password, "returnSecureToken": true])
            let idToken = try #require(signedUp["idToken"] as? String)

            Self.expectError(try await Self.post(server, "signupNewUser", ["email": "yuri@example.com"]), "MISSING_PASSWORD")
            Self.expectError(try await Self.post(server, "signupNewUser", ["password": Self.password]), "MISSING_EMAIL")
            Self.expectError(try await Self.post(server, "signupNewUser", ["email": "not an address", "password": Self.password]), "INVALID_EMAIL")
            Self.expectError(
                try await Self.post(server, "signupNewUser", ["email": "yuri@example.com", "password": "123"]),
                "WEAK_PASSWORD : Password should be at least 6 characters")
            Self.expectError(try await Self.post(server, "signupNewUser", ["email": "xena@example.com", "password": Self.password]), "EMAIL_EXISTS")
            let notJSON = try await server.request(
                "POST", Self.relyingParty + "signupNewUser", body: "email=yuri@example.com", headers: ["Content-Type": "application/json"])
            Self.expectError(notJSON, "INVALID_ARGUMENT : the request body must be a JSON object")
            #expect(try await Self.accounts(server, ["yuri@example.com", "not an address"]).isEmpty)

            for method in ["getAccountInfo", "deleteAccount"] {
                Self.expectError(try await Self.post(server, method, ["idToken": "not-a-token"]), "INVALID_ID_TOKEN")
                Self.expectError(try await Self.post(server, method, [:]), "INVALID_ID_TOKEN")
            }
            Self.expectError(try await Self.post(server, "setAccountInfo", ["idToken": "not-a-token", "displayName": "Mallory"]), "INVALID_ID_TOKEN")
            Self.expectError(try await Self.post(server, "setAccountInfo", ["idToken": idToken, "email": "not an address"]), "INVALID_EMAIL")
            Self.expectError(
                try await Self.post(server, "setAccountInfo", ["idToken": idToken, "password": "123"]),
                "WEAK_PASSWORD : Password should be at least 6 characters")
            let xena = try #require(try await Self.accounts(server, ["xena@example.com"]).first)
            #expect(xena["displayName"] == nil && xena["email"] as? String == "xena@example.com")
            _ = try await Self.call(server, "verifyPassword", ["email": "xena@example.com", "password": Self.password])

            Self.expectError(try await Self.post(server, "verifyCustomToken", [:]), "INVALID_CUSTOM_TOKEN")
            Self.expectError(try await Self.post(server, "verifyCustomToken", ["token": "garbage"]), "INVALID_CUSTOM_TOKEN")
            Self.expectError(try await Self.post(server, "verifyAssertion", ["returnIdpCredential": true]), "MISSING_REQUEST_URI")
            // A method takes the HTTP method it is called with in v3.
            Self.expectError(try await server.request("GET", Self.relyingParty + "verifyPassword"), "METHOD_NOT_ALLOWED", status: 405)
        }
    }

    @Test func customTokensAndWhichMethodsAnAddressHas() async throws {
        try await TestServer.with { server in
            // Test servers run in emulator mode: unsigned custom tokens work, as the Admin SDKs make them for the emulator.
            let header = AuthEndpointTests.base64URL(Data(#"{"alg":"none","typ":"JWT"}"#.utf8))
            let claims = AuthEndpointTests.base64URL(Data(
                #"{"aud":"https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit","uid":"v3-custom"}"#.utf8))
            let custom = try await Self.call(server, "verifyCustomToken", ["token": "\(header).\(claims).", "returnSecureToken": true])
            #expect(custom["kind"] as? String == "identitytoolkit#VerifyCustomTokenResponse")
            #expect(custom["localId"] as? String == "v3-custom")
            #expect(custom["isNewUser"] as? Bool == true)
            #expect(custom["idToken"] is String && custom["refreshToken"] is String && custom["expiresIn"] as? String == "3600")

            _ = try await Self.call(server, "signupNewUser", ["email": "zoe@example.com", "password": Self.password])
            // SDK 8's fetchSignInMethodsForEmail: under email enumeration protection only an
            // admin is told; anyone else gets the answer's kind alone (SDK 8 reads no methods).
            for identifier in ["zoe@example.com", "nobody@example.com"] {
                let hidden = try await Self.call(server, "createAuthUri", ["identifier": identifier, "continueUri": "http://localhost/"])
                #expect(hidden.keys.sorted() == ["kind"] && hidden["kind"] as? String == "identitytoolkit#CreateAuthUriResponse")
            }
            let known = try await Self.call(
                server, "createAuthUri", ["identifier": "zoe@example.com", "continueUri": "http://localhost/"], headers: Self.owner)
            #expect(known["kind"] as? String == "identitytoolkit#CreateAuthUriResponse")
            #expect(known["registered"] as? Bool == true)
            #expect(known["allProviders"] as? [String] == ["password"])
            #expect(known["signinMethods"] as? [String] == ["password"])
            let unknown = try await Self.call(
                server, "createAuthUri", ["identifier": "nobody@example.com", "continueUri": "http://localhost/"], headers: Self.owner)
            #expect(unknown["registered"] as? Bool == false)
            #expect(unknown["signinMethods"] == nil)
        }
    }

    // MARK: - Emailed codes

    @Test func emailedCodesVerifyResetChangeAndSignIn() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.call(
                server, "signupNewUser", ["email": "abe@example.com", "password": Self.password, "returnSecureToken": true])
            let idToken = try #require(signedUp["idToken"] as? String)

            // Verification: sent, checked (resetPassword with only the code), applied (setAccountInfo).
            let sent = try await Self.call(server, "getOobConfirmationCode", ["requestType": "VERIFY_EMAIL", "idToken": idToken])
            #expect(sent["kind"] as? String == "identitytoolkit#GetOobConfirmationCodeResponse")
            #expect(sent["email"] as? String == "abe@example.com")
            #expect(sent["oobCode"] == nil)
            let verify = try #require(try await Self.code(server, "VERIFY_EMAIL", email: "abe@example.com")["oobCode"] as? String)
            let checked = try await Self.call(server, "resetPassword", ["oobCode": verify])
            #expect(checked["kind"] as? String == "identitytoolkit#ResetPasswordResponse")
            #expect(checked["requestType"] as? String == "VERIFY_EMAIL")
            #expect(checked["email"] as? String == "abe@example.com")
            let applied = try await Self.call(server, "setAccountInfo", ["oobCode": verify])
            #expect(applied["kind"] as? String == "identitytoolkit#SetAccountInfoResponse")
            #expect(applied["email"] as? String == "abe@example.com")
            #expect(applied["emailVerified"] as? Bool == true)
            Self.expectError(try await Self.post(server, "setAccountInfo", ["oobCode": verify]), "INVALID_OOB_CODE")

            // Password reset.
            let reset = try await Self.call(server, "getOobConfirmationCode", ["requestType": "PASSWORD_RESET", "email": "abe@example.com"])
            #expect(reset["email"] as? String == "abe@example.com")
            let resetCode = try #require(try await Self.code(server, "PASSWORD_RESET", email: "abe@example.com")["oobCode"] as? String)
            #expect(try await Self.call(server, "resetPassword", ["oobCode": resetCode])["requestType"] as? String == "PASSWORD_RESET")
            Self.expectError(
                try await Self.post(server, "resetPassword", ["oobCode": resetCode, "newPassword": "123"]),
                "WEAK_PASSWORD : Password should be at least 6 characters")
            let done = try await Self.call(server, "resetPassword", ["oobCode": resetCode, "newPassword": "reset secret"])
            #expect(done["email"] as? String == "abe@example.com")
            Self.expectError(try await Self.post(server, "resetPassword", ["oobCode": resetCode, "newPassword": "again secret"]), "INVALID_OOB_CODE")
            let signedIn = try await Self.call(server, "verifyPassword", ["email": "abe@example.com", "password": "reset secret"])
            let freshToken = try #require(signedIn["idToken"] as? String)

            // An email change, asked for by v3's older name NEW_EMAIL_ACCEPT (v1's VERIFY_AND_CHANGE_EMAIL).
            _ = try await Self.call(
                server, "getOobConfirmationCode", ["requestType": "NEW_EMAIL_ACCEPT", "idToken": freshToken, "newEmail": "abe2@example.com"])
            let change = try await Self.code(server, "VERIFY_AND_CHANGE_EMAIL", email: "abe@example.com")
            #expect(change["newEmail"] as? String == "abe2@example.com")
            let changeCode = try #require(change["oobCode"] as? String)
            let inspected = try await Self.call(server, "resetPassword", ["oobCode": changeCode])
            #expect(inspected["requestType"] as? String == "VERIFY_AND_CHANGE_EMAIL")
            #expect(inspected["newEmail"] as? String == "abe2@example.com")
            #expect(try await Self.call(server, "setAccountInfo", ["oobCode": changeCode])["email"] as? String == "abe2@example.com")

            // Sign-in by link: a new account on first use.
            let link = try await Self.call(
                server, "getOobConfirmationCode",
                ["requestType": "EMAIL_SIGNIN", "email": "cleo@example.com", "continueUrl": "http://localhost/done", "canHandleCodeInApp": true])
            #expect(link["email"] as? String == "cleo@example.com")
            let linkCode = try #require(try await Self.code(server, "EMAIL_SIGNIN", email: "cleo@example.com")["oobCode"] as? String)
            Self.expectError(try await Self.post(server, "emailLinkSignin", ["email": "cleo@example.com"]), "MISSING_OOB_CODE")
            let linked = try await Self.call(server, "emailLinkSignin", ["email": "cleo@example.com", "oobCode": linkCode, "returnSecureToken": true])
            #expect(linked["kind"] as? String == "identitytoolkit#EmailLinkSigninResponse")
            #expect(linked["email"] as? String == "cleo@example.com")
            #expect(linked["isNewUser"] as? Bool == true)
            #expect(linked["idToken"] is String && linked["refreshToken"] is String)

            Self.expectError(try await Self.post(server, "getOobConfirmationCode", ["requestType": "BOGUS", "email": "abe2@example.com"]), "INVALID_REQ_TYPE")
            Self.expectError(try await Self.post(server, "getOobConfirmationCode", ["requestType": "PASSWORD_RESET"]), "MISSING_EMAIL")
            Self.expectError(try await Self.post(server, "resetPassword", [:]), "MISSING_OOB_CODE")
            Self.expectError(try await Self.post(server, "resetPassword", ["oobCode": "made-up"]), "INVALID_OOB_CODE")
        }
    }

    // MARK: - The rest of v3

    @Test func signOutUserEndsSessions() async throws {
        try await TestServer.with { server in
            let signedUp = try await Self.call(
                server, "signupNewUser", ["email": "dora@example.com", "password": Self.password, "returnSecureToken": true])
            let uid = try #require(signedUp["localId"] as? String)
            let refreshToken = try #require(signedUp["refreshToken"] as? String)
            let out = try await Self.call(
                server, "signOutUser", ["idToken": try #require(signedUp["idToken"] as? String), "refreshToken": refreshToken])
            #expect(out.keys.sorted() == ["localId"] && out["localId"] as? String == uid)
            // That session is gone (as after v1's accounts:signOut with a refresh token).
            Self.expectError(try await Self.refresh(server, refreshToken), "INVALID_REFRESH_TOKEN")

            // An admin names the account, and every session of it ends; anyone else needs its ID token.
            let again = try await Self.call(server, "verifyPassword", ["email": "dora@example.com", "password": Self.password])
            let otherSession = try #require(again["refreshToken"] as? String)
            Self.expectError(try await Self.post(server, "signOutUser", ["localId": uid]), "INVALID_ID_TOKEN")
            #expect(try await Self.refresh(server, otherSession).status == 200)
            #expect(try await Self.call(server, "signOutUser", ["localId": uid], headers: Self.owner)["localId"] as? String == uid)
            Self.expectError(try await Self.refresh(server, otherSession), "TOKEN_EXPIRED")
        }
    }

    @Test func projectConfigAndPhoneSignIn() async throws {
        try await TestServer.with { server in
            // SDK 8 asks with GET, before a popup or redirect sign-in, and checks its page's host.
            let config = try AuthEndpointTests.object(try await server.request(
                "GET", Self.relyingParty + "getProjectConfig?key=fake-api-key&cb=1", headers: ["Origin": "http://app.test:8080"]))
            #expect(config["projectId"] as? String == "hearth")
            #expect(config["authorizedDomains"] as? [String] == ["127.0.0.1", "app.test", "localhost"])
            let v1 = try AuthEndpointTests.object(try await server.request("GET", "/identitytoolkit.googleapis.com/v1/projects?key=k"))
            #expect(v1["authorizedDomains"] as? [String] == ["127.0.0.1", "localhost"])

            // Hearth has no phone sign-in: refused as a sign-in method that is not enabled.
            let refusal = "OPERATION_NOT_ALLOWED : phone sign-in is not available on this server"
            Self.expectError(try await server.request("GET", Self.relyingParty + "getRecaptchaParam?key=k&cb=1"), refusal)
            Self.expectError(try await Self.post(server, "sendVerificationCode", ["phoneNumber": "+15555550100", "recaptchaToken": "t"]), refusal)
            Self.expectError(try await Self.post(server, "verifyPhoneNumber", ["sessionInfo": "s", "code": "123456"]), refusal)
        }
        // Outside emulator mode, the configured domains.
        try await TestServer.with(configure: {
            $0.emulator = false
            $0.authorizedDomains = ["app.example.com"]
        }) { server in
            let config = try AuthEndpointTests.object(try await server.request(
                "GET", Self.relyingParty + "getProjectConfig?key=k", headers: ["Origin": "http://evil.test"]))
            let domains = try #require(config["authorizedDomains"] as? [String])
            #expect(domains.contains("app.example.com") && domains.contains("localhost") && !domains.contains("evil.test"))
        }
    }

    @Test func adminsDownloadAndUploadAccounts() async throws {
        try await TestServer.with { server in
            let uploaded = try await Self.call(
                server, "uploadAccount",
                ["users": [["localId": "u1", "email": "u1@example.com"], ["localId": "u2", "email": "u2@example.com"]]], headers: Self.owner)
            #expect(uploaded["kind"] as? String == "identitytoolkit#UploadAccountResponse")
            #expect(uploaded["error"] == nil)
            let first = try await Self.call(server, "downloadAccount", ["maxResults": 1], headers: Self.owner)
            #expect(first["kind"] as? String == "identitytoolkit#DownloadAccountResponse")
            #expect((first["users"] as? [[String: Any]])?.count == 1)
            let next = try #require(first["nextPageToken"] as? String)
            let second = try await Self.call(server, "downloadAccount", ["maxResults": 10, "nextPageToken": next], headers: Self.owner)
            let emails = ((first["users"] as? [[String: Any]] ?? []) + (second["users"] as? [[String: Any]] ?? [])).compactMap { $0["email"] as? String }
            #expect(emails.sorted() == ["u1@example.com", "u2@example.com"])

            Self.expectError(try await Self.post(server, "downloadAccount", [:]), "INSUFFICIENT_PERMISSION", status: 403)
            Self.expectError(
                try await Self.post(server, "uploadAccount", ["users": [["localId": "u3", "email": "u3@example.com"]]]),
                "INSUFFICIENT_PERMISSION", status: 403)
            #expect(try await Self.accounts(server, ["u3@example.com"]).isEmpty)
        }
    }

    // MARK: - Unknown paths

    @Test func unknownPathsUnderGoogleAPIHostsAnswerGooglesNotFound() async throws {
        try await TestServer.with { server in
            let before = try await server.dump()
            for (method, path) in [
                ("POST", Self.relyingParty + "getPublicKeys"),
                ("POST", "/www.googleapis.com/identitytoolkit/v3/somethingElse"),
                ("GET", "/www.googleapis.com/anything/at/all"),
                ("PUT", "/www.googleapis.com/a.json"),
                ("POST", "/identitytoolkit.googleapis.com/v2/accounts/mfaEnrollment:start"),
                ("GET", "/identitytoolkit.googleapis.com/v1beta1/projects"),
                ("POST", "/securetoken.googleapis.com/v1/other"),
                ("GET", "/securetoken.googleapis.com/"),
            ] {
                let result = try await server.request(method, path + "?key=k", body: method == "GET" ? nil : "{}")
                Self.expectError(result, "NOT_FOUND", status: 404)
            }
            #expect(try await server.dump() == before)

            // Firebase Storage's REST API answers its own unknown paths in its own shape.
            let storage = try await server.request("GET", "/v0/b/bucket/unknown")
            #expect(storage.status == 404)
            let error = (storage.json as? [String: Any])?["error"] as? [String: Any]
            #expect(error?["code"] as? Int == 404 && error?["message"] as? String == "Not Found.")
        }
    }
}

/// An unknown path under an API's prefix is logged at debug level with its method and path,
/// so the next endpoint a client needs shows in the log.
@Suite("Unknown API paths, logged")
struct UnknownAPIPathLogTests {
    /// Keeps every message logged with its metadata.
    final class Recorder: Sendable {
        let lines = Mutex<[String]>([])
    }

    struct RecordingHandler: LogHandler {
        let recorder: Recorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            let fields = all.filter { $0.key == "method" || $0.key == "path" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            recorder.lines.withLock { $0.append("\(event.level) \(event.message) \(fields.joined(separator: " "))") }
        }
    }

    @Test func unknownPathsAreLoggedWithMethodAndPath() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let recorder = Recorder()
        let logger = Logger(label: "unknown-path-test") { _ in RecordingHandler(recorder: recorder) }
        let folder = try DataFolder(url: directory.url, logger: logger)
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataFolder: directory.url, maxWriteBytes: 1 << 20,
            adminToken: TestServer.adminToken, emulator: true, defaultRules: TestServer.openRules)
        configuration.storageRules = TestServer.openStorageRules
        let app = try await buildApplication(configuration: configuration, folder: folder, logger: logger)
        try await app.test(.router) { client in
            for (method, path) in [
                (HTTPRequest.Method.post, "/www.googleapis.com/identitytoolkit/v3/relyingparty/getPublicKeys"),
                (.get, "/securetoken.googleapis.com/v2/x"), (.get, "/v0/b/bucket/nothing"),
            ] {
                let response = try await client.execute(uri: path + "?key=k", method: method)
                #expect(response.status == .notFound)
            }
            // A known path is not logged as unknown.
            _ = try await client.execute(uri: "/www.googleapis.com/identitytoolkit/v3/relyingparty/getProjectConfig?key=k", method: .get)
        }
        let logged = recorder.lines.withLock { $0 }.filter { $0.contains("unknown Google API path") }
        #expect(logged == [
            "debug unknown Google API path method=POST path=/www.googleapis.com/identitytoolkit/v3/relyingparty/getPublicKeys",
            "debug unknown Google API path method=GET path=/securetoken.googleapis.com/v2/x",
            "debug unknown Google API path method=GET path=/v0/b/bucket/nothing",
        ])
    }
}
