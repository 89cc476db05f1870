import Foundation
import HearthCore
import HTTPTypes
import HearthEngine
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
        try self.init(request, path: request.uri.path)
    }

    /// Parses the request line, whose path (`request.uri.path`) the caller has read already.
    init?(_ request: Request, path rawPath: String) throws(HearthError) {
        guard rawPath.hasSuffix(".json") else { return nil }
        let encodedPath = rawPath.dropLast(5)
        if encodedPath.utf8.contains(UInt8(ascii: "%")) {
            var keys: [String] = []
            // Segments end at the "/" scalar (a "/" followed by a combining mark is one Character).
            for segment in encodedPath.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true) {
                // A decoded "/" would silently split a key in two.
                guard let decoded = String(segment).removingPercentEncoding, !decoded.unicodeScalars.contains("/") else {
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
        if !parameters.isEmpty { try Self.checkOptions(parameters, method: method) }
        if parameters["callback"] != nil, Self.isOwnPageScript(request) {
            // Hearth's pages never load JSONP; a page of this origin that does has been injected
            // with markup, and JSONP would be a script its CSP lets through.
            throw HearthError(.invalidQuery, "callback is not served to pages of this server's own origin")
        }
    }

    /// True when a browser loads the request as a `<script>` of a page of this very origin
    /// (the Fetch Metadata headers, which page scripts cannot set).
    private static func isOwnPageScript(_ request: Request) -> Bool {
        request.headers[.secFetchDest] == "script" && request.headers[.secFetchSite] == "same-origin"
    }

    /// Checks the parameters that change nothing in how Hearth answers but must be well formed:
    /// `timeout`, `writeSizeLimit`, `callback`, `download`, `print`, `auth_variable_override`.
    private static func checkOptions(_ parameters: [String: String], method: Method) throws(HearthError) {
        if let print = parameters["print"], !["pretty", "silent"].contains(print) {
            throw HearthError(.invalidQuery, "print must be 'pretty' or 'silent'")
        }
        if let timeout = parameters["timeout"] {
            // Reads finish at once, but a bad value is still refused as Firebase does.
            guard let duration = Self.timeout(timeout), duration > 0, duration <= 15 * 60 * 1000 else {
                throw HearthError(.invalidQuery, "timeout must be a positive duration of at most 15min, such as 500ms, 10s or 3min")
            }
        }
        if let limit = parameters["writeSizeLimit"], !["tiny", "small", "medium", "large", "unlimited"].contains(limit) {
            throw HearthError(.invalidQuery, "writeSizeLimit must be one of tiny, small, medium, large or unlimited")
        }
        if let callback = parameters["callback"] {
            guard method == .get else { throw HearthError(.invalidQuery, "callback is only supported on GET requests") }
            let allowed = callback.utf8.allSatisfy { byte in
                (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$") || byte == UInt8(ascii: ".")
            }
            guard allowed, !callback.isEmpty, callback.utf8.count <= 128 else {
                throw HearthError(.invalidQuery, "callback must be a JavaScript function name")
            }
        }
        if let download = parameters["download"] {
            guard !download.isEmpty, !download.contains("\""), !download.contains("/"), download.utf8.count <= 255,
                !download.unicodeScalars.contains(where: { $0.value < 32 })
            else { throw HearthError(.invalidQuery, "download must be a file name") }
        }
        if let override = parameters["auth_variable_override"] {
            guard let parsed = try? JSONParser.parse(Array(override.utf8)).node,
                parsed.isNull || parsed.children != nil
            else { throw HearthError(.invalidQuery, "auth_variable_override must be a JSON object or null") }
        }
    }

    /// Milliseconds for `500ms`, `10s` or `3min`.
    static func timeout(_ text: String) -> Int? {
        for (suffix, scale) in [("ms", 1), ("min", 60_000), ("s", 1000)] where text.hasSuffix(suffix) {
            guard let value = Int(text.dropLast(suffix.count)) else { return nil }
            return value.multipliedReportingOverflow(by: scale).overflow ? nil : value * scale
        }
        return nil
    }
}
