import HearthCore

/// What a client asks of the server (docs/protocol.md §7).
public enum RealtimeRequest: Sendable {
    /// `s`: the client's statistics, acknowledged and otherwise ignored.
    case stats
    /// `auth` (a JWT) or `gauth` (another credential, such as the emulator's `owner`), with an
    /// admin's optional override of the `auth` variable (`authvar`, or `noauth` for signed out).
    case auth(credential: String, override: AuthOverride?)
    /// `unauth`: back to signed out.
    case unauth
    /// `appcheck` / `unappeck`: App Check tokens, acknowledged (Hearth has no App Check).
    case appCheck
    /// `q`: listen at `path`, optionally to a query view under a `tag`; `hash` is the hash of
    /// the data the client has cached there.
    case listen(path: Path, view: QueryView, hash: String?)
    /// `n`: stop listening.
    case unlisten(path: Path, view: QueryView)
    /// `g`: read once.
    case get(path: Path, view: QueryView)
    /// `p`: set `data` at `path`; with `hash`, only if the current value's hash matches.
    case put(path: Path, data: JSONParser.Parsed, hash: String?)
    /// `m`: set each relative path of `data` under `path`, atomically.
    case merge(path: Path, data: [(path: Path, value: JSONParser.Parsed)])
    /// `o`, `om`, `oc`: the same, kept for when the connection ends; `oc` cancels what is kept
    /// at and below `path`.
    case onDisconnectPut(path: Path, data: JSONParser.Parsed)
    case onDisconnectMerge(path: Path, data: [(path: Path, value: JSONParser.Parsed)])
    case onDisconnectCancel(path: Path)
    /// An action Hearth does not know: answered with an error, the connection stays.
    case unknown(String)

    /// An admin's stand-in for the `auth` variable.
    public enum AuthOverride: Sendable, Equatable {
        /// `authvar`: the rules see this object as `auth`.
        case auth(Node)
        /// `noauth`: the rules see a signed-out client.
        case signedOut
    }

    /// A listen's view: the whole location, or a query under the client's tag, with the query
    /// object as sent (echoed back when the listen is revoked).
    public struct QueryView: Sendable {
        /// The query; nil for the whole location.
        public var query: Query?
        /// The client's tag for the query view, echoed on its data pushes; nil for the whole location.
        public var tag: Int64?
        /// The query object's JSON as the client sent it; nil for a whole location.
        public var queryObject: [UInt8]?

        init(query: Query?, tag: Int64?, queryObject: [UInt8]?) {
            self.query = query
            self.tag = tag
            self.queryObject = queryObject
        }

        /// The whole location, without a query.
        public static let whole = QueryView(query: nil, tag: nil, queryObject: nil)
    }

    init(action: String, body: RealtimeFields) throws(RealtimeProtocolError) {
        switch action {
        case "s": self = .stats
        case "auth", "gauth":
            var override: AuthOverride?
            if case .bool(true) = try body.optionalValue("noauth") ?? .null {
                override = .signedOut
            } else if let variable = try body.optionalValue("authvar") {
                guard variable.children != nil || variable.isNull else { throw .malformed("authvar must be an object.") }
                override = .auth(variable)
            }
            self = .auth(credential: try body.string("cred"), override: override)
        case "unauth": self = .unauth
        case "appcheck", "unappeck": self = .appCheck
        case "q": self = .listen(path: try body.path(), view: try body.view(), hash: try body.optionalString("h"))
        case "n", "u": self = .unlisten(path: try body.path(), view: try body.view())
        case "l": self = .listen(path: try body.path(), view: try body.view(), hash: try body.optionalString("h"))
        case "g": self = .get(path: try body.path(), view: try body.view())
        case "p": self = .put(path: try body.path(allowPriority: true), data: try body.data(), hash: try body.optionalString("h"))
        case "m": self = .merge(path: try body.path(), data: try body.update())
        case "o": self = .onDisconnectPut(path: try body.path(allowPriority: true), data: try body.data())
        case "om": self = .onDisconnectMerge(path: try body.path(), data: try body.update())
        case "oc": self = .onDisconnectCancel(path: try body.path())
        default: self = .unknown(action)
        }
    }
}
