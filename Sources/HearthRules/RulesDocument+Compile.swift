extension RulesDocument {
    /// The variables every rule may use.
    public static let ruleVariables: Set<String> = ["auth", "now", "root", "data", "newData", "query"]

    /// Parses every `.read`, `.write` and `.validate` expression in the document (wildcard
    /// branches included) and checks that each variable is known and each `$wildcard` is bound
    /// at or above the rule that uses it.
    ///
    /// - Returns: the parsed expressions, keyed by the rule they came from.
    /// - Throws: ``RulesError`` for the first problem, with its line and column in the rules file.
    @discardableResult
    public func compileAll() throws(RulesError) -> [Expression: RuleExpression] {
        var compiled: [Expression: RuleExpression] = [:]
        var errors: [RulesError] = []
        Self.compile(root, wildcards: [], into: &compiled, errors: &errors)
        // Report the problem that comes first in the file.
        if let first = errors.min(by: { ($0.position.line, $0.position.column) < ($1.position.line, $1.position.column) }) {
            throw first
        }
        return compiled
    }

    /// Every expression that does not compile, in no particular order.
    func compileErrors() -> [RulesError] {
        var compiled: [Expression: RuleExpression] = [:]
        var errors: [RulesError] = []
        Self.compile(root, wildcards: [], into: &compiled, errors: &errors)
        return errors
    }

    private static func compile(
        _ node: Node, wildcards: Set<String>, into compiled: inout [Expression: RuleExpression],
        errors: inout [RulesError]
    ) {
        for expression in [node.read, node.write, node.validate] {
            guard let expression else { continue }
            do throws(RulesError) {
                compiled[expression] = try compile(expression, wildcards: wildcards)
            } catch {
                errors.append(error)
            }
        }
        for (_, child) in node.children {
            compile(child, wildcards: wildcards, into: &compiled, errors: &errors)
        }
        if let wildcard = node.wildcard {
            compile(wildcard.node, wildcards: wildcards.union([wildcard.name]), into: &compiled, errors: &errors)
        }
    }

    private static func compile(_ expression: Expression, wildcards: Set<String>) throws(RulesError) -> RuleExpression {
        let parsed = try RuleExpression.parse(expression)
        for (name, offset) in parsed.identifiers {
            let known = name.hasPrefix("$") ? wildcards.contains(name) : ruleVariables.contains(name)
            guard known else {
                let message = name.hasPrefix("$")
                    ? "unknown wildcard \(name): no $ key above this rule binds it"
                    : "unknown variable '\(name)'"
                throw RulesError(message, at: RuleExpression.position(ofOffset: offset, quoteAt: expression.position))
            }
        }
        return parsed
    }
}
