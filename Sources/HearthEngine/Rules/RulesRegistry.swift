import HearthRules
import HearthStore
import Synchronization

/// Each database's security rules: stored with the database, compiled once, and replaced
/// through `PUT /.settings/rules.json`. A database without stored rules uses the server's
/// default rules (closed unless the operator gave some).
public final class RulesRegistry: Sendable {
    public static let settingName = "rules"

    public let defaultRules: SecurityRules
    private let compiled = Mutex<[String: SecurityRules]>([:])
    private let watched = Mutex<Set<String>>([])

    public init(defaultRules: SecurityRules) {
        self.defaultRules = defaultRules
    }

    /// The rules in force for `database`.
    public func rules(for database: Database) throws -> SecurityRules {
        if let cached = compiled.withLock({ $0[database.name] }) { return cached }
        var rules = defaultRules
        if let text = try database.setting(named: Self.settingName) {
            rules = try SecurityRules(parsing: text)
        }
        // A change observed meanwhile (compiled from newer text) wins over this first load.
        return compiled.withLock { compiled in
            if let newer = compiled[database.name] { return newer }
            compiled[database.name] = rules
            return rules
        }
    }

    /// The rules in force for the database named `name`, if they were loaded already.
    public func loadedRules(named name: String) -> SecurityRules? {
        compiled.withLock { $0[name] }
    }

    /// Forgets the database `name` (it was closed): its next instance loads and watches its
    /// rules again.
    public func forget(_ name: String) {
        watched.withLock { _ = $0.remove(name) }
        compiled.withLock { $0[name] = nil }
    }

    /// Follows changes of `database`'s stored rules made elsewhere (another node of a cluster):
    /// the compiled copy is dropped and `hub`'s streams are judged again. Once per database.
    public func watch(_ database: Database, hub: ListenerHub) {
        guard watched.withLock({ $0.insert(database.name).inserted }) else { return }
        database.addSettingObserver { [weak self, weak hub, weak database] name in
            guard name == Self.settingName, let self, let database else { return }
            // Compiled from the text now in force (observers run in log order).
            if let text = try? database.setting(named: Self.settingName), let rules = try? SecurityRules(parsing: text) {
                self.compiled.withLock { $0[database.name] = rules }
            } else {
                self.compiled.withLock { $0[database.name] = nil }
            }
            hub?.rulesChanged(for: database)
        }
    }

    /// Checks and compiles `text` and makes it the rules of `database`, durably.
    /// - Returns: the new rules.
    /// - Throws: ``RulesError`` for an invalid document; nothing changes then.
    @discardableResult
    public func setRules(_ text: String, for database: Database) async throws -> SecurityRules {
        let rules = try SecurityRules(parsing: text)
        try await database.setSetting(named: Self.settingName, to: text)
        // On a cluster node another deploy may have followed this one in the log by now: the
        // cache keeps what is in force.
        if try database.setting(named: Self.settingName) == text {
            compiled.withLock { $0[database.name] = rules }
        }
        return rules
    }
}
