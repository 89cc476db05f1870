import Hummingbird

/// Decides whether a request carries admin credentials: the configured admin token (as
/// `Authorization: Bearer`, `access_token=` or `auth=`), or, in emulator mode, Firebase's
/// `owner` test token.
struct AdminCredential: Sendable {
    let token: String?
    let emulator: Bool

    /// The credential a request presents, if any.
    static func presented(by request: Request, parameters: [String: String]) -> String? {
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            // Firebase Storage's SDKs send `Authorization: Firebase <ID token>`.
            if parts.count == 2, ["bearer", "firebase"].contains(parts[0].lowercased()) { return String(parts[1]) }
        }
        return parameters["access_token"] ?? parameters["auth"]
    }

    func isAdmin(_ request: Request, parameters: [String: String]) -> Bool {
        guard let presented = Self.presented(by: request, parameters: parameters) else { return false }
        return isAdmin(credential: presented)
    }

    /// True when `presented` is the admin token (or, in emulator mode, `owner`).
    func isAdmin(credential presented: String) -> Bool {
        if emulator && presented == "owner" { return true }
        guard let token, !token.isEmpty else { return false }
        // Compare without an early exit, so timing does not reveal how much matched.
        let left = Array(presented.utf8)
        let right = Array(token.utf8)
        var difference = left.count ^ right.count
        for index in 0..<min(left.count, right.count) { difference |= Int(left[index] ^ right[index]) }
        return difference == 0
    }
}
