import HearthCore
import HearthEngine
import Hummingbird

extension AdminCredential {
    /// The check every `/.hearth/…` admin endpoint starts with: the request's query parameters,
    /// once it carries the admin credential and uses one of `methods`.
    ///
    /// - Throws: ``HearthError/permissionDeniedByRules`` (401) without the credential, checked
    ///   first so a stranger learns nothing of the endpoint; `invalidData` (400) for another method.
    func admit(_ request: Request, methods: Set<HTTPRequest.Method> = [.get]) async throws(HearthError) -> [String: String] {
        var parameters: [String: String] = [:]
        for (key, value) in request.uri.queryParameters { parameters[String(key)] = String(value) }
        guard await isAdmin(request, parameters: parameters) else { throw .permissionDeniedByRules }
        guard methods.contains(request.method) else {
            let allowed = methods.map(\.rawValue).sorted().joined(separator: " or ")
            throw HearthError(.invalidData, "Invalid method for \(request.uri.path): \(request.method.rawValue); use \(allowed).")
        }
        return parameters
    }
}
