import AsyncHTTPClient
import Foundation
import HearthCore
import NIOCore
import NIOHTTP1
import Synchronization

/// A Hearth database, reached over its Firebase-compatible REST and streaming API.
///
/// ```swift
/// let auth = Auth(url: server)
/// let database = Database(url: server, auth: auth)
/// let post = database.root.child("posts").childByAutoId()
/// try await post.setValue(Post(title: "Hello", body: "First!"))
/// for try await event in database.root.child("posts").queryLimited(toLast: 20).observe(.childAdded) { … }
/// ```
public final class Database: Sendable {
    /// The server, such as `http://127.0.0.1:9000`.
    public let url: URL
    /// The database name (`ns=`), or nil for the server's default.
    public let namespace: String?
    let transport: HTTPTransport
    let credentials: Credentials
    let clock: @Sendable () -> Int64
    private let pushIDs: Mutex<PushIDState>

    /// Who requests speak for.
    enum Credentials: Sendable {
        case none
        /// The signed-in user of an ``Auth``, with fresh ID tokens.
        case auth(Auth)
        /// A fixed token: an admin credential or an ID token.
        case token(String)
    }

    private struct PushIDState {
        var generator = PushIDGenerator()
        var random: any RandomNumberGenerator
    }

    /// - Parameters:
    ///   - url: the server.
    ///   - namespace: the database name, when not the server's default.
    ///   - auth: whose ID token requests carry (none: signed out).
    ///   - clock: milliseconds since the epoch, for push IDs.
    ///   - random: randomness for push IDs.
    public convenience init(
        url: URL, namespace: String? = nil, auth: Auth? = nil, httpClient: HTTPClient = .hearth,
        clock: @escaping @Sendable () -> Int64 = Database.systemClock,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.init(
            url: url, namespace: namespace, credentials: auth.map(Credentials.auth) ?? .none, httpClient: httpClient,
            clock: clock, random: random)
    }

    /// A database whose requests carry `token`: the server's admin token (rules do not apply),
    /// or an ID token.
    public convenience init(url: URL, namespace: String? = nil, token: String, httpClient: HTTPClient = .hearth) {
        self.init(url: url, namespace: namespace, credentials: .token(token), httpClient: httpClient)
    }

    init(
        url: URL, namespace: String?, credentials: Credentials, httpClient: HTTPClient,
        clock: @escaping @Sendable () -> Int64 = Database.systemClock,
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        self.url = url
        self.namespace = namespace
        self.credentials = credentials
        self.transport = HTTPTransport(client: httpClient)
        self.clock = clock
        self.pushIDs = Mutex(PushIDState(random: random))
    }

    public static let systemClock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The root of the tree (as the Quickstart design's `Database.root` shortcut).
    public var root: DatabaseReference { DatabaseReference(database: self, path: .root) }

    /// The reference at a `/`-separated path.
    public func reference(withPath path: String) -> DatabaseReference {
        root.child(path)
    }

    /// A new push ID: time-ordered, unique, made on this device as Firebase's SDKs do.
    func nextPushID() -> String {
        let now = clock()
        return pushIDs.withLock { state in state.generator.next(now: now, using: &state.random) }
    }

    // MARK: - Requests

    /// The URL of `path` with `parameters` (and the namespace).
    func url(for path: Path, parameters: [(String, String)] = []) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        for key in path.keys {
            text += "/" + (key.string.addingPercentEncoding(withAllowedCharacters: .pathSegmentAllowed) ?? key.string)
        }
        text += "/.json"
        var query = parameters
        if let namespace { query.append(("ns", namespace)) }
        if !query.isEmpty {
            text += "?" + query.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .queryValueAllowed) ?? $0.1)" }
                .joined(separator: "&")
        }
        return text
    }

    /// The `Authorization` header for the current credentials, if any.
    func authorizationHeaders() async throws -> [(String, String)] {
        switch credentials {
        case .none: return []
        case .token(let token): return [("Authorization", "Bearer \(token)")]
        case .auth(let auth):
            guard let token = try await auth.idToken() else { return [] }
            return [("Authorization", "Bearer \(token)")]
        }
    }

    /// Sends a database request and turns an error answer into a ``HearthClientError``.
    func send(
        _ method: HTTPMethod, _ path: Path, parameters: [(String, String)] = [], headers: [(String, String)] = [],
        body: [UInt8]? = nil, allowing allowed: Set<Int> = [200, 204]
    ) async throws -> HTTPTransport.Response {
        let response = try await transport.send(
            method, url(for: path, parameters: parameters), headers: try await authorizationHeaders() + headers,
            body: body.map { ByteBuffer(bytes: $0) })
        guard allowed.contains(response.status) else { throw Self.error(response) }
        return response
    }

    static func error(_ response: HTTPTransport.Response) -> HearthClientError {
        var message = response.text
        if let parsed = try? JSONParser.parse(response.bytes).node, case .string(let text) = parsed.child(ChildKey("error")) {
            message = text
        }
        return HearthClientError.from(status: response.status, message: message)
    }
}

extension CharacterSet {
    /// Characters a path segment keeps unencoded.
    static let pathSegmentAllowed: CharacterSet = {
        var set = CharacterSet.urlPathAllowed
        set.remove(charactersIn: "/?#%")
        return set
    }()

    /// Characters a query value keeps unencoded.
    static let queryValueAllowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: "&=+#?/")
        return set
    }()
}
