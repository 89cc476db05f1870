import Foundation
import HearthCore
import HearthEngine
import Hummingbird

/// `GET /.hearth/logs`, for admins: the latest warnings and errors the server logged, newest
/// first (what the console shows as recent problems).
struct RecentLogsResponder: Sendable {
    static let path = "/.hearth/logs"

    let recent: RecentLogEntries
    let admin: AdminCredential

    func respond(to request: Request) async throws -> Response {
        _ = try await admin.admit(request)
        return JSONResponse.encoding(["entries": recent.newestFirst()])
    }
}
