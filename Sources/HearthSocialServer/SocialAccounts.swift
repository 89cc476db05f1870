/// The accounts as the social app's server-side jobs use them.
public protocol SocialAccounts: Sendable {
    /// Disables (suspends) or enables an account; a disabled account's sessions end.
    /// - Returns: false when there is no such account.
    func setDisabled(_ disabled: Bool, uid: String) async throws -> Bool

    /// Sets or clears the `admin` custom claim, keeping the account's other claims.
    /// - Returns: false when there is no such account.
    func setAdmin(_ admin: Bool, uid: String) async throws -> Bool

    /// True when the account exists.
    func exists(uid: String) async throws -> Bool

    /// The accounts not used since `cutoff` (milliseconds since the epoch): made, signed in to
    /// and last refreshed before it.
    func unused(since cutoff: Int64) async throws -> [String]

    /// Deletes an account (its data goes through the account-deleted trigger).
    /// - Returns: false when there was no such account.
    func delete(uid: String) async throws -> Bool
}
