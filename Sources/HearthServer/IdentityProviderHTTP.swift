import AsyncHTTPClient
import Foundation
import HearthAuth
import NIOCore
import NIOHTTP1

/// Requests to identity providers through AsyncHTTPClient (the shared client: TLS with the
/// system's trust store, redirects not followed), each bounded in time and size.
struct IdentityProviderHTTP: HTTPFetching {
    let client: HTTPClient
    var timeout: TimeAmount = .seconds(15)

    func fetch(_ request: OutboundRequest) async throws -> OutboundResponse {
        var outbound = HTTPClientRequest(url: request.url)
        outbound.method = HTTPMethod(rawValue: request.method)
        for (name, value) in request.headers { outbound.headers.add(name: name, value: value) }
        if let body = request.body { outbound.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(outbound, timeout: timeout)
        let body = try await response.body.collect(upTo: 1 << 20)
        return OutboundResponse(status: Int(response.status.code), body: Data(body.readableBytesView))
    }
}
