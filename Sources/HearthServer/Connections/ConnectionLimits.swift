import HearthEngine
/// How long a connection may take over each part of an HTTP/1 exchange, and how many
/// connections the server holds at once (``ServerConfiguration/connectionLimits``; `hearth serve
/// --header-timeout`, `--body-timeout`, `--idle-timeout`, `--max-connections-per-address`,
/// `--max-connections`).
///
/// Without these a client that opens connections and sends nothing, or sends a header line
/// every few seconds (slowloris), holds a descriptor each for as long as it likes, until the
/// process has none left for new clients or for its own databases.
///
/// The timeouts apply while the server waits for the client. While a response is being sent
/// nothing times out: event streams (`Accept: text/event-stream`) and long polls hold a response
/// open on purpose and have keep-alives of their own, and so do upgraded WebSockets, which leave
/// HTTP (and these timeouts) behind altogether.
public struct ConnectionLimits: Sendable, Equatable {
    /// How long a request's head (request line and headers) may take to arrive complete, from
    /// the connection's opening. Trickling header lines does not extend it.
    public var headerTimeout: Duration = .seconds(20)
    /// How long a request body may make no progress: no bytes arrive while the server is ready
    /// to read them. (While the server holds back, writing what it has, the clock stops.)
    public var bodyTimeout: Duration = .seconds(60)
    /// How long a kept-alive connection may wait, after a response, for the next request's
    /// complete head. Longer than the 60 s for which HTTP clients (AsyncHTTPClient, browsers)
    /// keep an idle connection, so they close first and do not reuse one the server is closing.
    public var idleTimeout: Duration = .seconds(75)
    /// Connections one peer address may hold at once; nil for no cap. Trusted proxies
    /// (``ServerConfiguration/trustedProxies``, and a peer on this machine) are exempt: the
    /// requests and streams they forward are capped by the forwarded client's address instead
    /// (`X-Forwarded-For`, as ``ProxyTrust`` reads it), to the same number.
    ///
    /// Many people behind one NAT share an address: a browser holds up to 6 connections to a
    /// host plus its WebSocket, so 256 leaves room for some 30 people at once.
    public var maxConnectionsPerAddress: Int? = 256
    /// Connections the server holds at once over all its listeners; nil for the process's
    /// descriptor limit (`RLIMIT_NOFILE`) less a reserve for its databases and files (see
    /// ``automaticMaxConnections(descriptorLimit:)``). Past it a new connection is answered 503
    /// and closed at once.
    public var maxConnections: Int?

    public init() {}

    /// The connection cap that leaves a process with `descriptorLimit` descriptors a reserve for
    /// databases (SQLite's database, WAL and shared-memory files per connection), files being
    /// served and uploaded, and the event loops: a tenth of the limit, at least 128, and never
    /// more than half of it. 1,024 descriptors allow 896 connections; 65,536 allow 58,983.
    public static func automaticMaxConnections(descriptorLimit: Int) -> Int {
        let reserve = max(128, descriptorLimit / 10)
        return max(descriptorLimit - reserve, descriptorLimit / 2)
    }
}
