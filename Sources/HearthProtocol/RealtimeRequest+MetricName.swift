import HearthCore

extension RealtimeRequest {
    /// The request's kind as the server's metrics name it (a fixed set).
    public var metricName: String {
        switch self {
        case .stats: "stats"
        case .auth: "auth"
        case .unauth: "unauth"
        case .appCheck: "appcheck"
        case .listen(_, let view, _): view.query == nil ? "listen" : "listen_query"
        case .unlisten: "unlisten"
        case .get: "get"
        case .put(_, _, let hash): hash == nil ? "put" : "transaction"
        case .merge: "merge"
        case .onDisconnectPut: "ondisconnect_put"
        case .onDisconnectMerge: "ondisconnect_merge"
        case .onDisconnectCancel: "ondisconnect_cancel"
        case .unknown: "unknown"
        }
    }
}

extension RealtimeRequest {
    /// The path the request is about, for the request log (nil for those about none).
    public var loggedPath: Path? {
        switch self {
        case .stats, .auth, .unauth, .appCheck, .unknown: nil
        case .listen(let path, _, _), .unlisten(let path, _), .get(let path, _), .put(let path, _, _), .merge(let path, _),
            .onDisconnectPut(let path, _), .onDisconnectMerge(let path, _), .onDisconnectCancel(let path):
            path
        }
    }
}
