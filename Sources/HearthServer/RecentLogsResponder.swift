import Foundation
import HearthCore
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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        guard let body = try? encoder.encode(["entries": recent.newestFirst()]) else {
            return HearthError(.internalError, "Internal server error.").response()
        }
        return JSONResponse.make(bytes: Array(body))
    }
}
