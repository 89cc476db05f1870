/// What the resolver needs of a request.
public struct HostingRequest: Sendable, Hashable {
    /// `GET`, `HEAD`, `POST`, … in upper case.
    public var method: String
    /// The URL path as sent, still percent-encoded (`/caf%C3%A9/`).
    public var path: String
    /// The query without its `?` (`a=1&b=2`), kept on redirects; nil or empty when there is none.
    public var query: String?

    public init(method: String = "GET", path: String, query: String? = nil) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
    }

    /// Whether the method reads (`GET` or `HEAD`), the only ones a file answers.
    public var isRead: Bool { method == "GET" || method == "HEAD" }
}
