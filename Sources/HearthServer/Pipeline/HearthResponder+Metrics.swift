import Foundation
import HearthEngine
import Hummingbird
import HummingbirdCore

extension HearthResponder {
    /// Which part of the server answered a request, as the metrics label it.
    enum Transport: String {
        case rest, sse, files, auth, session, web, admin, preflight, functions
        case longPolling = "long-polling"
    }

    /// The account methods counted by name; any other path counts as `other`, so a client
    /// cannot make up label values.
    static let authMethods: Set<String> = [
        "signUp", "signInWithPassword", "signInWithCustomToken", "signInWithIdp", "signInWithEmailLink",
        "createAuthUri", "sendOobCode", "resetPassword", "update", "lookup", "delete", "query", "batchCreate",
        "batchGet", "batchDelete", "createSessionCookie", "token",
        // v3's names (SDK 8), besides `resetPassword` and `createAuthUri`.
        "signupNewUser", "verifyPassword", "verifyCustomToken", "getAccountInfo", "setAccountInfo", "deleteAccount",
        "getOobConfirmationCode", "verifyAssertion", "emailLinkSignin",
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

extension HearthResponder {
    /// Query parameters whose values are credentials, one-time codes or capabilities: an
    /// access log and the request log show them as `***`. Compared without regard to case.
    /// `key` (a Firebase API key, public by design) is kept; `upload_id` is a resumable upload's
    /// capability (its URL is all a client needs to add to the upload); `ac` carries an App
    /// Check token on realtime URLs.
    static let secretParameters: Set<String> = [
        "auth", "access_token", "id_token", "idtoken", "refresh_token", "token", "oobcode", "pw", "password", "code",
        "state", "nonce", "session", "ac", "upload_id", "client_secret",
    ]

    /// The monitoring reads that the console (every few seconds while a page shows them) and
    /// Prometheus poll: the request log leaves them out, or they would crowd out the rest.
    static let monitoringPaths: Set<String> = [
        RequestLogResponder.path, RecentLogsResponder.path, StatsResponder.path, MetricsResponder.path,
    ]

    /// The path and query of `uri` for a log line, with secret values hidden: the
    /// ``secretParameters`` anywhere, and on long-polling (`/.lp`) the client's messages
    /// (``RealtimeLongPolling/isMessageParameter(_:)``), which carry its `auth` requests and
    /// their ID tokens.
    static func loggablePath(_ uri: URI) -> String {
        loggablePath(uri, path: uri.path)
    }

    /// The same, given `uri.path` (each read of it makes a new string).
    static func loggablePath(_ uri: URI, path: String) -> String {
        guard let query = uri.query, !query.isEmpty else { return path }
        let longPolling = path == RealtimeLongPolling.path
        let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
            guard let equals = part.firstIndex(of: "=") else { return String(part) }
            let name = part[..<equals]
            let decoded = (name.removingPercentEncoding ?? String(name)).lowercased()
            let secret = secretParameters.contains(decoded) || (longPolling && RealtimeLongPolling.isMessageParameter(decoded))
            return secret ? "\(name)=***" : String(part)
        }
        return path + "?" + parts.joined(separator: "&")
    }

    /// True for the ``monitoringPaths``; most paths are told apart without hashing them.
    static func isMonitoringPath(_ path: String) -> Bool {
        (path.hasPrefix("/.hearth/") || path == MetricsResponder.path) && monitoringPaths.contains(path)
    }
}

/// Entry points for tests of what stays internal to the responder.
public enum HearthResponderTestHooks {
    /// ``HearthResponder/loggablePath(_:)`` of `text` (a path with its query).
    public static func loggablePath(_ text: String) -> String {
        HearthResponder.loggablePath(URI(text))
    }
}
