import AsyncHTTPClient
import Foundation
import HearthAuth
import HearthEngine
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization

/// Requests to identity providers (discovery, keys, token exchange, user info) through an
/// AsyncHTTPClient of their own: redirects are not followed (a token request's client secret
/// must not be re-sent elsewhere), and each request, body included, has 15 seconds and 1 MiB.
///
/// The client is made on first use and shut down with the server (``ShutdownService``), so a
/// server that never signs anyone in with a provider opens nothing.
final class IdentityProviderHTTP: HTTPFetching {
    private enum State {
        case unused
        case running(HTTPClient)
        case closed
    }

    private let state = Mutex<State>(.unused)
    private let limit: Duration

    init(limit: Duration = .seconds(15)) {
        self.limit = limit
    }

    func fetch(_ request: OutboundRequest) async throws -> OutboundResponse {
        let client = try state.withLock { state -> HTTPClient in
            switch state {
            case .running(let client):
                return client
            case .unused:
                let configuration = HTTPClient.Configuration(
                    redirectConfiguration: .disallow,
                    timeout: HTTPClient.Configuration.Timeout(connect: .seconds(10), read: .seconds(15)))
                let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
                state = .running(client)
                return client
            case .closed:
                throw CancellationError()
            }
        }
        var outbound = HTTPClientRequest(url: request.url)
        outbound.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outbound.headers.add(name: name, value: value) }
        if let body = request.body { outbound.body = .bytes(ByteBuffer(bytes: body)) }
        let limit = limit
        let prepared = outbound
        // The whole exchange, the body included, within the limit: a provider that drips its
        // answer cannot hold a sign-in open.
        return try await withThrowingTaskGroup(of: OutboundResponse?.self) { group in
            group.addTask {
                let response = try await client.execute(prepared, timeout: .seconds(Int64(limit.components.seconds)))
                let body = try await response.body.collect(upTo: 1 << 20)
                return OutboundResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else {
                throw HTTPClientError.deadlineExceeded
            }
            return response
        }
    }

    /// Shuts the client down (if one was made); later requests fail.
    func shutdown() async {
        let client = state.withLock { state -> HTTPClient? in
            defer { state = .closed }
            if case .running(let client) = state { return client }
            return nil
        }
        try? await client?.shutdown()
    }

    /// Shuts the client down when the server stops.
    struct ShutdownService: Service {
        let http: IdentityProviderHTTP

        func run() async throws {
            try? await gracefulShutdown()
            await http.shutdown()
        }
    }
}
