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
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        guard admin.isAdmin(request, parameters: parameters) else {
            return HearthError.permissionDeniedByRules.response()
        }
        guard request.method == .get else {
            return HearthError(.invalidData, "Invalid method for \(Self.path): \(request.method.rawValue).").response()
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
