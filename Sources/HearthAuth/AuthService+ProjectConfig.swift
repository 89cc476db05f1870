/// What the project tells clients about itself (Identity Toolkit's `getProjectConfig`).
extension AuthService {
    /// The domains a sign-in may return to and emailed links may continue to, sorted, as
    /// Firebase's clients check a page against them before a provider sign-in.
    ///
    /// When the policy allows any host (emulator mode), that is the loopback names and
    /// `pageHost`, the host of the page asking (its `Origin`), so a page on any host passes
    /// the client's check as it passes the server's.
    public func authorizedDomains(pageHost: String?) -> [String] {
        if let domains = policy.authorizedDomains { return domains.sorted() }
        var domains: Set<String> = ["localhost", "127.0.0.1"]
        if let pageHost, !pageHost.isEmpty { domains.insert(pageHost.lowercased()) }
        return domains.sorted()
    }
}
