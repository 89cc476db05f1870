import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// Provider sign-in: `accounts:createAuthUri` and `accounts:signInWithIdp`.
extension AuthResponder {
    func createAuthUri(_ body: RequestFields, client: String?) async throws -> Response {
        if body.string("providerId") == nil, body.string("identifier") != nil {
            // Which sign-in methods an address has (fetchSignInMethodsForEmail).
            let found = try await service.signInMethods(email: body.string("identifier"))
            var entries: [(ChildKey, Node)] = [
                (ChildKey("kind"), .string("identitytoolkit#CreateAuthUriResponse")),
                (ChildKey("registered"), .bool(found.registered)),
            ]
            if !found.providers.isEmpty { entries.append((ChildKey("allProviders"), Self.list(found.providers.map(Node.string)))) }
            if !found.methods.isEmpty { entries.append((ChildKey("signinMethods"), Self.list(found.methods.map(Node.string)))) }
            return Self.json(.object(entries))
        }
        let scopes = (body.string("oauthScope") ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        let custom = (body.node.child(ChildKey("customParameter")).children.map { Array($0) } ?? []).compactMap { entry -> (String, String)? in
            if case .string(let value) = entry.value { return (entry.key.string, value) }
            return nil
        }
        let started = try await service.startSignIn(
            providerID: body.string("providerId"), continueURI: body.string("continueUri"), scopes: scopes, customParameters: custom,
            client: client)
        return Self.json(.object([
            (ChildKey("kind"), .string("identitytoolkit#CreateAuthUriResponse")),
            (ChildKey("authUri"), .string(started.authURI)),
            (ChildKey("providerId"), .string(body.string("providerId") ?? "")),
            (ChildKey("sessionId"), .string(started.sessionID)),
        ]))
    }

    func signInWithIdp(_ body: RequestFields) async throws -> Response {
        let credential: AuthService.ProviderCredential
        if let post = body.string("postBody"), !post.isEmpty {
            var parameters: [String: String] = [:]
            for item in URLComponents(string: "?" + post)?.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
            credential = .token(
                providerID: parameters["providerId"] ?? "", idToken: parameters["id_token"], accessToken: parameters["access_token"],
                nonce: parameters["nonce"])
        } else {
            guard let requestURI = body.string("requestUri") else { throw AuthError("MISSING_REQUEST_URI") }
            credential = .redirect(requestURI: requestURI, sessionID: body.string("sessionId"))
        }
        let result = try await service.finishSignIn(credential, linkingTo: body.string("idToken"))
        let profile = result.profile
        var entries: [(ChildKey, Node)] = [
            (ChildKey("kind"), .string("identitytoolkit#VerifyAssertionResponse")),
            (ChildKey("providerId"), .string(profile.providerID)),
            (ChildKey("federatedId"), .string(profile.rawID)),
            (ChildKey("emailVerified"), .bool(profile.emailVerified)),
        ]
        if let email = profile.email { entries.append((ChildKey("email"), .string(email))) }
        if let name = profile.displayName { entries.append((ChildKey("displayName"), .string(name))) }
        if let photo = profile.photoURL { entries.append((ChildKey("photoUrl"), .string(photo))) }
        if !profile.rawUserInfo.isNull { entries.append((ChildKey("rawUserInfo"), .string(JSONWriter.string(profile.rawUserInfo)))) }
        if body.bool("returnIdpCredential") ?? true {
            if let token = profile.idToken { entries.append((ChildKey("oauthIdToken"), .string(token))) }
            if let token = profile.accessToken { entries.append((ChildKey("oauthAccessToken"), .string(token))) }
        }
        guard let session = result.session else {
            entries.append((ChildKey("needConfirmation"), .bool(true)))
            return Self.json(.object(entries))
        }
        entries += [
            (ChildKey("localId"), .string(session.user.uid)),
            (ChildKey("idToken"), .string(session.idToken)),
            (ChildKey("refreshToken"), .string(session.refreshToken)),
            (ChildKey("expiresIn"), .string(String(session.expiresIn))),
            (ChildKey("isNewUser"), .bool(session.isNewUser)),
        ]
        return Self.json(.object(entries))
    }
}
