import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// Provider sign-in: `accounts:createAuthUri` and `accounts:signInWithIdp`.
extension AuthResponder {
    func createAuthUri(_ body: RequestFields, request: Request, client: String?) async throws -> Response {
        if body.string("providerId") == nil, body.string("identifier") != nil {
            // Which sign-in methods an address has (fetchSignInMethodsForEmail).
            guard let found = try await service.signInMethods(email: body.string("identifier"), isAdmin: isAdmin(request))
            else { return Self.answer(CreateAuthUriAnswer()) }
            return Self.answer(CreateAuthUriAnswer(
                registered: found.registered, allProviders: Self.nonEmpty(found.providers), signinMethods: Self.nonEmpty(found.methods)))
        }
        let scopes = (body.string("oauthScope") ?? "").split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        let custom = (body.node.child(ChildKey("customParameter")).children.map { Array($0) } ?? []).compactMap { entry -> (String, String)? in
            if case .string(let value) = entry.value { return (entry.key.string, value) }
            return nil
        }
        let started = try await service.startSignIn(
            providerID: body.string("providerId"), continueURI: body.string("continueUri"), scopes: scopes, customParameters: custom,
            client: client)
        return Self.answer(CreateAuthUriAnswer(
            authUri: started.authURI, providerId: body.string("providerId") ?? "", sessionId: started.sessionID))
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
        var answer = VerifyAssertionAnswer(
            providerId: profile.providerID, federatedId: profile.rawID, emailVerified: profile.emailVerified,
            email: profile.email, displayName: profile.displayName, photoUrl: profile.photoURL,
            rawUserInfo: profile.rawUserInfo.isNull ? nil : JSONWriter.string(profile.rawUserInfo))
        if body.bool("returnIdpCredential") ?? true {
            answer.oauthIdToken = profile.idToken
            answer.oauthAccessToken = profile.accessToken
        }
        guard let session = result.session else {
            answer.needConfirmation = true
            return Self.answer(answer)
        }
        answer.localId = session.user.uid
        answer.idToken = session.idToken
        answer.refreshToken = session.refreshToken
        answer.expiresIn = String(session.expiresIn)
        answer.isNewUser = session.isNewUser
        return Self.answer(answer)
    }
}
