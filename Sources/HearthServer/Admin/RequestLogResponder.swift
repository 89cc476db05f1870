import Foundation
import HearthCore
import HearthEngine
import Hummingbird

/// `GET /.hearth/requests?limit=&status=&path=&since=&until=`, for admins: the latest requests
/// the server answered, newest first (what the console's request log shows). `status` is a class
/// (`2xx`, `4xx`, `5xx`, or `2`, `4`, `5`), `path` a path prefix, `since` and `until` times
/// (``TimeFilter``: milliseconds since 1970 or ISO 8601, inclusive), `limit` at most the ring's size.
struct RequestLogResponder: Sendable {
    static let path = "/.hearth/requests"

    let log: RequestLog
    let admin: AdminCredential

    func respond(to request: Request) async throws -> Response {
        let filter = try await Self.filter(try await admin.admit(request), capacity: log.capacity)
        let body = RequestLogBody(entries: log.newestFirst(filter), capacity: log.capacity)
        // Milliseconds: requests come many to a second.
        return JSONResponse.encoding(body, dates: .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Self.timeFormat.format(date))
        })
    }

    static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// The filter the query asks for.
    /// - Throws: a Firebase-shaped `invalid_data` error naming the bad parameter.
    static func filter(_ parameters: [String: String], capacity: Int) throws(HearthError) -> RequestLog.Filter {
        var filter = RequestLog.Filter(limit: min(200, capacity))
        if let text = parameters["limit"] {
            guard let limit = Int(text), limit > 0 else {
                throw HearthError(.invalidData, "limit must be a positive whole number.")
            }
            filter.limit = min(limit, capacity)
        }
        if let text = parameters["status"], !text.isEmpty {
            let digits = text.lowercased().hasSuffix("xx") ? String(text.dropLast(2)) : text
            guard let statusClass = Int(digits), (1...5).contains(statusClass) else {
                throw HearthError(.invalidData, "status must be a status class: 2xx, 3xx, 4xx or 5xx.")
            }
            filter.statusClass = statusClass
        }
        if let path = parameters["path"], !path.isEmpty { filter.pathPrefix = path.hasPrefix("/") ? path : "/" + path }
        let times = try TimeFilter(parameters)
        filter.since = times.since
        filter.until = times.until
        return filter
    }
}

/// The answer of ``RequestLogResponder``.
struct RequestLogBody: Encodable {
    var entries: [RequestLog.Entry]
    /// How many requests the server keeps.
    var capacity: Int
}
