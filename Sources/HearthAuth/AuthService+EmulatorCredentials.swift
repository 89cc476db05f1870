import Foundation
import HearthCore

/// Fake provider credentials, accepted in emulator mode only, as Firebase's Auth emulator
/// accepts them: an `id_token` that is the claims themselves as JSON
/// (`{"sub": "abc123", "email": "foo@example.com", "email_verified": true}`), or a JWT for a
/// provider this server has no configuration for, read without checking its signature. No
/// provider is asked: apps test `signInWithCredential`, and the emulator's sign-in page
/// (`/emulator/auth/handler`) finishes popups and redirects, with no network.
extension AuthService {
    /// The profile a fake credential describes, or nil when `credential` is not one (or this is
    /// not an emulator): a `postBody` token, or a `requestUri` carrying `providerId` and
    /// `id_token` in its query or fragment (what the emulator's sign-in page hands back).
    func emulatorProfile(_ credential: ProviderCredential) async throws(AuthError) -> FederatedProfile? {
        guard policy.emulator else { return nil }
        let providerID: String
        let idToken: String
        switch credential {
        case .token(let id, let token?, _, _):
            (providerID, idToken) = (id, token)
        case .token:
            return nil
        case .redirect(let requestURI, _):
            let parameters = Self.uriParameters(requestURI)
            guard let id = parameters["providerId"], let token = parameters["id_token"] else { return nil }
            (providerID, idToken) = (id, token)
        }
        guard !providerID.isEmpty else { throw AuthError("MISSING_PROVIDER_ID") }
        let config = try await providerConfig(id: providerID)
        let isJSON = idToken.first == "{"
        // A real provider's token for a configured provider is checked as always.
        guard isJSON || config == nil else { return nil }
        if let config, !config.enabled {
            throw AuthError("OPERATION_NOT_ALLOWED", detail: "The identity provider configuration is disabled.")
        }
        let claims = try Self.fakeClaims(idToken, isJSON: isJSON)
        return try profile(providerID: providerID, claims: claims, idToken: idToken)
    }

    /// The claims of a fake `id_token`: strict JSON, or a JWT's payload (unverified).
    static func fakeClaims(_ idToken: String, isJSON: Bool) throws(AuthError) -> Node {
        let invalid = AuthError("INVALID_IDP_RESPONSE", detail: "the emulator reads an id_token as strict JSON or as a JWT")
        var bytes = Array(idToken.utf8)
        if !isJSON {
            let parts = idToken.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 3, let payload = Self.base64URLDecoded(parts[1]) else { throw invalid }
            bytes = Array(payload)
        }
        guard let claims = try? JSONParser.parseDocument(bytes), claims.children != nil else { throw invalid }
        return claims
    }

    private func profile(providerID: String, claims: Node, idToken: String) throws(AuthError) -> FederatedProfile {
        func string(_ key: String) -> String? {
            if case .string(let text) = claims.child(ChildKey(key)), !text.isEmpty { return text }
            return nil
        }
        guard let sub = string("sub") else {
            throw AuthError("INVALID_IDP_RESPONSE", detail: "the id_token has no \"sub\" (a string that identifies the user)")
        }
        let email = try string("email").map { (address) throws(AuthError) in try checkedEmail(address) }
        // Apple writes "true" as a string.
        let verified: Bool
        switch claims.child(ChildKey("email_verified")) {
        case .bool(true), .string("true"): verified = true
        default: verified = false
        }
        return FederatedProfile(
            providerID: providerID.lowercased(), rawID: sub, email: email, emailVerified: verified, displayName: string("name"),
            photoURL: string("picture"), rawUserInfo: claims, idToken: idToken,
            // The SDKs build a provider credential from the access token: give one, as Firebase's emulator does.
            accessToken: "FirebaseAuthEmulatorFakeAccessToken_\(providerID.lowercased())")
    }

    /// The identities of `providerID` that accounts hold, for the emulator's sign-in page to
    /// offer again (the screen name a page gave stays in the account's `rawUserInfo` only); at
    /// most `limit`, found among the first `scanned` accounts; none outside emulator mode.
    public func emulatorIdentities(providerID: String, limit: Int = 100, scanned: Int = 10_000) async throws(AuthError) -> [LinkedIdentity] {
        guard policy.emulator else { return [] }
        var found: [LinkedIdentity] = []
        var pageToken: String?
        var seen = 0
        repeat {
            let (users, next) = try await listUsers(pageToken: pageToken, maxResults: 1000)
            seen += users.count
            for user in users {
                for identity in user.identities where identity.providerID == providerID {
                    var shown = identity
                    // The account's own profile when the identity's is empty (an edited account).
                    shown.email = shown.email ?? user.email
                    shown.displayName = shown.displayName ?? user.displayName
                    shown.photoURL = shown.photoURL ?? user.photoURL
                    found.append(shown)
                }
            }
            pageToken = next
        } while pageToken != nil && found.count < limit && seen < scanned
        return Array(found.prefix(limit))
    }

    /// A URL's query and fragment parameters (the query wins).
    static func uriParameters(_ uri: String) -> [String: String] {
        guard let components = URLComponents(string: uri) else { return [:] }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
        if let fragment = components.fragment, let items = URLComponents(string: "?" + fragment)?.queryItems {
            for item in items where parameters[item.name] == nil { parameters[item.name] = item.value ?? "" }
        }
        return parameters
    }

    static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
