import HearthCore
import Testing

@testable import HearthRules

/// Rules inputs that `scripts/fuzz` found mishandled.
@Suite("Fuzz regressions: rules")
struct RulesFuzzRegressionTests {
    static let writer = SecurityRules.Requester(auth: .null, now: 0)

    /// A literal rule names its key's code units: the rule for "é" (U+00E9) does not govern the
    /// different key "e\u{301}", which falls to the wildcard, as in Firebase.
    @Test func aLiteralRuleDoesNotGovernACanonicallyEquivalentKey() throws {
        let rules = try SecurityRules(parsing: #"{"rules": {"\u00e9": {".write": true}, "$other": {".write": false}}}"#)
        let composed = Path(keys: [ChildKey("\u{E9}")])
        let decomposed = Path(keys: [ChildKey("e\u{301}")])
        #expect(throws: Never.self) {
            try rules.authorizeWrite(changing: [composed], by: Self.writer, before: .null, after: .object([(ChildKey("\u{E9}"), .int(1))]))
        }
        #expect(throws: SecurityRules.WriteDenial.self) {
            try rules.authorizeWrite(
                changing: [decomposed], by: Self.writer, before: .null, after: .object([(ChildKey("e\u{301}"), .int(1))]))
        }
        // The rules document's own lookup (for `.indexOn`) agrees: the wildcard's rule.
        #expect(rules.document.node(at: decomposed)?.write?.source == "false")
        #expect(rules.document.node(at: composed)?.write?.source == "true")
    }

    /// `child('a/\u{301}')` names the key "\u{301}" under "a", though "/\u{301}" is one Character.
    @Test func aChildPathSplitsAtTheSlashBeforeACombiningMark() throws {
        let data = tree(#"{"a": {"\u0301": true}}"#)
        #expect(evaluate("root.child('a/\u{301}').val() == true", RuleContext(root: data)) == true)
    }
}
