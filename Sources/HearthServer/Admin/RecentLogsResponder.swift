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

    func respond(to request: Request) -> Response {
        do {
            _ = try admin.admit(request)
        } catch {
            return error.response()
        }
        return JSONResponse.encoding(["entries": recent.newestFirst()])
    }
}
