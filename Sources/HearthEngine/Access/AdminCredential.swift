/// Decides whether a request carries admin credentials: the configured admin token (as
/// `Authorization: Bearer`, `access_token=` or `auth=`), or, in emulator mode, Firebase's
/// `owner` test token.
public struct AdminCredential: Sendable {
    let token: String?
    let emulator: Bool


    /// True when `presented` is the admin token (or, in emulator mode, `owner`).
    public func isAdmin(credential presented: String) -> Bool {
        if emulator && presented == "owner" { return true }
        guard let token, !token.isEmpty else { return false }
        // Compare without an early exit, so timing does not reveal how much matched.
        let left = Array(presented.utf8)
        let right = Array(token.utf8)
        var difference = left.count ^ right.count
        for index in 0..<min(left.count, right.count) { difference |= Int(left[index] ^ right[index]) }
        return difference == 0
    }

    /// `token` is the configured admin token (nil or empty: none accepts); `emulator` also accepts `owner`.
    public init(token: String?, emulator: Bool) {
        self.token = token
        self.emulator = emulator
    }
}
