import HTTPTypes
import HearthEngine
import Hummingbird

/// Caps the requests a trusted proxy forwards for one client (`X-Forwarded-For`) that are in
/// flight at once, responses being written included, at the cap one address has on its own
/// connections (``ConnectionLimits/maxConnectionsPerAddress``). Past it: `429`.
///
/// A proxy's own connections are exempt from the per-address cap (``ConnectionGate``): behind
/// nginx every connection comes from 127.0.0.1, and the client it stands for is known only
/// once a request's head is read. Requests from a trusted peer that name no client (a tool on
/// the server's own machine) are not capped.
struct ForwardedClientLimit<Responder: HTTPResponder>: HTTPResponder where Responder.Context == HearthRequestContext {
    typealias Context = HearthRequestContext

    let responder: Responder
    let gate: ConnectionGate

    func respond(to request: Request, context: Context) async throws -> Response {
        guard gate.limits.maxConnectionsPerAddress != nil,
            let client = gate.proxies.forwardedClient(of: request, peer: context.remoteAddress)
        else {
            return try await responder.respond(to: request, context: context)
        }
        guard let lease = gate.lease(forwardedFor: client) else { return Self.tooManyRequests() }
        // A thrown error drops the lease, which gives the place back.
        var response = try await responder.respond(to: request, context: context)
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            defer { lease.release() }
            try await body.write(writer)
        }
        return response
    }

    static func tooManyRequests() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.retryAfter] = "5"
        var response = Response(
            status: .tooManyRequests, headers: headers,
            body: ResponseBody(byteBuffer: .init(string: "Too many requests in flight for this client.\n")))
        CORS.decorate(&response)
        SecurityHeaders.apply(.api, to: &response.headers)
        return response
    }
}
