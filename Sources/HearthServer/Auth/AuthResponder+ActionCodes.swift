import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// Emailed codes: `accounts:sendOobCode`, `accounts:resetPassword`, `accounts:update` with an
/// `oobCode`, `accounts:signInWithEmailLink`, and the emulator's code listing.
extension AuthResponder {
    func sendOobCode(_ body: RequestFields, request: Request, client: String?) async throws -> Response {
        guard let type = body.string("requestType"), let kind = ActionCode.Kind(rawValue: type), kind != .recoverEmail else {
            throw AuthError("INVALID_REQ_TYPE")
        }
        var code = AuthService.ActionCodeRequest(kind: kind)
        code.email = body.string("email")
        code.idToken = body.string("idToken")
        code.newEmail = body.string("newEmail")
        code.continueURL = body.string("continueUrl")
        code.linkDomain = body.string("linkDomain")
        code.isAdmin = isAdmin(request)
        code.returnLink = body.bool("returnOobLink") ?? false
        code.client = client
        let issued = try await service.sendActionCode(code, actionURL: emulatorActionURL(request))
        return Self.answer(OobConfirmationAnswer(
            email: issued.email, oobCode: code.returnLink ? issued.code : nil, oobLink: code.returnLink ? issued.link : nil))
    }

    /// In emulator mode links point at the address the request came to, as Firebase's
    /// emulator's do; otherwise at the configured action page.
    private func emulatorActionURL(_ request: Request) -> String? {
        guard service.policy.emulator, let host = request.head.authority else { return nil }
        return "http://\(host)/__/auth/action"
    }

    func resetPassword(_ body: RequestFields) async throws -> Response {
        let code: ActionCode
        if body.string("newPassword") != nil {
            code = try await service.resetPassword(code: body.string("oobCode"), newPassword: body.string("newPassword"))
        } else {
            code = try await service.inspectActionCode(body.string("oobCode"))
        }
        // A sign-in code does not tell its address: whoever has the link must know it.
        return Self.answer(ResetPasswordAnswer(
            requestType: code.kind.rawValue, email: code.kind != .emailSignIn ? code.email : nil, newEmail: code.newEmail))
    }

    func applyActionCode(_ body: RequestFields) async throws -> Response {
        let user = try await service.applyActionCode(body.string("oobCode"))
        return Self.answer(AppliedCodeAnswer(
            localId: user.uid, emailVerified: user.emailVerified, email: user.email, displayName: user.displayName))
    }

    func signInWithEmailLink(_ body: RequestFields) async throws -> Response {
        let session = try await service.signIn(
            emailLinkCode: body.string("oobCode"), email: body.string("email"), idToken: body.string("idToken"))
        var answer = Self.session(session, kind: "identitytoolkit#EmailLinkSigninResponse")
        answer.isNewUser = session.isNewUser
        return Self.answer(answer)
    }

    /// The emulator's `GET …/oobCodes`: the codes sent, as its tests read them.
    func listedActionCodes() async throws -> Response {
        let codes = try await service.listedActionCodes()
        return Self.answer(OobCodesAnswer(oobCodes: codes.map { listed in
            .init(
                email: listed.code.email, oobCode: listed.oobCode, oobLink: listed.link, requestType: listed.code.kind.rawValue,
                newEmail: listed.code.newEmail)
        }))
    }

    /// The emulator's `DELETE …/oobCodes`.
    func clearListedActionCodes() async throws -> Response {
        try await service.clearListedActionCodes()
        return Self.answer(EmptyAnswer())
    }
}
