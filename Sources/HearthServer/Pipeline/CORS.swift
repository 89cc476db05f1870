import HTTPTypes
import HearthEngine
import Hummingbird

/// Cross-origin access, so a web page on any origin can use the API as it can Firebase's:
/// every response allows any origin, and preflight `OPTIONS` requests are answered directly.
enum CORS {
    static let allowedMethods = "GET, PUT, POST, PATCH, DELETE, OPTIONS"
    static let defaultHeaders = "Authorization, Content-Type, X-Firebase-ETag, If-Match, If-None-Match, X-HTTP-Method-Override, X-Firebase-Decoding, Range, X-Goog-Upload-Protocol, X-Goog-Upload-Command, X-Goog-Upload-Offset, X-Goog-Upload-Header-Content-Length, X-Goog-Upload-Header-Content-Type"
    static let exposedHeaders = "ETag, Content-Length, Content-Range, Last-Modified, X-Goog-Upload-URL, X-Goog-Upload-Status, X-Goog-Upload-Size-Received, X-Goog-Upload-Chunk-Granularity, X-Request-Id"

    /// The answer to a preflight request.
    static func preflight(_ request: Request) -> Response {
        var headers = HTTPFields()
        headers[.accessControlAllowOrigin] = "*"
        headers[.accessControlAllowMethods] = allowedMethods
        headers[.accessControlAllowHeaders] = request.headers[.accessControlRequestHeaders] ?? defaultHeaders
        headers[.accessControlMaxAge] = "86400"
        return Response(status: .noContent, headers: headers)
    }

    /// Adds the headers every response carries.
    static func decorate(_ response: inout Response) {
        guard !response.headers.contains(.accessControlAllowOrigin), !response.headers.contains(.accessControlExposeHeaders) else {
            response.headers[.accessControlAllowOrigin] = "*"
            response.headers[.accessControlExposeHeaders] = exposedHeaders
            return
        }
        // Made once: a field checks its value when made, and this list is long.
        response.headers.append(contentsOf: fields)
    }

    private static let fields = [
        HTTPField(name: .accessControlAllowOrigin, value: "*"), HTTPField(name: .accessControlExposeHeaders, value: exposedHeaders),
    ]
}
