/// How the server answers a request for a hosted site, as ``HostingResolver`` decides it.
public struct HostingDecision: Sendable, Hashable {
    /// What to send.
    public enum Action: Sendable, Hashable {
        /// Firebase's reserved namespace (`/__/…`): the server's own URLs (the SDK's
        /// configuration and files, the auth pages), with the decoded path.
        case reserved(String)
        /// The file at this path of the public folder (`about/index.html`, no leading slash),
        /// with this status: 200, or 404 for the site's `404.html`.
        case file(String, status: Int)
        /// A redirect to this location (the request's query kept) with this status.
        case redirect(location: String, status: Int)
        /// An HTTPS function, passed the request whatever its method.
        case function(name: String, region: String?)
        /// Nothing is there and the site has no `404.html`: the server's own 404 page.
        case notFound
        /// A file answers only `GET` and `HEAD` (send `Allow: GET, HEAD`).
        case methodNotAllowed
        /// A path that cannot be served (an encoded slash, a NUL, `..` above the root, bad escapes).
        case badRequest
    }

    public let action: Action
    /// The response headers from the site's `headers` rules (merged: a later rule's value
    /// replaces an earlier one's), and for files `Cache-Control: max-age=3600` unless a rule
    /// set one, as Firebase Hosting sends.
    public let headers: [HostingHeader]

    public init(_ action: Action, headers: [HostingHeader] = []) {
        self.action = action
        self.headers = headers
    }

    /// The value of the header `name` (case-insensitive), if set.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
