import Foundation
import HearthCore
import HearthEngine
import Hummingbird

/// `GET /.hearth/logs?since=&until=`, for admins: the latest warnings and errors the server
/// logged, newest first (what the console shows as recent problems), those logged between
/// `since` and `until` when given (``TimeFilter``).
struct RecentLogsResponder: Sendable {
    static let path = "/.hearth/logs"

    let recent: RecentLogEntries
    let admin: AdminCredential

    func respond(to request: Request) async throws -> Response {
        let range = try TimeFilter(try await admin.admit(request))
        return JSONResponse.encoding(["entries": recent.newestFirst().filter { range.contains($0.time) }])
    }
}
