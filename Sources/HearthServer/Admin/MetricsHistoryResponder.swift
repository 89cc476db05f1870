import Foundation
import HearthCore
import HearthEngine
import Hummingbird

/// `GET /.hearth/metrics/history?since=&until=`, for admins: the server's figures over the last
/// hours (``MetricsHistory``), oldest first, so the console's graphs show what happened before
/// the page was opened. `since` and `until` are times (``TimeFilter``); without them, every kept
/// sample. Counters are totals since the server started: a rate is the difference between two
/// samples over the time between them.
struct MetricsHistoryResponder: Sendable {
    static let path = "/.hearth/metrics/history"

    let history: MetricsHistory
    let admin: AdminCredential

    func respond(to request: Request) async throws -> Response {
        let range = try TimeFilter(try await admin.admit(request))
        return JSONResponse.encoding(MetricsHistoryBody(
            intervalSeconds: Double(history.interval.components.seconds) + Double(history.interval.components.attoseconds) / 1e18,
            capacity: history.capacity, samples: history.samples(in: range)))
    }
}

/// The answer of ``MetricsHistoryResponder``.
struct MetricsHistoryBody: Encodable {
    /// The time between two samples.
    var intervalSeconds: Double
    /// How many samples the server keeps.
    var capacity: Int
    var samples: [MetricsSample]
}
