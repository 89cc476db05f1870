import HTTPTypes
import Hummingbird

/// Answers Google's API host names as Hearth's own paths, so a client that only talks to
/// Google (firebase-admin's auth module outside emulator mode calls
/// `https://identitytoolkit.googleapis.com/v1/…`, whatever it is configured with) reaches Hearth
/// when those names lead here: DNS or a hosts file on the client's network, and a certificate
/// it trusts, in front of Hearth (docs/deploy/README.md).
///
/// A request for `Host: identitytoolkit.googleapis.com` with path `/v1/accounts:lookup` is
/// answered as `/identitytoolkit.googleapis.com/v1/accounts:lookup`, the path the emulator
/// clients use. The storage hosts' paths (`/storage/v1/…`, `/v0/b/…`) are already Hearth's.
struct GoogleAPIHostMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext

    /// The hosts whose paths Hearth serves under a prefix of the host's name.
    static let prefixedHosts: Set<String> = [
        "identitytoolkit.googleapis.com", "securetoken.googleapis.com", "www.googleapis.com", "oauth2.googleapis.com",
    ]

    static let shortestHost = prefixedHosts.map(\.utf8.count).min() ?? 0

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let host = Self.prefixedHost(request.head.authority), let path = request.head.path, path.hasPrefix("/"),
            !path.hasPrefix("/\(host)/")
        else { return try await next(request, context) }
        var head = request.head
        head.path = "/" + host + path
        return try await next(Request(head: head, body: request.body), context)
    }

    /// The prefixed host `authority` names (without its port, in any case), or nil.
    static func prefixedHost(_ authority: String?) -> String? {
        // Cheap first: every request passes here, and almost none names one of these hosts.
        guard let authority, authority.utf8.count >= shortestHost else { return nil }
        let host = (authority.split(separator: ":", maxSplits: 1).first.map(String.init) ?? authority).lowercased()
        return prefixedHosts.contains(host) ? host : nil
    }
}
