import HearthEngine
import Hummingbird

extension AdminCredential {
    /// The credential a request presents, if any.
    static func presented(by request: Request, parameters: [String: String]) -> String? {
        if let header = request.headers.value(of: .authorization) {
            let parts = header.split(separator: " ", maxSplits: 1)
            // Firebase Storage's SDKs send `Authorization: Firebase <ID token>`.
            if parts.count == 2, ["bearer", "firebase"].contains(parts[0].lowercased()) { return String(parts[1]) }
        }
        return parameters["access_token"] ?? parameters["auth"]
    }

    func isAdmin(_ request: Request, parameters: [String: String]) async -> Bool {
        guard let presented = Self.presented(by: request, parameters: parameters) else { return false }
        return await isAdmin(credential: presented)
    }
}
