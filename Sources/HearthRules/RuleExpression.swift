/// A parsed security rule expression (the text of a `.read`, `.write` or `.validate` rule).
///
/// Every node remembers the offset of its first character in the expression text (in Unicode
/// scalars), so later checks can point at it in the rules file.
public struct RuleExpression: Sendable, Hashable {
    public indirect enum Kind: Sendable, Hashable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        /// `/pattern/flags`; only allowed as the argument of `matches()`.
        case regex(pattern: String, flags: String)
        /// `[a, b]`; only allowed as the argument of `hasChildren()`.
        case array([RuleExpression])
        /// `auth`, `now`, `root`, `data`, `newData`, `query` or a `$wildcard`.
        case identifier(String)
        /// `object.name`.
        case member(RuleExpression, String)
        /// `object.name(arguments)`: methods are the only callable things.
        case call(RuleExpression, String, [RuleExpression])
        case unary(UnaryOperator, RuleExpression)
        case binary(BinaryOperator, RuleExpression, RuleExpression)
        case conditional(RuleExpression, RuleExpression, RuleExpression)
    }

    public enum UnaryOperator: String, Sendable, Hashable {
        case not = "!"
        case negate = "-"
    }

    public enum BinaryOperator: String, Sendable, Hashable, CaseIterable {
        case multiply = "*", divide = "/", remainder = "%"
        case add = "+", subtract = "-"
        case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case equal = "==", identical = "===", notEqual = "!=", notIdentical = "!=="
        case and = "&&", or = "||"

        /// Binding power, higher binds tighter (JavaScript's order).
        var precedence: Int {
            switch self {
            case .or: return 1
            case .and: return 2
            case .equal, .identical, .notEqual, .notIdentical: return 3
            case .less, .lessOrEqual, .greater, .greaterOrEqual: return 4
            case .add, .subtract: return 5
            case .multiply, .divide, .remainder: return 6
            }
        }
    }

    public let kind: Kind
    /// Offset of the expression's first character in the rule text, in Unicode scalars.
    public let offset: Int

    public init(_ kind: Kind, offset: Int = 0) {
        self.kind = kind
        self.offset = offset
    }

    /// Every identifier used (with its offset), in source order.
    public var identifiers: [(name: String, offset: Int)] {
        var result: [(name: String, offset: Int)] = []
        collectIdentifiers(into: &result)
        return result
    }

    private func collectIdentifiers(into result: inout [(name: String, offset: Int)]) {
        switch kind {
        case .null, .bool, .number, .string, .regex: break
        case .identifier(let name): result.append((name, offset))
        case .array(let items): for item in items { item.collectIdentifiers(into: &result) }
        case .member(let object, _): object.collectIdentifiers(into: &result)
        case .call(let object, _, let arguments):
            object.collectIdentifiers(into: &result)
            for argument in arguments { argument.collectIdentifiers(into: &result) }
        case .unary(_, let operand): operand.collectIdentifiers(into: &result)
        case .binary(_, let left, let right):
            left.collectIdentifiers(into: &result)
            right.collectIdentifiers(into: &result)
        case .conditional(let condition, let then, let otherwise):
            condition.collectIdentifiers(into: &result)
            then.collectIdentifiers(into: &result)
            otherwise.collectIdentifiers(into: &result)
        }
    }
}

extension RuleExpression: CustomStringConvertible {
    /// A fully parenthesised rendering, handy for checking precedence.
    public var description: String {
        switch kind {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number):
            return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .string(let text): return "'" + text.replacingAll("\\", with: "\\\\").replacingAll("'", with: "\\'") + "'"
        case .regex(let pattern, let flags): return "/\(pattern)/\(flags)"
        case .array(let items): return "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .identifier(let name): return name
        case .member(let object, let name): return "\(object).\(name)"
        case .call(let object, let name, let arguments):
            return "\(object).\(name)(" + arguments.map(\.description).joined(separator: ", ") + ")"
        case .unary(let op, let operand): return "(\(op.rawValue)\(operand))"
        case .binary(let op, let left, let right): return "(\(left) \(op.rawValue) \(right))"
        case .conditional(let condition, let then, let otherwise): return "(\(condition) ? \(then) : \(otherwise))"
        }
    }
}

extension String {
    /// Every occurrence of `target` replaced by `replacement`, matching Unicode scalars exactly
    /// (as JavaScript matches code units, not canonically equivalent characters).
    func replacingAll(_ target: String, with replacement: String) -> String {
        let source = Array(unicodeScalars)
        let pattern = Array(target.unicodeScalars)
        guard !pattern.isEmpty else { return self }
        var result = String.UnicodeScalarView()
        var index = 0
        while index < source.count {
            if index + pattern.count <= source.count, source[index..<index + pattern.count].elementsEqual(pattern) {
                result.append(contentsOf: replacement.unicodeScalars)
                index += pattern.count
            } else {
                result.append(source[index])
                index += 1
            }
        }
        return String(result)
    }

    /// True when `other` occurs in this string, comparing Unicode scalars exactly.
    func containsScalars(_ other: String) -> Bool {
        let source = Array(unicodeScalars)
        let pattern = Array(other.unicodeScalars)
        guard !pattern.isEmpty else { return true }
        guard pattern.count <= source.count else { return false }
        for start in 0...(source.count - pattern.count)
        where source[start..<start + pattern.count].elementsEqual(pattern) {
            return true
        }
        return false
    }
}
