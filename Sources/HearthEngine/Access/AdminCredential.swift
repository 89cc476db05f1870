import HearthAuth

/// Decides whether a request carries admin credentials: the configured admin token (as
/// `Authorization: Bearer`, `access_token=` or `auth=`), an access token a service account got
/// from this server's token endpoint, or, in emulator mode, Firebase's `owner` test token.
public struct AdminCredential: Sendable {
    let token: String?
    let emulator: Bool
    /// Where service accounts' access tokens are checked; nil accepts none.
    let serviceAccounts: ServiceAccounts?

    /// True when `presented` is the admin token, a service account's working access token, or
    /// (in emulator mode) `owner`.
    public func isAdmin(credential presented: String) async -> Bool {
        if isAdminToken(presented) { return true }
        guard let serviceAccounts, presented.hasPrefix(TokenIssuer.accessTokenPrefix) else { return false }
        return await serviceAccounts.verify(accessToken: presented) != nil
    }

    /// True when `presented` is the admin token (or, in emulator mode, `owner`): the check that
    /// needs nothing but the configuration.
    func isAdminToken(_ presented: String) -> Bool {
        if emulator && presented == "owner" { return true }
        guard let token, !token.isEmpty else { return false }
        // Compare without an early exit, so timing does not reveal how much matched.
        let left = Array(presented.utf8)
        let right = Array(token.utf8)
        var difference = left.count ^ right.count
        for index in 0..<min(left.count, right.count) { difference |= Int(left[index] ^ right[index]) }
        return difference == 0
    }

    /// `token` is the configured admin token (nil or empty: none accepts); `emulator` also
    /// accepts `owner`; `serviceAccounts` checks service accounts' access tokens.
    public init(token: String?, emulator: Bool, serviceAccounts: ServiceAccounts? = nil) {
        self.token = token
        self.emulator = emulator
        self.serviceAccounts = serviceAccounts
    }
}
