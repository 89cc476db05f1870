import HearthCore
import HearthStore

/// Finding keys anywhere in a database, for the admin console's Data section: every location
/// under a path whose key contains some text, bounded in results and in nodes looked at. An
/// admin read: the transport lets only admins ask, and the rules are not consulted.
extension DatabaseOperations {
    /// The most matches and nodes one search may ask for.
    public static let maxSearchResults = 1_000
    public static let maxSearchNodes = 5_000_000

    /// The locations under `path` whose key contains `text` (ignoring case), depth first in key
    /// order (see ``HearthCore/Node/findKeys(containing:maxResults:maxNodes:)``); their paths are
    /// from the database's root.
    /// - Throws: `invalid_query` for empty text or bounds out of range.
    public func findKeys(
        _ database: Database, under path: Path, containing text: String, maxResults: Int, maxNodes: Int
    ) throws(HearthError) -> Node.KeyMatches {
        guard !text.isEmpty, text.count <= 768 else {
            throw HearthError(.invalidQuery, "q must be the text to find in keys, 1 to 768 characters")
        }
        guard (1...Self.maxSearchResults).contains(maxResults) else {
            throw HearthError(.invalidQuery, "limit must be a whole number from 1 to \(Self.maxSearchResults)")
        }
        guard (1...Self.maxSearchNodes).contains(maxNodes) else {
            throw HearthError(.invalidQuery, "maxNodes must be a whole number from 1 to \(Self.maxSearchNodes)")
        }
        var found = database.current.state.value(at: path).findKeys(containing: text, maxResults: maxResults, maxNodes: maxNodes)
        found.matches = found.matches.map { .init(path: path.appending($0.path), node: $0.node) }
        return found
    }
}
