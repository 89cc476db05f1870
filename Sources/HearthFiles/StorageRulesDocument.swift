/// A parsed `storage.rules` file: `rules_version`, functions, and the `service
/// firebase.storage` block's nested `match` statements with their `allow` rules.
public struct StorageRulesDocument: Sendable {
    /// One segment of a match path.
    public enum Segment: Sendable, Equatable {
        case literal(String)
        /// `{name}`: exactly one segment, bound as a string.
        case single(String)
        /// `{name=**}`: several segments (zero or more in version 2, one or more and last in
        /// version 1), bound as a path.
        case recursive(String)
    }

    /// What a request does, as rules name it.
    public enum Method: String, Sendable, CaseIterable {
        case get, list, create, update, delete

        /// The `allow` words that grant this method.
        var grantedBy: Set<String> {
            switch self {
            case .get: ["read", "get"]
            case .list: ["read", "list"]
            case .create: ["write", "create"]
            case .update: ["write", "update"]
            case .delete: ["write", "delete"]
            }
        }
    }

    /// `function name(params) { let x = …; return … }`.
    public struct Function: Sendable {
        let name: String
        let parameters: [String]
        let bindings: [(name: String, value: StorageExpression)]
        let body: StorageExpression
        let position: SourcePosition
    }

    /// `allow read, write: if …;` (no condition means always).
    public struct Allow: Sendable {
        let methods: Set<String>
        let condition: StorageExpression?
        let position: SourcePosition
    }

    /// A `match` block.
    public struct Match: Sendable {
        let pattern: [Segment]
        let functions: [Function]
        let allows: [Allow]
        let matches: [Match]
        let position: SourcePosition
    }

    /// `1` unless the file says `rules_version = '2'`.
    public let version: Int
    /// Functions at the top level and in the service block.
    let functions: [Function]
    let matches: [Match]
}
