import Foundation

/// An HTTP request to an identity provider.
public struct OutboundRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: Data?

    public init(method: String = "GET", url: String, headers: [(String, String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.method == rhs.method && lhs.url == rhs.url && lhs.body == rhs.body
            && lhs.headers.map { "\($0.0):\($0.1)" } == rhs.headers.map { "\($0.0):\($0.1)" }
    }
}

/// An identity provider's answer.
public struct OutboundResponse: Sendable {
    public var status: Int
    public var body: Data

    public init(status: Int, body: Data) {
        self.status = status
        self.body = body
    }
}

/// Makes HTTP requests to identity providers (discovery, keys, token exchange, user info).
/// The server passes one made with AsyncHTTPClient; the account service itself does no I/O
/// of its own, so it is tested with any fetcher.
public protocol HTTPFetching: Sendable {
    func fetch(_ request: OutboundRequest) async throws -> OutboundResponse
}
