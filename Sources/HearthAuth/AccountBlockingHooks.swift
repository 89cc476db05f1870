/// The blocking functions of the server's accounts (HearthFunctions implements it): asked
/// before an account is made and before a user signs in, and waited for, up to
/// ``AuthService/Policy/blockingFunctionTimeout``.
///
/// Asked for sign-ups with an email and password, sign-ins with a password, an emailed link
/// or an identity provider (and the accounts those make), as Firebase asks them; not for
/// anonymous or custom-token sign-ins, token refreshes, or accounts admins make or import.
public protocol AccountBlockingHooks: Sendable {
    /// True when a function is registered for `kind` (nothing is asked otherwise).
    func handles(_ kind: AccountBlockingEvent.Kind) -> Bool

    /// Asks the function registered for the event's kind.
    /// - Throws: `BLOCKING_FUNCTION_ERROR_RESPONSE` when the function refuses (its error in the
    ///   detail), fails, or answers something unusable: the sign-up or sign-in is then refused.
    func run(_ event: AccountBlockingEvent) async throws(AuthError) -> AccountBlockingResponse
}
