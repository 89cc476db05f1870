import Crypto
import Foundation
import HearthCore
import Logging
import Synchronization

/// Emailed one-time codes (Firebase's `sendOobCode`): password reset, email verification,
/// sign-in by link, and email changes. A code is kept only as a SHA-256 digest (in emulator
/// mode also in clear, for the emulator's listing), works once, and expires.
extension AuthService {
    /// How long each kind of code works (milliseconds): a reset link an hour, as Firebase's;
    /// a sign-in link six hours; verification and email changes three days.
    static func lifetime(_ kind: ActionCode.Kind) -> Int64 {
        switch kind {
        case .passwordReset: 3_600_000
        case .emailSignIn: 6 * 3_600_000
        case .verifyEmail, .verifyAndChangeEmail, .recoverEmail: 3 * 24 * 3_600_000
        }
    }

    /// A request for a code, as `accounts:sendOobCode` carries it.
    public struct ActionCodeRequest: Sendable {
        public var kind: ActionCode.Kind
        /// The address (reset, sign-in, or an admin's verification link).
        public var email: String?
        /// The signed-in user asking (verification and email changes from an app).
        public var idToken: String?
        public var newEmail: String?
        public var continueURL: String?
        /// The host the link should open on (`ActionCodeSettings.linkDomain`): one of
        /// ``Policy/linkDomains``, or the request fails with `INVALID_HOSTING_LINK_DOMAIN`.
        public var linkDomain: String?
        /// True for an admin (who may ask for the link instead of an email).
        public var isAdmin = false
        /// Give the link back rather than emailing it (admins only).
        public var returnLink = false
        /// The asking client's address, for its hourly allowance (not for admins).
        public var client: String?

        public init(kind: ActionCode.Kind) { self.kind = kind }
    }

    /// A code made: the address it is for, and the code and link when asked for.
    public struct IssuedActionCode: Sendable {
        public var email: String
        public var code: String
        public var link: String
    }

    /// Makes a code and emails its link (or, for `returnLink`, gives it back).
    ///
    /// For an app (not an admin) the answer comes before the code is made and sent, and is
    /// the same for an address with no account: neither what it says nor how long it takes
    /// tells who has an account (Firebase's email enumeration protection). Each address gets
    /// at most ``Policy/emailsPerAddressPerHour`` emails an hour.
    /// - Parameter actionURL: the page the link opens, when not the configured one (the
    ///   emulator uses the address it was reached at).
    public func sendActionCode(_ request: ActionCodeRequest, actionURL: String? = nil) async throws(AuthError) -> IssuedActionCode {
        if request.returnLink, !request.isAdmin { throw .insufficientPermission }
        if !request.isAdmin { try countClientRequest(request.client) }
        let actionURL = try linkPage(actionURL, domain: request.linkDomain)
        if let continueURL = request.continueURL, !continueURL.isEmpty {
            // Read as the browser that follows the link will read it; an admin's links may
            // continue to any host.
            _ = try checkedContinueURL(
                continueURL, invalid: AuthError("INVALID_CONTINUE_URI", detail: "((expected an absolute URI with valid scheme and host))"),
                checkDomain: !request.isAdmin)
        }
        var uid: String?
        let email: String
        var newEmail: String?
        var displayName: String?
        var known = true
        switch request.kind {
        case .passwordReset:
            email = try checkedEmail(request.email)
            let user = try await withStore { try await store.user(email: email) }
            // An admin is told; so is anyone when enumeration protection is off. Otherwise the
            // answer is the same as for a real account.
            if user == nil, request.isAdmin || !policy.emailEnumerationProtection { throw .emailNotFound }
            known = user != nil
            uid = user?.uid
            displayName = user?.displayName
        case .emailSignIn:
            email = try checkedEmail(request.email)
            guard let continueURL = request.continueURL, !continueURL.isEmpty else { throw AuthError("MISSING_CONTINUE_URI") }
            let user = try await withStore { try await store.user(email: email) }
            if user?.disabled == true {
                guard policy.emailEnumerationProtection, !request.isAdmin else { throw .userDisabled }
                // Answered as for any address; no link is sent.
                known = false
            }
            uid = user?.uid
            displayName = user?.displayName
        case .verifyEmail, .verifyAndChangeEmail:
            let user: UserRecord
            if request.isAdmin, request.idToken == nil {
                let address = try checkedEmail(request.email)
                guard let found = try await withStore({ try await store.user(email: address) }) else { throw .userNotFound }
                user = found
            } else {
                guard request.idToken != nil else { throw AuthError("MISSING_ID_TOKEN") }
                let (found, claims) = try await verifiedUser(idToken: request.idToken)
                // A token taken from a page must not turn into a new address for the account.
                if request.kind == .verifyAndChangeEmail { try checkRecentSignIn(claims) }
                user = found
            }
            guard let address = user.email else { throw .missingEmail }
            uid = user.uid
            email = address
            displayName = user.displayName
            if request.kind == .verifyAndChangeEmail {
                guard request.newEmail != nil else { throw AuthError("MISSING_NEW_EMAIL") }
                let changed = try checkedEmail(request.newEmail)
                if try await withStore({ try await store.user(email: changed) }) != nil {
                    guard policy.emailEnumerationProtection, !request.isAdmin else { throw .emailExists }
                    // Answered as for a free address; nothing is sent.
                    known = false
                }
                newEmail = changed
            }
        case .recoverEmail:
            throw AuthError("INVALID_REQ_TYPE")
        }
        // A new address gets the link: following it proves the user holds it.
        let recipient = newEmail ?? email
        if !request.returnLink, email.isEmpty == false, self.email.mailer == nil, !policy.emulator {
            throw AuthError("EMAIL_NOT_CONFIGURED", detail: "this server has no mail server to send email with")
        }
        if !request.returnLink {
            let key = "email:" + recipient
            switch emailsSent.admit(key) {
            case .blocked:
                throw request.kind == .passwordReset ? AuthError("RESET_PASSWORD_EXCEED_LIMIT") : .tooManyAttempts
            case .admitted, .busy:
                emailsSent.finish(key, failed: true)
            }
        }
        let code = ActionCode(
            kind: request.kind, uid: uid, email: email, newEmail: newEmail, createdAt: clock(),
            expiresAt: clock() + Self.lifetime(request.kind), continueURL: request.continueURL)
        let values = ["email": email, "newEmail": newEmail ?? "", "displayName": displayName ?? ""]
        let send: @Sendable () async throws(AuthError) -> IssuedActionCode = { [self] () async throws(AuthError) -> IssuedActionCode in
            let issued = try await issueActionCode(code, actionURL: actionURL)
            if !request.returnLink { try await deliver(request.kind, to: recipient, link: issued.link, values: values) }
            return IssuedActionCode(email: recipient, code: issued.code, link: issued.link)
        }
        if request.isAdmin { return try await send() }
        if known, policy.emulator, self.email.mailer == nil {
            // The emulator's codes are listed (not mailed), and tests read the listing right
            // after the request: the code is there by the time it is answered. (Its timing
            // reveals nothing an emulator hides.)
            _ = try? await send()
        } else if known {
            sendInBackground(request.kind.rawValue) { () async throws(AuthError) in _ = try await send() }
        }
        return IssuedActionCode(email: recipient, code: "", link: "")
    }

    /// The page a link opens: `actionURL` (or the configured one) on `domain` when one is asked for.
    private func linkPage(_ actionURL: String?, domain: String?) throws(AuthError) -> String? {
        guard let domain, !domain.isEmpty else { return actionURL }
        // Firebase takes only a Hosting domain of the project; Hearth's are the hosts it serves.
        guard policy.linkDomains.contains(domain.lowercased()) else {
            throw AuthError(
                "INVALID_HOSTING_LINK_DOMAIN",
                detail: "The provided Hosting link domain is not configured in Firebase Hosting or is not owned by the current project.")
        }
        var page = URLComponents(string: actionURL ?? email.actionURL) ?? URLComponents()
        page.host = domain.lowercased()
        return page.string
    }

    /// Stores a new code for `code` and makes its link.
    private func issueActionCode(_ code: ActionCode, actionURL: String?) async throws(AuthError) -> (code: String, link: String) {
        let text = Self.newCodeText()
        let link = actionLink(code.kind, code: text, continueURL: code.continueURL, actionURL: actionURL)
        let digest = Self.digest(text)
        let listed = policy.emulator ? (code: text, link: link) : nil
        try await withStore { try await store.addActionCode(digest: digest, code, listed: listed) }
        return (text, link)
    }

    /// 256 random bits, base64url: a code's text (kept only as its digest).
    static func newCodeText() -> String {
        TokenIssuer.base64URL(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) })
    }

    /// The link that opens a code, with Firebase's parameters.
    func actionLink(_ kind: ActionCode.Kind, code text: String, continueURL: String?, actionURL: String?) -> String {
        var components = URLComponents(string: actionURL ?? email.actionURL) ?? URLComponents()
        var items = [
            URLQueryItem(name: "mode", value: kind.mode), URLQueryItem(name: "oobCode", value: text),
            URLQueryItem(name: "apiKey", value: "hearth"),
        ]
        if let continueURL { items.append(URLQueryItem(name: "continueUrl", value: continueURL)) }
        items.append(URLQueryItem(name: "lang", value: "en"))
        components.queryItems = (components.queryItems ?? []) + items
        return components.string ?? ""
    }

    /// Sends an email after the request is answered, at most ``maxBackgroundEmails`` at once
    /// (more are dropped and logged: a flood of requests cannot open a flood of connections).
    private func sendInBackground(_ kind: String, _ send: @escaping @Sendable () async throws(AuthError) -> Void) {
        let admitted = backgroundEmails.withLock { count in
            guard count < Self.maxBackgroundEmails else { return false }
            count += 1
            return true
        }
        guard admitted else {
            logger.warning("an email was dropped: too many are being sent", metadata: ["kind": "\(kind)"])
            return
        }
        let logger = logger
        Task {
            defer { self.backgroundEmails.withLock { $0 -= 1 } }
            do {
                try await send()
            } catch {
                logger.error("an email was not sent", metadata: ["kind": "\(kind)", "error": "\(error)"])
            }
        }
    }

    /// Emails a code's link with the operator's template.
    private func deliver(_ kind: ActionCode.Kind, to address: String, link: String, values: [String: String]) async throws(AuthError) {
        guard let mailer = email.mailer else {
            if policy.emulator {
                // As Firebase's emulator does: the link is shown, not sent (and listed at
                // /emulator/v1/projects/<id>/oobCodes).
                logger.info("an email would be sent", metadata: ["to": "\(address)", "kind": "\(kind.rawValue)", "link": "\(link)"])
                return
            }
            throw AuthError("EMAIL_NOT_CONFIGURED", detail: "this server has no mail server to send email with")
        }
        var all = values
        all["appName"] = email.appName
        all["link"] = link
        let rendered = email.templates.render(kind, values: all)
        let message = MailMessage(from: email.sender, to: address, subject: rendered.subject, text: rendered.text, html: rendered.html)
        do {
            try await mailer.send(message)
        } catch {
            logger.error("an email could not be sent", metadata: ["kind": "\(kind.rawValue)", "error": "\(error)"])
            throw AuthError("EMAIL_SEND_FAILED", detail: "the mail server did not take the message")
        }
        logger.info("email sent", metadata: ["kind": "\(kind.rawValue)"])
    }

    // MARK: - Using codes

    /// What a code does, without using it up (`accounts:resetPassword` with only an `oobCode`).
    public func inspectActionCode(_ code: String?) async throws(AuthError) -> ActionCode {
        guard let code, !code.isEmpty else { throw AuthError("MISSING_OOB_CODE") }
        let digest = Self.digest(code)
        let now = clock()
        return try await withStore { try await store.actionCode(digest: digest, now: now) }
    }

    /// Sets a new password with a reset code; every session of the account ends. Returns the code.
    public func resetPassword(code: String?, newPassword: String?) async throws(AuthError) -> ActionCode {
        guard let code, !code.isEmpty else { throw AuthError("MISSING_OOB_CODE") }
        let password = try checkedPassword(newPassword)
        let digest = Self.digest(code)
        // A made-up code is refused before the (costly) hashing; the transaction below checks again.
        guard try await inspectActionCode(code).kind == .passwordReset else { throw AuthError.invalidOOBCode }
        let hash = try await hashed(password)
        let now = clock()
        return try await withStore {
            try await store.consumeActionCode(digest: digest, now: now) { found in
                guard found.kind == .passwordReset, let uid = found.uid else { throw AuthError.invalidOOBCode }
                return .uid(uid)
            } apply: { found, user in
                guard var user, user.email == found.email else { throw AuthError.invalidOOBCode }
                user.passwordHash = hash
                user.passwordUpdatedAt = now
                // The reset came through the inbox: the address is the user's.
                user.emailVerified = true
                user.validSince = now / 1000
                if user.provider == "anonymous" { user.provider = "password" }
                // Every session ends, and other reset and sign-in links of the account stop working.
                return (AccountChange(user: user, revokesSessions: true, deletesActionCodes: true), found)
            }
        }
    }

    /// Applies a verification or email-change code (`accounts:update` with an `oobCode`).
    public func applyActionCode(_ code: String?) async throws(AuthError) -> UserRecord {
        guard let code, !code.isEmpty else { throw AuthError("MISSING_OOB_CODE") }
        let digest = Self.digest(code)
        let now = clock()
        // An email change tells the old address, with a link that changes it back.
        let recoveryText = Self.newCodeText()
        let recoveryLink = actionLink(.recoverEmail, code: recoveryText, continueURL: nil, actionURL: nil)
        let listed = policy.emulator ? (code: recoveryText, link: recoveryLink) : nil
        let recovery = Self.digest(recoveryText)
        let (user, previousEmail) = try await withStore {
            try await store.consumeActionCode(digest: digest, now: now) { found in
                guard let uid = found.uid else { throw AuthError.invalidOOBCode }
                return .uid(uid)
            } apply: { found, user -> (AccountChange, (UserRecord, String?)) in
                guard var user else { throw AuthError.invalidOOBCode }
                var change = AccountChange()
                var previous: String?
                switch found.kind {
                case .verifyEmail:
                    guard user.email == found.email else { throw AuthError.invalidOOBCode }
                    user.emailVerified = true
                case .verifyAndChangeEmail:
                    guard user.email == found.email, let newEmail = found.newEmail else { throw AuthError.invalidOOBCode }
                    previous = user.email
                    user.email = newEmail
                    user.emailVerified = true
                    // A new address is a major change: every session ends, as with a new password,
                    // and codes sent to the old address stop working.
                    user.validSince = now / 1000
                    change.revokesSessions = true
                    change.deletesActionCodes = true
                    change.newActionCode = AccountChange.NewActionCode(
                        digest: recovery,
                        code: ActionCode(
                            kind: .recoverEmail, uid: user.uid, email: newEmail, newEmail: found.email, createdAt: now,
                            expiresAt: now + Self.lifetime(.recoverEmail)),
                        listed: listed)
                case .recoverEmail:
                    guard user.email == found.email, let original = found.newEmail else { throw AuthError.invalidOOBCode }
                    user.email = original
                    user.emailVerified = true
                    // Someone else may have changed it: their sessions end too.
                    user.validSince = now / 1000
                    change.revokesSessions = true
                    change.deletesActionCodes = true
                case .passwordReset, .emailSignIn:
                    throw AuthError.invalidOOBCode
                }
                change.user = user
                return (change, (user, previous))
            }
        }
        if let previousEmail, let changed = user.email {
            let values = ["email": previousEmail, "newEmail": changed, "displayName": user.displayName ?? ""]
            sendInBackground(ActionCode.Kind.recoverEmail.rawValue) { () async throws(AuthError) in
                try await self.deliver(.recoverEmail, to: previousEmail, link: recoveryLink, values: values)
            }
        }
        return user
    }

    /// Signs in with an emailed sign-in link: the account is made on first use, its email
    /// verified. With `idToken`, the address is linked to that (signed-in) account instead.
    public func signIn(emailLinkCode code: String?, email address: String?, idToken: String? = nil) async throws(AuthError) -> Session {
        guard let code, !code.isEmpty else { throw AuthError("MISSING_OOB_CODE") }
        let email = try checkedEmail(address)
        var linking: UserRecord?
        if let idToken {
            let (verified, claims) = try await verifiedUser(idToken: idToken)
            // A token taken from a page must not turn into a new address for an account that has a way in.
            if Self.hasCredential(verified) { try checkRecentSignIn(claims) }
            linking = verified
        }
        let linkingUID = linking?.uid
        let digest = Self.digest(code)
        let now = clock()
        var created = UserRecord(
            uid: Self.newUID(), email: email, emailVerified: true, provider: "password", createdAt: now, lastLoginAt: now,
            validSince: now / 1000)
        created.emailLinkSignIn = true
        if linking == nil, let hooks = blockingHooks, hooks.handles(.beforeCreate) {
            // Asked only for a code that works, about an account the code would make.
            let found = try await withStore { try await store.actionCode(digest: digest, now: now) }
            guard found.kind == .emailSignIn else { throw AuthError.invalidOOBCode }
            guard found.email == email else { throw AuthError.invalidEmail }
            if try await withStore({ try await store.user(email: email) }) == nil {
                try await beforeCreate(&created, method: "emailLink")
            }
        }
        let newUser = created
        let (user, isNew) = try await withStore {
            try await store.consumeActionCode(digest: digest, now: now) { found in
                guard found.kind == .emailSignIn else { throw AuthError.invalidOOBCode }
                guard found.email == email else { throw AuthError.invalidEmail }
                // Linking: the signed-in account; otherwise the account the address belongs to
                // now (the one the code was made for may have moved to another address since).
                return linkingUID.map { .uid($0) } ?? .email(email)
            } apply: { _, found -> (AccountChange, (UserRecord, Bool)) in
                if linkingUID != nil {
                    guard var user = found else { throw AuthError.userNotFound }
                    guard user.email == nil || user.email == email else {
                        throw AuthError("INVALID_EMAIL", detail: "the account has another email address; change it with a verification link")
                    }
                    user.email = email
                    user.emailVerified = true
                    user.emailLinkSignIn = true
                    user.lastLoginAt = now
                    if user.provider == "anonymous" { user.provider = "password" }
                    return (AccountChange(user: user), (user, false))
                }
                if var user = found {
                    guard !user.disabled else { throw AuthError.userDisabled }
                    let claimed = Self.claimUnverifiedAccount(&user, now: now)
                    user.emailVerified = true
                    user.emailLinkSignIn = true
                    user.lastLoginAt = now
                    return (AccountChange(user: user, revokesSessions: claimed), (user, false))
                }
                return (AccountChange(user: newUser, isNew: true), (newUser, true))
            }
        }
        if isNew { logger.info("account created", metadata: ["uid": "\(user.uid)", "provider": "emailLink"]) }
        guard !user.disabled else { throw .userDisabled }
        var admitted = user
        var sessionClaims = Node.null
        if linkingUID == nil { (admitted, sessionClaims) = try await beforeSignIn(user, method: "emailLink") }
        return try await session(for: admitted, provider: "password", isNewUser: isNew, sessionClaims: sessionClaims)
    }

    /// The codes kept for the emulator's listing.
    public func listedActionCodes() async throws(AuthError) -> [ListedActionCode] {
        try await withStore { try await store.listedActionCodes() }
    }

    /// Clears the emulator's listing.
    public func clearListedActionCodes() async throws(AuthError) {
        try await withStore { try await store.clearListedActionCodes() }
    }
}
