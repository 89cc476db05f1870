/// One of `hosting.rewrites`: requests whose path matches ``source`` are answered by a file of
/// the site or by a function, with the URL unchanged.
public struct HostingRewrite: Sendable {
    /// What answers a rewritten request.
    public enum Target: Sendable, Hashable {
        /// A file of the site, by its path from the site's root (`/index.html`).
        case path(String)
        /// An HTTPS function (`"function": "api"` or `{"functionId": "api", "region": "europe-west1"}`).
        case function(name: String, region: String?)
    }

    public let source: HostingSource
    public let target: Target

    public init(source: HostingSource, target: Target) {
        self.source = source
        self.target = target
    }
}
