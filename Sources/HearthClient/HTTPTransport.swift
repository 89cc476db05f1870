import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

extension HTTPClient {
    /// The client Hearth's SDK uses unless given another: like `HTTPClient.shared`, but allowing
    /// many connections to one server, since every listener holds one open (a stream) and
    /// requests must not wait behind them.
    public static let hearth = HTTPClient(
        eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
        configuration: HTTPClient.Configuration(
            connectionPool: HTTPClient.Configuration.ConnectionPool(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 1024)))
}

/// One HTTP exchange with a Hearth server, through AsyncHTTPClient (which streams response
/// bodies on Linux and Apple platforms alike).
struct HTTPTransport: Sendable {
    let client: HTTPClient
    /// The largest response body collected whole.
    static let maxBodyBytes = 512 << 20

    struct Response: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: ByteBuffer

        var bytes: [UInt8] { Array(body.readableBytesView) }
        var text: String { String(buffer: body) }
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    /// Sends a request and collects the whole answer.
    func send(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], body: ByteBuffer? = nil,
        timeout: TimeAmount = .seconds(60)
    ) async throws -> Response {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(body) }
        let response = try await client.execute(request, timeout: timeout)
        let collected = try await response.body.collect(upTo: Self.maxBodyBytes)
        return Response(status: Int(response.status.code), headers: response.headers, body: collected)
    }

    /// Sends a request whose body streams from `body`.
    func send<Body: AsyncSequence & Sendable>(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], streaming body: Body, length: Int64?,
        timeout: TimeAmount = .seconds(600)
    ) async throws -> Response where Body.Element == ByteBuffer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .stream(body, length: length.map { .known($0) } ?? .unknown)
        let response = try await client.execute(request, timeout: timeout)
        let collected = try await response.body.collect(upTo: Self.maxBodyBytes)
        return Response(status: Int(response.status.code), headers: response.headers, body: collected)
    }

    /// Opens a request whose answer is read as it arrives (a Server-Sent Events stream).
    func open(_ url: String, headers: [(String, String)]) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        // Streams stay open for hours: only the connection attempt is bounded.
        return try await client.execute(request, deadline: .distantFuture)
    }
}
