import Foundation
import HearthCore
import HTTPTypes
import Hummingbird

/// What a REST request asks for, read from its URL and headers: the method (after any
/// override), the database path, and the output options.
struct RESTRequest {
    enum Method: String {
        case get = "GET", put = "PUT", post = "POST", patch = "PATCH", delete = "DELETE"
    }

    var method: Method
    var path: Path
    var parameters: [String: String]
    var format: JSONWriter.Format
    var silent: Bool

    private static let methodOverride = HTTPField.Name("X-HTTP-Method-Override")!

    /// Parses the request line.
    /// - Returns: nil when the URL is not a database resource (it does not end in `.json`).
    /// - Throws: ``HearthError`` for a bad path or an unsupported method.
    init?(_ request: Request) throws(HearthError) {
        let rawPath = request.uri.path
        guard rawPath.hasSuffix(".json") else { return nil }
        let encodedPath = rawPath.dropLast(5)
        if encodedPath.utf8.contains(UInt8(ascii: "%")) {
            var keys: [String] = []
            for segment in encodedPath.split(separator: "/", omittingEmptySubsequences: true) {
                // A decoded "/" would silently split a key in two.
                guard let decoded = String(segment).removingPercentEncoding, !decoded.contains("/") else {
                    throw HearthError.invalidPathToken
                }
                keys.append(decoded)
            }
            path = try Path(parsing: keys.joined(separator: "/"), allowPriority: true)
        } else {
            path = try Path(parsing: String(encodedPath), allowPriority: true)
        }

        var parameters: [String: String] = [:]
        if request.uri.query != nil {
            for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        }
        self.parameters = parameters

        var methodName = request.method.rawValue
        if methodName == "POST" {
            if let override = request.headers[Self.methodOverride] ?? parameters["x-http-method-override"] {
                methodName = override.uppercased()
            }
        }
        guard let method = Method(rawValue: methodName) else {
            throw HearthError(.invalidData, "Invalid method: \(methodName).")
        }
        self.method = method

        let print = parameters["print"]
        silent = print == "silent"
        format = JSONWriter.Format(pretty: print == "pretty", export: parameters["format"] == "export")
    }
}
