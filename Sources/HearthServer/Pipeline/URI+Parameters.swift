import HearthEngine
import HummingbirdCore

extension URI {
    /// The query's parameters, percent-decoded, the first of each name.
    var firstQueryParameters: [String: String] {
        var parameters: [String: String] = [:]
        for (key, value) in queryParameters where parameters[String(key)] == nil {
            parameters[String(key)] = String(value)
        }
        return parameters
    }
}
