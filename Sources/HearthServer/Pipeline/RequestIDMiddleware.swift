import HTTPTypes
import Hummingbird
import Logging

/// Names every request once, so that one answer can be found in the logs: the ID is in the
/// response's `X-Request-Id`, in every log line the request's logger writes, and in the
/// console's request log.
///
/// Hummingbird numbers requests itself; behind a trusted proxy that sends its own
/// `X-Request-Id` (nginx's `$request_id`), that one is used instead, so the proxy's access
/// log and Hearth's name a request alike. A client's own header is not believed (it could
/// make one request look like another in the logs), nor one that is not a short token.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = HearthRequestContext

    let proxies: ProxyTrust

    /// The longest ID taken from a proxy.
    static let maxLength = 128

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        if let forwarded = request.headers[.xRequestID], Self.isValid(forwarded), proxies.trusts(context.remoteAddress) {
            context.logger[metadataKey: "hb.request.id"] = .string(forwarded)
        }
        let id = context.id
        var response = try await next(request, context)
        response.headers[.xRequestID] = id
        return response
    }

    /// Letters, digits and `-._:` only, at most ``maxLength`` of them.
    static func isValid(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maxLength && id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"):
                true
            default: false
            }
        }
    }
}

extension HTTPField.Name {
    static let xRequestID = Self("X-Request-Id")!
}
