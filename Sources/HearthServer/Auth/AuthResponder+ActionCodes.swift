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
        code.isAdmin = isAdmin(request)
        code.returnLink = body.bool("returnOobLink") ?? false
        code.client = client
        let issued = try await service.sendActionCode(code, actionURL: emulatorActionURL(request))
        var entries: [(ChildKey, Node)] = [
            (ChildKey("kind"), .string("identitytoolkit#GetOobConfirmationCodeResponse")),
            (ChildKey("email"), .string(issued.email)),
        ]
        if code.returnLink {
            entries += [(ChildKey("oobCode"), .string(issued.code)), (ChildKey("oobLink"), .string(issued.link))]
        }
        return Self.json(.object(entries))
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
        var entries: [(ChildKey, Node)] = [
            (ChildKey("kind"), .string("identitytoolkit#ResetPasswordResponse")),
            (ChildKey("requestType"), .string(code.kind.rawValue)),
        ]
        // A sign-in code does not tell its address: whoever has the link must know it.
        if code.kind != .emailSignIn { entries.append((ChildKey("email"), .string(code.email))) }
        if let next = code.newEmail { entries.append((ChildKey("newEmail"), .string(next))) }
        return Self.json(.object(entries))
    }

    func applyActionCode(_ body: RequestFields) async throws -> Response {
        let user = try await service.applyActionCode(body.string("oobCode"))
        var entries: [(ChildKey, Node)] = [
            (ChildKey("kind"), .string("identitytoolkit#SetAccountInfoResponse")),
            (ChildKey("localId"), .string(user.uid)),
            (ChildKey("emailVerified"), .bool(user.emailVerified)),
        ]
        if let email = user.email { entries.append((ChildKey("email"), .string(email))) }
        if let name = user.displayName { entries.append((ChildKey("displayName"), .string(name))) }
        return Self.json(.object(entries))
    }

    func signInWithEmailLink(_ body: RequestFields) async throws -> Response {
        let session = try await service.signIn(
            emailLinkCode: body.string("oobCode"), email: body.string("email"), idToken: body.string("idToken"))
        return Self.json(Self.sessionBody(
            session, kind: "identitytoolkit#EmailLinkSigninResponse", extra: [(ChildKey("isNewUser"), .bool(session.isNewUser))]))
    }

    /// `/emulator/v1/projects/<project>/accounts` (DELETE) and `…/oobCodes` (GET, DELETE).
    func emulatorEndpoint(_ path: String, request: Request) async throws -> Response {
        if path.hasSuffix("/accounts"), request.method == .delete {
            try requireAdmin(request)
            return try await clearAccounts()
        }
        guard path.hasSuffix("/oobCodes") else { throw AuthError("NOT_FOUND", status: 404) }
        switch request.method {
        case .get:
            let codes = try await service.listedActionCodes()
            // An empty list is still written (a Node cannot hold one).
            if codes.isEmpty { return JSONResponse.make(status: .ok, bytes: Array(#"{"oobCodes":[]}"#.utf8)) }
            return Self.json(.object([(ChildKey("oobCodes"), Self.list(codes.map { listed in
                var entry: [(ChildKey, Node)] = [
                    (ChildKey("email"), .string(listed.code.email)),
                    (ChildKey("oobCode"), .string(listed.oobCode)),
                    (ChildKey("oobLink"), .string(listed.link)),
                    (ChildKey("requestType"), .string(listed.code.kind.rawValue)),
                ]
                if let newEmail = listed.code.newEmail { entry.append((ChildKey("newEmail"), .string(newEmail))) }
                return .object(entry)
            }))]))
        case .delete:
            try await service.clearListedActionCodes()
            return Self.json(.object([]))
        default:
            throw AuthError("METHOD_NOT_ALLOWED", status: 405)
        }
    }
}
