import Foundation
import HearthCore
import HearthTesting
import Logging
import Synchronization
import Testing
@testable import HearthAuth

/// Emailed codes through the service with a mailer that keeps what it is given (the SMTP
/// conversation itself is tested against a real mail server in Tests/Accounts): expiry, single
/// use, what each code changes, and the limits and answers that keep addresses private.
@Suite struct ActionCodeTests {
    /// Keeps the messages the service sends.
    final class Outbox: Mailer {
        let messages = Mutex<[MailMessage]>([])
        func send(_ message: MailMessage) async throws { messages.withLock { $0.append(message) } }
        var all: [MailMessage] { messages.withLock { $0 } }
    }

    static func withService(
        policy: AuthService.Policy = AuthService.Policy(), _ body: (AuthService, TestClock, Outbox) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-codes")
        defer { directory.remove() }
        let clock = TestClock()
        let outbox = Outbox()
        let email = EmailDelivery(mailer: outbox, sender: "Hearth <noreply@example.com>", appName: "Test App", actionURL: "https://app.example.com/__/auth/action")
        let service = try await AuthService.open(
            in: directory.url.appendingPathComponent("auth"), projectID: "proj", policy: policy, hasher: PasswordHasher(rounds: 1 << 10), email: email,
            clock: { clock.now }, logger: Logger(label: "codes", factory: { _ in SwiftLogNoOpLogHandler() }))
        try await body(service, clock, outbox)
    }

    /// The code in the one link a message holds.
    static func code(in message: MailMessage) throws -> String {
        let link = try #require(message.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("https://app.example.com/__/auth/action?") })
        let query = try #require(URLComponents(string: String(link))?.queryItems)
        return try #require(query.first { $0.name == "oobCode" }?.value)
    }

    /// An admin's request waits for the mail; an app's is sent in the background.
    static func adminRequest(_ kind: ActionCode.Kind, email: String) -> AuthService.ActionCodeRequest {
        var request = AuthService.ActionCodeRequest(kind: kind)
        request.email = email
        request.isAdmin = true
        return request
    }

    @Test func aResetCodeSetsANewPasswordOnceAndEndsSessions() async throws {
        try await Self.withService { service, _, outbox in
            let session = try await service.signUp(email: "rita@example.com", password: "old-password")
            _ = try await service.sendActionCode(Self.adminRequest(.passwordReset, email: "rita@example.com"))
            let message = try #require(outbox.all.last)
            #expect(message.to == "rita@example.com" && message.subject == "Reset your password for Test App")
            #expect(message.html?.contains("mode=resetPassword") == true)
            let code = try Self.code(in: message)
            #expect(try await service.inspectActionCode(code).email == "rita@example.com")
            _ = try await service.resetPassword(code: code, newPassword: "new-password")
            let user = try await service.signIn(email: "rita@example.com", password: "new-password", client: "t").user
            #expect(user.emailVerified)
            await #expect(throws: AuthError.invalidLoginCredentials) {
                _ = try await service.signIn(email: "rita@example.com", password: "old-password", client: "t")
            }
            await #expect(throws: AuthError.tokenExpired) { _ = try await service.refresh(refreshToken: session.refreshToken) }
            await #expect(throws: AuthError.invalidOOBCode) { _ = try await service.resetPassword(code: code, newPassword: "third-one") }
        }
    }

    @Test func codesExpire() async throws {
        try await Self.withService { service, clock, outbox in
            _ = try await service.signUp(email: "slow@example.com", password: "password-1")
            _ = try await service.sendActionCode(Self.adminRequest(.passwordReset, email: "slow@example.com"))
            let code = try Self.code(in: try #require(outbox.all.last))
            clock.advance(by: 3_600_001)
            await #expect(throws: AuthError.expiredOOBCode) { _ = try await service.resetPassword(code: code, newPassword: "new-password") }
            await #expect(throws: AuthError.invalidOOBCode) { _ = try await service.resetPassword(code: "made-up", newPassword: "new-password") }
        }
    }

    @Test func verificationAndEmailLinkSignIn() async throws {
        try await Self.withService { service, _, outbox in
            let session = try await service.signUp(email: "vera@example.com", password: "password-1")
            var verify = AuthService.ActionCodeRequest(kind: .verifyEmail)
            verify.idToken = session.idToken
            verify.isAdmin = true  // waits for the mail, as an admin's request does
            _ = try await service.sendActionCode(verify)
            let verified = try await service.applyActionCode(try Self.code(in: try #require(outbox.all.last)))
            #expect(verified.emailVerified && verified.uid == session.user.uid)

            var link = Self.adminRequest(.emailSignIn, email: "newcomer@example.com")
            link.continueURL = "https://app.example.com/done"
            _ = try await service.sendActionCode(link)
            let code = try Self.code(in: try #require(outbox.all.last))
            await #expect(throws: AuthError.invalidEmail) { _ = try await service.signIn(emailLinkCode: code, email: "someone.else@example.com") }
            let signedIn = try await service.signIn(emailLinkCode: code, email: "newcomer@example.com")
            #expect(signedIn.isNewUser && signedIn.user.emailVerified)
            await #expect(throws: AuthError.invalidOOBCode) { _ = try await service.signIn(emailLinkCode: code, email: "newcomer@example.com") }
        }
    }

    @Test func appsCannotTellWhoHasAnAccountAndAreLimited() async throws {
        try await Self.withService { service, _, _ in
            var unknown = AuthService.ActionCodeRequest(kind: .passwordReset)
            unknown.email = "nobody@example.com"
            let answer = try await service.sendActionCode(unknown)
            #expect(answer.email == "nobody@example.com" && answer.code.isEmpty && answer.link.isEmpty)
            // Admins are told.
            await #expect(throws: AuthError.emailNotFound) {
                _ = try await service.sendActionCode(Self.adminRequest(.passwordReset, email: "nobody@example.com"))
            }
            // Five emails an hour per address, then RESET_PASSWORD_EXCEED_LIMIT.
            for _ in 0..<4 { _ = try await service.sendActionCode(unknown) }
            await #expect(throws: AuthError("RESET_PASSWORD_EXCEED_LIMIT")) { _ = try await service.sendActionCode(unknown) }
            // Only admins may have the link handed back.
            var handBack = unknown
            handBack.returnLink = true
            await #expect(throws: AuthError.insufficientPermission) { _ = try await service.sendActionCode(handBack) }
        }
    }

    @Test func templatesComeFromTheOperatorsFolder() throws {
        let folder = try TemporaryDirectory(prefix: "hearth-templates")
        defer { folder.remove() }
        try "Reset {{{appName}}} now".write(to: folder.url.appendingPathComponent("password-reset.subject.mustache"), atomically: true, encoding: .utf8)
        try "<p>{{email}}</p>".write(to: folder.url.appendingPathComponent("password-reset.html.mustache"), atomically: true, encoding: .utf8)
        let templates = try EmailTemplates(folder: folder.url)
        let rendered = templates.render(.passwordReset, values: ["appName": "A & B", "email": "<x>@example.com", "link": "https://l"])
        #expect(rendered.subject == "Reset A & B now")
        #expect(rendered.html == "<p>&lt;x&gt;@example.com</p>")
        // What the folder does not replace keeps the built-in text.
        #expect(rendered.text.contains("https://l"))
        try "{{#broken}".write(to: folder.url.appendingPathComponent("verify-email.text.mustache"), atomically: true, encoding: .utf8)
        #expect(throws: EmailTemplates.TemplateError.self) { _ = try EmailTemplates(folder: folder.url) }
    }

    // MARK: - What the review of account takeovers asked for

    @Test func anEmailChangeTellsTheOldAddressWhichCanChangeItBack() async throws {
        try await Self.withService { service, _, outbox in
            let session = try await service.signUp(email: "old@example.com", password: "password-1")
            var change = AuthService.ActionCodeRequest(kind: .verifyAndChangeEmail)
            change.idToken = session.idToken
            change.newEmail = "new@example.com"
            change.isAdmin = true
            _ = try await service.sendActionCode(change)
            let verify = try #require(outbox.all.last)
            #expect(verify.to == "new@example.com" && verify.text.contains("mode=verifyAndChangeEmail"))
            let changed = try await service.applyActionCode(try Self.code(in: verify))
            #expect(changed.email == "new@example.com")
            // The old address hears of it, in the background, with a link that undoes it.
            var notice: MailMessage?
            for _ in 0..<200 where notice == nil {
                notice = outbox.all.first { $0.to == "old@example.com" }
                if notice == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let recovery = try #require(notice)
            #expect(recovery.text.contains("mode=recoverEmail"))
            let restored = try await service.applyActionCode(try Self.code(in: recovery))
            #expect(restored.email == "old@example.com" && restored.uid == session.user.uid)
            await #expect(throws: AuthError.tokenExpired) { _ = try await service.refresh(refreshToken: session.refreshToken) }
        }
    }

    @Test func aStolenOldTokenCannotChangeTheAddress() async throws {
        try await Self.withService { service, clock, outbox in
            let session = try await service.signUp(email: "victim@example.com", password: "password-1")
            clock.advance(by: 10 * 60 * 1000)
            let token = try await service.refresh(refreshToken: session.refreshToken).idToken  // valid, but not a recent sign-in
            var change = AuthService.ActionCodeRequest(kind: .verifyAndChangeEmail)
            change.idToken = token
            change.newEmail = "thief@example.com"
            await #expect(throws: AuthError.credentialTooOld) { _ = try await service.sendActionCode(change) }
            // Nor link an address the thief holds to it.
            var link = Self.adminRequest(.emailSignIn, email: "thief@example.com")
            link.continueURL = "https://app.example.com/done"
            _ = try await service.sendActionCode(link)
            let code = try Self.code(in: try #require(outbox.all.last))
            await #expect(throws: AuthError.credentialTooOld) {
                _ = try await service.signIn(emailLinkCode: code, email: "thief@example.com", idToken: token)
            }
            #expect(try await service.users(matching: { var ids = AuthService.Identifiers(); ids.uids = [session.user.uid]; return ids }())
                .first?.email == "victim@example.com")
        }
    }

    @Test func anAddressRegisteredByOthersIsClaimedByWhoeverProvesItHolds() async throws {
        try await Self.withService { service, _, outbox in
            // Someone registers the address first (anonymously, then naming it, with a password).
            let squatter = try await service.signUp(email: nil, password: nil)
            _ = try await service.update(idToken: squatter.idToken, AuthService.ProfileChange(email: "owner@example.com", password: "squatted"))
            let squatterSession = try await service.signIn(email: "owner@example.com", password: "squatted", client: "x")
            // The owner signs in with a link sent to the address.
            var link = Self.adminRequest(.emailSignIn, email: "owner@example.com")
            link.continueURL = "https://app.example.com/done"
            _ = try await service.sendActionCode(link)
            let owner = try await service.signIn(emailLinkCode: try Self.code(in: try #require(outbox.all.last)), email: "owner@example.com")
            #expect(owner.user.uid == squatter.user.uid && owner.user.emailVerified)
            // Every way in the squatter had is gone.
            #expect(owner.user.passwordHash == nil)
            await #expect(throws: AuthError.tokenExpired) { _ = try await service.refresh(refreshToken: squatterSession.refreshToken) }
            await #expect(throws: AuthError.invalidLoginCredentials) {
                _ = try await service.signIn(email: "owner@example.com", password: "squatted", client: "x")
            }
        }
    }

    @Test func requestsAreCheckedBeforeTheyCost() async throws {
        var policy = AuthService.Policy()
        policy.requestsPerClientPerHour = 3
        try await Self.withService(policy: policy) { service, _, _ in
            var request = AuthService.ActionCodeRequest(kind: .passwordReset)
            request.client = "203.0.113.9"
            for index in 0..<3 {
                request.email = "nobody\(index)@example.com"
                _ = try await service.sendActionCode(request)
            }
            request.email = "nobody9@example.com"
            await #expect(throws: AuthError.tooManyAttempts) { _ = try await service.sendActionCode(request) }
            // Links continue only to web pages.
            var scripted = AuthService.ActionCodeRequest(kind: .passwordReset)
            scripted.email = "a@example.com"
            scripted.continueURL = "javascript://app.example.com/%0aalert(1)"
            await #expect(throws: AuthError("INVALID_CONTINUE_URI", detail: "((expected an absolute URI with valid scheme and host))")) {
                _ = try await service.sendActionCode(scripted)
            }
            // Addresses with quoting or delimiters are no addresses.
            await #expect(throws: AuthError.invalidEmail) { _ = try await service.signUp(email: "x<mallory@evil.com>@corp.com", password: "password-1") }
        }
    }
}
