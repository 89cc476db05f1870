import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response as tests look at it.
public struct HTTPResult: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: Data

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// A header, by case-insensitive name.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Sends one HTTP request with URLSession and collects the whole response.
public func httpRequest(
    _ method: String,
    _ url: URL,
    body: Data? = nil,
    headers: [String: String] = [:],
    session: URLSession = .shared
) async throws -> HTTPResult {
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.httpBody = body
    // Generous: URLSession counts a request queued behind others for a connection, and a busy
    // machine runs a test of 200 concurrent requests for minutes. It only bounds a failure.
    request.timeoutInterval = 180
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await session.data(for: request)
    guard let http = response as? HTTPURLResponse else { throw TestServerError("not an HTTP response") }
    var fields: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
        fields["\(name)"] = "\(value)"
    }
    return HTTPResult(status: http.statusCode, headers: fields, body: data)
}

extension TestServer {
    /// Sends a request to this server; `path` includes any query string.
    public func request(
        _ method: String,
        _ path: String,
        body: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else { throw TestServerError("bad URL \(path)") }
        return try await httpRequest(method, url, body: body.map { Data($0.utf8) }, headers: headers)
    }

    /// Sends a request with a binary body.
    public func request(
        _ method: String,
        _ path: String,
        data: Data,
        headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else { throw TestServerError("bad URL \(path)") }
        return try await httpRequest(method, url, body: data, headers: headers)
    }
}
