import HearthCore
import HearthEngine

extension QueryResultCache {
    /// The parameters that shape a query's answer (auth and the like do not).
    static let shapingParameters = ["orderBy"] + QueryParameters.filterNames + ["shallow", "print", "format"]

    /// The key for a query on `path` of `database` with the request's `parameters`.
    static func key(database: String, path: Path, parameters: [String: String]) -> Key {
        Key(database: database, path: path, parameters: shapingParameters.map { parameters[$0] ?? "" })
    }
}
