import HearthRules
import HearthStore
import Synchronization

/// Each database's security rules document: stored with the database, parsed once, and
/// replaced through `PUT /.settings/rules.json`. A database without stored rules uses the
/// server's default document (closed unless the operator gave one).
final class RulesRegistry: Sendable {
    static let settingName = "rules"

    let defaultRules: RulesDocument
    private let parsed = Mutex<[String: RulesDocument]>([:])

    init(defaultRules: RulesDocument) {
        self.defaultRules = defaultRules
    }

    /// The rules in force for `database`.
    func rules(for database: Database) throws -> RulesDocument {
        if let cached = parsed.withLock({ $0[database.name] }) { return cached }
        var document = defaultRules
        if let text = try database.setting(named: Self.settingName) {
            document = try RulesDocument(parsing: text)
        }
        parsed.withLock { $0[database.name] = document }
        return document
    }

    /// Validates `text` and makes it the rules of `database`, durably.
    /// - Throws: ``RulesError`` for an invalid document; nothing changes then.
    func setRules(_ text: String, for database: Database) throws {
        let document = try RulesDocument(parsing: text)
        try database.setSetting(named: Self.settingName, to: text)
        parsed.withLock { $0[database.name] = document }
    }
}
