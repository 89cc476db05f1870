import Foundation
import HearthCore
import Logging

/// Blocking functions (``AccountBlockingHooks``) in the sign-up and sign-in flows. Each is
/// asked with a time limit (``Policy/blockingFunctionTimeout``); a function that fails, is too
/// slow or answers something unusable refuses the sign-up or sign-in, as in Firebase: a
/// blocking function guards who gets in, so its failure must not let anyone in.
extension AuthService {
    /// Asks the `beforeCreate` function about `user`, about to be stored, and applies its answer.
    func beforeCreate(_ user: inout UserRecord, method: String, federated: FederatedProfile? = nil) async throws(AuthError) {
        guard let hooks = blockingHooks, hooks.handles(.beforeCreate) else { return }
        let answer = try await ask(hooks, .beforeCreate, about: user, method: method, federated: federated)
        answer.apply(to: &user)
    }

    /// Asks the `beforeSignIn` function about `user` (stored), writes the account changes it
    /// answers, and returns the account and the claims for the session about to be issued.
    /// - Throws: `USER_DISABLED` when the answer disabled the account (written first, as in
    ///   Firebase), or what ``ask(_:_:about:method:federated:)`` throws.
    func beforeSignIn(
        _ user: UserRecord, method: String, federated: FederatedProfile? = nil
    ) async throws(AuthError) -> (user: UserRecord, sessionClaims: Node) {
        guard let hooks = blockingHooks, hooks.handles(.beforeSignIn), !user.disabled else { return (user, .null) }
        let answer = try await ask(hooks, .beforeSignIn, about: user, method: method, federated: federated)
        var changed = user
        if answer.displayName != nil || answer.photoURL != nil || answer.disabled != nil || answer.emailVerified != nil
            || answer.customClaims != nil
        {
            changed = try await withStore { try await store.modify(uid: user.uid) { current in answer.apply(to: &current) }.user }
        }
        guard !changed.disabled else { throw .userDisabled }
        return (changed, answer.sessionClaims ?? .null)
    }

    /// Asks `hooks` with the time limit; refusals and failures are `BLOCKING_FUNCTION_ERROR_RESPONSE`.
    private func ask(
        _ hooks: any AccountBlockingHooks, _ kind: AccountBlockingEvent.Kind, about user: UserRecord, method: String,
        federated: FederatedProfile?
    ) async throws(AuthError) -> AccountBlockingResponse {
        let event = AccountBlockingEvent(
            kind: kind, id: Self.blockingEventID(), user: user, signInMethod: method, client: SignInClient.current, time: clock(),
            federated: federated)
        let limit = policy.blockingFunctionTimeout
        let outcome = await firstWithin(limit) { () async -> Result<AccountBlockingResponse, AuthError> in
            do throws(AuthError) { return .success(try await hooks.run(event)) } catch { return .failure(error) }
        }
        switch outcome {
        case .success(let answer)?:
            return try answer.validated(for: kind)
        case .failure(let error)?:
            logger.info("a blocking function refused", metadata: ["event": "\(kind.rawValue)", "uid": "\(user.uid)", "error": "\(error)"])
            throw error
        case nil:
            logger.warning("a blocking function did not answer in time", metadata: ["event": "\(kind.rawValue)", "limit": "\(limit)"])
            let (seconds, fraction) = limit.components
            let said = fraction == 0 ? "\(seconds) seconds" : "\(limit / .milliseconds(1)) milliseconds"
            throw AccountBlockingResponse.refusal("The blocking function did not answer within \(said).")
        }
    }

    /// A random event ID in base64url (as Firebase's are).
    static func blockingEventID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return TokenIssuer.base64URL(Data(bytes))
    }
}
