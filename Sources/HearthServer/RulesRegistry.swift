import HearthRules
import HearthStore
import Synchronization

/// Each database's security rules: stored with the database, compiled once, and replaced
/// through `PUT /.settings/rules.json`. A database without stored rules uses the server's
/// default rules (closed unless the operator gave some).
final class RulesRegistry: Sendable {
    static let settingName = "rules"

    let defaultRules: SecurityRules
    private let compiled = Mutex<[String: SecurityRules]>([:])

    init(defaultRules: SecurityRules) {
        self.defaultRules = defaultRules
    }

    /// The rules in force for `database`.
    func rules(for database: Database) throws -> SecurityRules {
        if let cached = compiled.withLock({ $0[database.name] }) { return cached }
        var rules = defaultRules
        if let text = try database.setting(named: Self.settingName) {
            rules = try SecurityRules(parsing: text)
        }
        compiled.withLock { $0[database.name] = rules }
        return rules
    }

    /// The rules in force for the database named `name`, if they were loaded already.
    func loadedRules(named name: String) -> SecurityRules? {
        compiled.withLock { $0[name] }
    }

    /// Checks and compiles `text` and makes it the rules of `database`, durably.
    /// - Returns: the new rules.
    /// - Throws: ``RulesError`` for an invalid document; nothing changes then.
    @discardableResult
    func setRules(_ text: String, for database: Database) async throws -> SecurityRules {
        let rules = try SecurityRules(parsing: text)
        try await database.setSetting(named: Self.settingName, to: text)
        compiled.withLock { $0[database.name] = rules }
        return rules
    }
}
