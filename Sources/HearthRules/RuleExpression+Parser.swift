extension RuleExpression {
    /// Parses one rule expression from a rules document, reporting errors at their line and
    /// column in the rules file. The expression's position is its opening quote, so character `k`
    /// of the text is at column `position.column + 1 + k` (rule strings are single-line).
    public static func parse(_ expression: RulesDocument.Expression) throws(RulesError) -> RuleExpression {
        try parse(expression.source, at: expression.position)
    }

    /// Parses expression text whose opening quote is at `position`.
    public static func parse(_ source: String, at position: SourcePosition) throws(RulesError) -> RuleExpression {
        do {
            return try parse(source)
        } catch {
            throw RulesError(error.message, at: Self.position(ofOffset: error.offset, quoteAt: position))
        }
    }

    /// The file position of character `offset` of an expression whose opening quote is at `position`.
    public static func position(ofOffset offset: Int, quoteAt position: SourcePosition) -> SourcePosition {
        SourcePosition(line: position.line, column: position.column + 1 + offset)
    }

    /// Parses expression text, reporting errors by character offset.
    static func parse(_ source: String) throws(RuleSyntaxError) -> RuleExpression {
        var parser = RuleParser(tokens: try RuleLexer.tokenize(source))
        return try parser.parseAll()
    }
}

/// A precedence-climbing parser over ``RuleToken``s.
struct RuleParser {
    private let tokens: [RuleToken]
    private var index = 0
    private static let maxDepth = 200
    private var depth = 0

    init(tokens: [RuleToken]) { self.tokens = tokens }

    /// The methods of RuleDataSnapshot and string, with the argument counts they accept.
    static let methodArities: [String: Set<Int>] = [
        "val": [0], "child": [1], "parent": [0], "hasChild": [1], "hasChildren": [0, 1], "exists": [0],
        "getPriority": [0], "isNumber": [0], "isString": [0], "isBoolean": [0],
        "contains": [1], "beginsWith": [1], "endsWith": [1], "replace": [2], "toLowerCase": [0],
        "toUpperCase": [0], "matches": [1],
    ]

    private var current: RuleToken { tokens[index] }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func isSymbol(_ symbol: String) -> Bool {
        if case .symbol(let s) = current.kind { return s == symbol }
        return false
    }

    private mutating func expect(_ symbol: String, _ message: String) throws(RuleSyntaxError) {
        guard isSymbol(symbol) else { throw unexpected(message) }
        advance()
    }

    private func unexpected(_ expectation: String) -> RuleSyntaxError {
        let found: String
        switch current.kind {
        case .end: found = "the end of the expression"
        case .number: found = "a number"
        case .string: found = "a string"
        case .regex: found = "a regular expression"
        case .identifier(let name): found = "'\(name)'"
        case .keyword(let word): found = "'\(word)'"
        case .symbol(let symbol): found = "'\(symbol)'"
        }
        return RuleSyntaxError(message: "\(expectation), found \(found)", offset: current.offset)
    }

    mutating func parseAll() throws(RuleSyntaxError) -> RuleExpression {
        if current.kind == .end {
            throw RuleSyntaxError(message: "empty expression", offset: current.offset)
        }
        let expression = try parseConditional()
        guard current.kind == .end else { throw unexpected("expected an operator or the end of the expression") }
        return expression
    }

    private mutating func parseConditional() throws(RuleSyntaxError) -> RuleExpression {
        depth += 1
        defer { depth -= 1 }
        guard depth < Self.maxDepth else {
            throw RuleSyntaxError(message: "the expression nests too deeply", offset: current.offset)
        }
        let condition = try parseBinary(minimum: 1)
        guard isSymbol("?") else { return condition }
        advance()
        let then = try parseConditional()
        try expect(":", "expected ':' in a ?: expression")
        let otherwise = try parseConditional()
        return RuleExpression(.conditional(condition, then, otherwise), offset: condition.offset)
    }

    private var currentBinaryOperator: RuleExpression.BinaryOperator? {
        guard case .symbol(let symbol) = current.kind else { return nil }
        return RuleExpression.BinaryOperator(rawValue: symbol)
    }

    private mutating func parseBinary(minimum: Int) throws(RuleSyntaxError) -> RuleExpression {
        var left = try parseUnary()
        while let op = currentBinaryOperator, op.precedence >= minimum {
            advance()
            let right = try parseBinary(minimum: op.precedence + 1)
            left = RuleExpression(.binary(op, left, right), offset: left.offset)
        }
        return left
    }

    private mutating func parseUnary() throws(RuleSyntaxError) -> RuleExpression {
        let start = current.offset
        if isSymbol("!") || isSymbol("-") {
            let op: RuleExpression.UnaryOperator = isSymbol("!") ? .not : .negate
            advance()
            depth += 1
            defer { depth -= 1 }
            guard depth < Self.maxDepth else {
                throw RuleSyntaxError(message: "the expression nests too deeply", offset: start)
            }
            return RuleExpression(.unary(op, try parseUnary()), offset: start)
        }
        return try parsePostfix()
    }

    private mutating func parsePostfix() throws(RuleSyntaxError) -> RuleExpression {
        var expression = try parsePrimary()
        while true {
            if isSymbol(".") {
                advance()
                let name: String
                switch current.kind {
                case .identifier(let identifier): name = identifier
                case .keyword(let word): name = word
                default: throw unexpected("expected a property or method name after '.'")
                }
                let nameOffset = current.offset
                advance()
                if isSymbol("(") {
                    guard let arities = Self.methodArities[name] else {
                        throw RuleSyntaxError(message: "unknown method \(name)()", offset: nameOffset)
                    }
                    let open = current.offset
                    advance()
                    let arguments = try parseArguments(method: name)
                    guard arities.contains(arguments.count) else {
                        let expected = arities.map(String.init).joined(separator: " or ")
                        throw RuleSyntaxError(
                            message: "\(name)() takes \(expected) argument(s), not \(arguments.count)", offset: open)
                    }
                    expression = RuleExpression(.call(expression, name, arguments), offset: expression.offset)
                } else {
                    expression = RuleExpression(.member(expression, name), offset: expression.offset)
                }
            } else if isSymbol("[") {
                advance()
                guard case .string(let name) = current.kind else {
                    throw unexpected("expected a string literal inside [ ]")
                }
                advance()
                try expect("]", "expected ']'")
                expression = RuleExpression(.member(expression, name), offset: expression.offset)
            } else if isSymbol("(") {
                throw RuleSyntaxError(message: "only methods can be called", offset: current.offset)
            } else {
                return expression
            }
        }
    }

    /// Arguments after `(`, through `)`. A regex literal is allowed only for `matches`, an array
    /// literal only for `hasChildren`.
    private mutating func parseArguments(method: String) throws(RuleSyntaxError) -> [RuleExpression] {
        var arguments: [RuleExpression] = []
        if isSymbol(")") {
            advance()
            return arguments
        }
        while true {
            if method == "matches", case .regex(let pattern, let flags) = current.kind {
                guard RegexCache.shared.regex(pattern: pattern, flags: flags) != nil else {
                    throw RuleSyntaxError(message: "invalid regular expression /\(pattern)/", offset: current.offset)
                }
                arguments.append(RuleExpression(.regex(pattern: pattern, flags: flags), offset: current.offset))
                advance()
            } else if method == "matches" {
                throw RuleSyntaxError(message: "matches() takes a regular expression literal such as /^a/", offset: current.offset)
            } else if method == "hasChildren", isSymbol("[") {
                let array = try parseArrayLiteral()
                if case .array(let items) = array.kind, items.isEmpty {
                    throw RuleSyntaxError(message: "hasChildren() needs a non-empty array of keys", offset: array.offset)
                }
                arguments.append(array)
            } else {
                arguments.append(try parseConditional())
            }
            if isSymbol(",") {
                advance()
                continue
            }
            try expect(")", "expected ',' or ')' after an argument")
            return arguments
        }
    }

    private mutating func parseArrayLiteral() throws(RuleSyntaxError) -> RuleExpression {
        let start = current.offset
        advance()
        var items: [RuleExpression] = []
        if isSymbol("]") {
            advance()
            return RuleExpression(.array(items), offset: start)
        }
        while true {
            items.append(try parseConditional())
            if isSymbol(",") {
                advance()
                continue
            }
            try expect("]", "expected ',' or ']' in the array")
            return RuleExpression(.array(items), offset: start)
        }
    }

    private mutating func parsePrimary() throws(RuleSyntaxError) -> RuleExpression {
        let token = current
        switch token.kind {
        case .number(let value):
            advance()
            return RuleExpression(.number(value), offset: token.offset)
        case .string(let text):
            advance()
            return RuleExpression(.string(text), offset: token.offset)
        case .keyword(let word):
            advance()
            switch word {
            case "true": return RuleExpression(.bool(true), offset: token.offset)
            case "false": return RuleExpression(.bool(false), offset: token.offset)
            default: return RuleExpression(.null, offset: token.offset)
            }
        case .identifier(let name):
            advance()
            return RuleExpression(.identifier(name), offset: token.offset)
        case .regex:
            throw RuleSyntaxError(
                message: "a regular expression is only allowed as the argument of matches()", offset: token.offset)
        case .symbol("("):
            advance()
            let inner = try parseConditional()
            try expect(")", "expected ')'")
            return inner
        case .symbol("["):
            throw RuleSyntaxError(
                message: "an array is only allowed as the argument of hasChildren()", offset: token.offset)
        default:
            throw unexpected("expected a value")
        }
    }
}
