import HearthCore
import HearthStore

/// ``SocialData`` over a Hearth database in this process: writes go through the database
/// itself as an admin's (recorded for triggers and streamed to listeners like any other), and a
/// conditional update's check runs in write order against the newest version.
public struct DatabaseSocialData: SocialData {
    let database: @Sendable () async throws -> Database

    /// - Parameter database: the database, looked up at each use (a provider opens it on demand).
    public init(database: @escaping @Sendable () async throws -> Database) {
        self.database = database
    }

    /// The database `name` of `provider`.
    public init(provider: any DatabaseProvider, name: String) {
        self.init { try await provider.database(named: name) }
    }

    public func value(at path: Path) async throws -> Node {
        try await database().value(at: path)
    }

    public func update(_ values: [Path: Node], expecting: [Path: Node]) async throws {
        guard !values.isEmpty else { return }
        let entries = values.sorted { Path.compare($0.key, $1.key) < 0 }.map { (path: $0.key, value: JSONParser.Parsed(node: $0.value)) }
        let check = expecting
        let precondition: @Sendable (DatabaseState) throws -> Void = { state in
            for (path, value) in check where state.value(at: path) != value { throw SocialDataConflict(path: path) }
        }
        try await database().write(.update(.root, entries), precondition: expecting.isEmpty ? nil : precondition, origin: .admin)
    }
}
