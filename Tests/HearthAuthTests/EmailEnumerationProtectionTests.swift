import HearthAuth
import Testing

/// `Policy.emailEnumerationProtection`: on (the default, as in Firebase projects made since
/// September 2023), nothing an app is answered tells whether an address has an account; off,
/// the answers say what went wrong, as in older projects. Admins are told either way.
@Suite struct EmailEnumerationProtectionTests {
    static let password = AuthServiceTests.password

    static func policy(protection: Bool) -> AuthService.Policy {
        var policy = AuthService.Policy()
        policy.emailEnumerationProtection = protection
        // The emulator lists codes as they are made (no mail server), so what was sent is known
        // when the request is answered.
        policy.emulator = true
        return policy
    }

    static func request(_ kind: ActionCode.Kind, email: String? = nil, idToken: String? = nil, newEmail: String? = nil)
        -> AuthService.ActionCodeRequest
    {
        var request = AuthService.ActionCodeRequest(kind: kind)
        request.email = email
        request.idToken = idToken
        request.newEmail = newEmail
        request.continueURL = "https://app.example.com/signed-in"
        return request
    }

    @Test func protectedAnswersAreTheSameForEveryAddress() async throws {
        try await AuthServiceTests.withService(policy: Self.policy(protection: true)) { service, _ in
            let alice = try await service.signUp(email: "alice@example.com", password: Self.password)
            let bob = try await service.signUp(email: "bob@example.com", password: Self.password)
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: "wrong password", client: "c")
            }
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "nobody@example.com", password: Self.password, client: "c")
            }
            // No sign-in methods, for a known address as for an unknown one; admins see them.
            #expect(try await service.signInMethods(email: "alice@example.com") == nil)
            #expect(try await service.signInMethods(email: "nobody@example.com") == nil)
            #expect(try await service.signInMethods(email: "alice@example.com", isAdmin: true)?.methods == ["password"])
            // A reset for an unknown address is answered, and nothing is made.
            _ = try await service.sendActionCode(Self.request(.passwordReset, email: "nobody@example.com"))
            #expect(try await service.store.listedActionCodes().isEmpty)
            // An email change to a taken address is answered as any other, and nothing is sent.
            _ = try await service.sendActionCode(
                Self.request(.verifyAndChangeEmail, idToken: alice.idToken, newEmail: "bob@example.com"))
            #expect(try await service.store.listedActionCodes().isEmpty)
            // So is a sign-in link for a disabled account.
            var disabled = AuthService.AccountFields()
            disabled.disabled = true
            _ = try await service.updateUser(uid: bob.user.uid, disabled)
            _ = try await service.sendActionCode(Self.request(.emailSignIn, email: "bob@example.com"))
            #expect(try await service.store.listedActionCodes().isEmpty)
            // The same requests for free or usable addresses do send.
            _ = try await service.sendActionCode(
                Self.request(.verifyAndChangeEmail, idToken: alice.idToken, newEmail: "carol@example.com"))
            _ = try await service.sendActionCode(Self.request(.passwordReset, email: "alice@example.com"))
            #expect(try await service.store.listedActionCodes().map(\.code.kind) == [.verifyAndChangeEmail, .passwordReset])
        }
    }

    @Test func unprotectedAnswersSayWhatWentWrong() async throws {
        try await AuthServiceTests.withService(policy: Self.policy(protection: false)) { service, _ in
            let alice = try await service.signUp(email: "alice@example.com", password: Self.password)
            let bob = try await service.signUp(email: "bob@example.com", password: Self.password)
            await #expect(throws: AuthError.invalidPassword) {
                try await service.signIn(email: "alice@example.com", password: "wrong password", client: "c")
            }
            await #expect(throws: AuthError.emailNotFound) {
                try await service.signIn(email: "nobody@example.com", password: Self.password, client: "c")
            }
            let methods = try #require(try await service.signInMethods(email: "alice@example.com"))
            #expect(methods.registered && methods.methods == ["password"])
            #expect(try await service.signInMethods(email: "nobody@example.com")?.registered == false)
            await #expect(throws: AuthError.emailNotFound) {
                _ = try await service.sendActionCode(Self.request(.passwordReset, email: "nobody@example.com"))
            }
            await #expect(throws: AuthError.emailExists) {
                _ = try await service.sendActionCode(
                    Self.request(.verifyAndChangeEmail, idToken: alice.idToken, newEmail: "bob@example.com"))
            }
            var disabled = AuthService.AccountFields()
            disabled.disabled = true
            _ = try await service.updateUser(uid: bob.user.uid, disabled)
            await #expect(throws: AuthError.userDisabled) {
                _ = try await service.sendActionCode(Self.request(.emailSignIn, email: "bob@example.com"))
            }
            #expect(try await service.store.listedActionCodes().isEmpty)
            // A right password still signs in.
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "c")
        }
    }
}
