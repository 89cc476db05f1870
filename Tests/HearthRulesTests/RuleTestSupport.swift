import HearthCore
@testable import HearthRules

/// Builds a tree from JSON text (arrays become objects, `.priority` keys become priorities).
func tree(_ json: String) -> Node {
    do {
        return try JSONParser.parse(Array(json.utf8)).node
    } catch {
        fatalError("bad test JSON: \(json)")
    }
}

/// Parses expression text (errors by offset).
func parseRule(_ text: String) throws -> RuleExpression {
    try RuleExpression.parse(text)
}

/// Parses and evaluates; a parse error is a test bug, reported as a crash-free `nil`.
func evaluate(_ text: String, _ context: RuleContext = RuleContext()) -> Bool? {
    guard let expression = try? RuleExpression.parse(text) else { return nil }
    return expression.evaluate(in: context)
}

/// Parses and computes the value, or nil on an evaluation error.
func valueOf(_ text: String, _ context: RuleContext = RuleContext()) -> RuleValue? {
    guard let expression = try? RuleExpression.parse(text) else { return nil }
    return try? expression.value(in: context)
}

/// A signed-in `auth` value.
func signedIn(_ uid: String, token: [String: String] = [:], extra: String = "") -> Node {
    var claims = token.map { "\"\($0.key)\": \($0.value)" }
    claims.append("\"sub\": \"\(uid)\"")
    return tree(#"{"uid": "\#(uid)", "provider": "password", "token": {\#(claims.joined(separator: ", "))}}"#)
}
