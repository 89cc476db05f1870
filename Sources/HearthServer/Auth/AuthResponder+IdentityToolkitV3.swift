import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// Identity Toolkit's older v3 API, `/www.googleapis.com/identitytoolkit/v3/relyingparty/<method>`,
/// which the namespaced Firebase JS SDK 8 (and older Android, iOS and Admin SDKs) speak.
///
/// v1 kept v3's JSON: the same request fields (`returnSecureToken`, `requestType`, `oobCode`,
/// `postBody`, `requestUri`, `sessionId`, `deleteAttribute`, …) and the same answers with the
/// same `kind`s (`identitytoolkit#VerifyPasswordResponse`, …). So most v3 methods are their
/// v1 route under an older name (``relyingPartyAliases``), answered by the same handler; the
/// methods that differ are here. Routes are registered in `AuthResponder+Routes.swift`, each
/// through ``relyingParty(_:)``.
extension AuthResponder {
    static let relyingPartyPrefix = "/www.googleapis.com/identitytoolkit/v3/relyingparty/"

    /// v3 methods that are a v1 user route under another name: v3 name, v1 endpoint.
    static let relyingPartyAliases: KeyValuePairs<String, String> = [
        "signupNewUser": "accounts:signUp",
        "verifyPassword": "accounts:signInWithPassword",
        "verifyCustomToken": "accounts:signInWithCustomToken",
        "getAccountInfo": "accounts:lookup",
        "setAccountInfo": "accounts:update",
        "deleteAccount": "accounts:delete",
        "resetPassword": "accounts:resetPassword",
        "createAuthUri": "accounts:createAuthUri",
        "verifyAssertion": "accounts:signInWithIdp",
        "emailLinkSignin": "accounts:signInWithEmailLink",
    ]

    /// `handler` as a v3 method: what it throws is answered as v3's clients understand it.
    ///
    /// A failed password sign-in is `INVALID_LOGIN_CREDENTIALS` under email enumeration
    /// protection, a code SDK 8 does not know: it would show `auth/internal-error`. v3
    /// answers it `INVALID_PASSWORD` instead (SDK 8's `auth/wrong-password`), the same for an
    /// unknown address as for a wrong password, so the answer still does not tell whether an
    /// address has an account. (Without the protection, v1 and v3 both answer
    /// `EMAIL_NOT_FOUND` or `INVALID_PASSWORD`.)
    func relyingParty(_ handler: @escaping RouteHandler) -> RouteHandler {
        { request, context in
            do {
                return try await handler(request, context)
            } catch let error as AuthError where error.code == AuthError.invalidLoginCredentials.code {
                throw AuthError.invalidPassword
            }
        }
    }

    /// `getOobConfirmationCode`: v1's `accounts:sendOobCode`. v3 also names the email-change
    /// code `NEW_EMAIL_ACCEPT` (an `idToken` and the `newEmail`), v1's `VERIFY_AND_CHANGE_EMAIL`.
    func getOobConfirmationCode(_ request: Request, context: Context) async throws -> Response {
        var body = try await body(of: request, allowForm: false)
        if body.string("requestType") == "NEW_EMAIL_ACCEPT" {
            body = RequestFields(node: body.node.updatingChild(
                ChildKey("requestType"), to: .string(ActionCode.Kind.verifyAndChangeEmail.rawValue)))
        }
        return try await sendOobCode(body, request: request, client: proxies.clientAddress(of: request, peer: context.remoteAddress))
    }

    /// `getProjectConfig` (and v1's `GET projects`): the project and the domains a sign-in
    /// may return to, which SDK 8 checks the page against before a popup or redirect sign-in.
    func projectConfig(_ request: Request) async throws -> Response {
        let origin = request.headers[.origin].flatMap { URLComponents(string: $0)?.host }
        return Self.answer(ProjectConfigAnswer(
            projectId: service.issuer.projectID, authorizedDomains: service.authorizedDomains(pageHost: origin)))
    }

    /// `signOutUser`: with an ID token, Hearth's `accounts:signOut` (the session of the
    /// `refreshToken` given, or every session); an admin names the account by `localId`
    /// instead, as in v3, and every session of it ends.
    func signOutUser(_ request: Request) async throws -> Response {
        let body = try await body(of: request, allowForm: false)
        if body.string("idToken") == nil, let uid = body.string("localId"), await isAdmin(request) {
            try await service.revokeSessions(uid: uid)
            return Self.answer(SignOutUserAnswer(localId: uid))
        }
        let user = try await service.user(idToken: body.string("idToken"))
        try await service.signOut(idToken: body.string("idToken"), refreshToken: body.string("refreshToken"))
        RequestLog.current?.uid = user.uid
        return Self.answer(SignOutUserAnswer(localId: user.uid))
    }

    /// `downloadAccount`, for admins: v1's `accounts:batchGet`, with the page in the body.
    func downloadAccount(_ body: RequestFields) async throws -> Response {
        try await downloadAccounts(pageToken: body.string("nextPageToken"), maxResults: body.integer("maxResults").map { Int($0) })
    }

    /// `getRecaptchaParam`, `sendVerificationCode`, `verifyPhoneNumber`: phone sign-in, which
    /// Hearth does not offer (nor v1's `accounts:sendVerificationCode`). Refused as Firebase
    /// refuses a sign-in method that is not enabled (SDK 8's `auth/operation-not-allowed`),
    /// rather than as a path that does not exist.
    func phoneSignIn() throws -> Response {
        throw AuthError("OPERATION_NOT_ALLOWED", detail: "phone sign-in is not available on this server")
    }
}
