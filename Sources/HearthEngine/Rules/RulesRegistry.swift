import HearthRules
import HearthStore
import Synchronization

/// Each database's security rules: stored with the database, compiled once, and replaced
/// through `PUT /.settings/rules.json`. A database without stored rules uses the server's
/// default rules (closed unless the operator gave some).
public final class RulesRegistry: Sendable {
    static let settingName = "rules"

    let defaultRules: SecurityRules
    private let compiled = Mutex<[String: SecurityRules]>([:])

    /// `defaultRules` apply to every database that has no rules of its own.
    public init(defaultRules: SecurityRules) {
        self.defaultRules = defaultRules
    }

    /// The rules in force for `database`.
    func rules(for database: Database) throws -> SecurityRules {
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

    /// Forgets the database `name` (it was closed): its next instance loads its rules again.
    func forget(_ name: String) {
        compiled.withLock { $0[name] = nil }
    }

    /// Takes a change of `database`'s setting `name`, as its ``HearthStore/DatabaseEvents``
    /// deliver it (in log order; on a cluster node also a change made on another node): a
    /// rules change drops the compiled copy for the text now in force, and `hub`'s streams are
    /// judged again.
    func settingChanged(named name: String, in database: Database, hub: ListenerHub) {
        guard name == Self.settingName else { return }
        if let text = try? database.setting(named: Self.settingName), let rules = try? SecurityRules(parsing: text) {
            compiled.withLock { $0[database.name] = rules }
        } else {
            compiled.withLock { $0[database.name] = nil }
        }
        hub.rulesChanged(for: database)
    }

    /// Checks and compiles `text` and makes it the rules of `database`, durably.
    /// - Returns: the new rules.
    /// - Throws: ``RulesError`` for an invalid document; nothing changes then.
    @discardableResult
    func setRules(_ text: String, for database: Database) async throws -> SecurityRules {
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
