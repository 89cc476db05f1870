import Hummingbird

extension HearthResponder {
    /// Which part of the server answered a request, as the metrics label it.
    enum Transport: String {
        case rest, sse, files, auth, session, web, admin, preflight
        case longPolling = "long-polling"
    }

    /// The account methods counted by name; any other path counts as `other`, so a client
    /// cannot make up label values.
    static let authMethods: Set<String> = [
        "signUp", "signInWithPassword", "signInWithCustomToken", "signInWithIdp", "signInWithEmailLink",
        "createAuthUri", "sendOobCode", "resetPassword", "update", "lookup", "delete", "query", "batchCreate",
        "batchGet", "batchDelete", "createSessionCookie", "token",
    ]

    /// The operation a request is counted under: the HTTP method, or an account method's name.
    static func operation(of request: Request, transport: Transport) -> String {
        guard transport == .auth else { return request.method.rawValue.lowercased() }
        let path = request.uri.path
        let method: Substring
        if let colon = path.lastIndex(of: ":") {
            method = path[path.index(after: colon)...]
        } else {
            method = path.split(separator: "/").last ?? ""
        }
        return authMethods.contains(String(method)) ? String(method) : "other"
    }
}
