/// Parses `storage.rules` text into a ``StorageRulesDocument``.
///
/// Grammar (as Firebase's rules files use it):
/// ```
/// file     := ['rules_version' '=' STRING ';'] (function | service)*
/// service  := 'service' 'firebase' '.' 'storage' '{' (function | match)* '}'
/// match    := 'match' PATH '{' (function | match | allow)* '}'
/// allow    := 'allow' METHOD (',' METHOD)* [':' 'if' expr] [';']
/// function := 'function' NAME '(' [NAME (',' NAME)*] ')' '{' ('let' NAME '=' expr ';')* 'return' expr [';'] '}'
/// ```
/// Expressions follow the language's precedence, highest first: member, index and call;
/// unary `!` and `-`; `* / %`; `+ -`; `< <= > >=`; `in`; `is`; `== !=`; `&&`; `||`; `?:`.
struct StorageRulesParser {
    private var lexer: StorageRulesLexer
    private var token: StorageToken

    static let methods: Set<String> = ["read", "write", "get", "list", "create", "update", "delete"]

    static func parse(_ source: String) throws(StorageRulesSyntaxError) -> StorageRulesDocument {
        var parser = try StorageRulesParser(source)
        return try parser.document()
    }

    private init(_ source: String) throws(StorageRulesSyntaxError) {
        lexer = StorageRulesLexer(source)
        token = try lexer.next()
    }

    // MARK: - Tokens

    private mutating func advance() throws(StorageRulesSyntaxError) {
        token = try lexer.next()
    }

    private func error(_ message: String) -> StorageRulesSyntaxError {
        StorageRulesSyntaxError(message: message, position: token.position)
    }

    private var tokenText: String {
        switch token.kind {
        case .identifier(let name): "'\(name)'"
        case .int(let value): "\(value)"
        case .float(let value): "\(value)"
        case .string(let text): "'\(text)'"
        case .symbol(let symbol): "'\(symbol)'"
        case .end: "the end of the file"
        }
    }

    private func isSymbol(_ symbol: String) -> Bool { token.kind == .symbol(symbol) }
    private func isWord(_ word: String) -> Bool { token.kind == .identifier(word) }

    private mutating func expect(_ symbol: String) throws(StorageRulesSyntaxError) {
        guard isSymbol(symbol) else { throw error("expected '\(symbol)' but found \(tokenText)") }
        try advance()
    }

    private mutating func expectWord(_ word: String) throws(StorageRulesSyntaxError) {
        guard isWord(word) else { throw error("expected '\(word)' but found \(tokenText)") }
        try advance()
    }

    private mutating func name(_ what: String) throws(StorageRulesSyntaxError) -> String {
        guard case .identifier(let name) = token.kind else { throw error("expected \(what) but found \(tokenText)") }
        try advance()
        return name
    }

    // MARK: - Structure

    private mutating func document() throws(StorageRulesSyntaxError) -> StorageRulesDocument {
        var version = 1
        if isWord("rules_version") {
            try advance()
            try expect("=")
            guard case .string(let text) = token.kind else { throw error("expected '1' or '2' after rules_version =") }
            guard let number = Int(text), number == 1 || number == 2 else {
                throw error("rules_version must be '1' or '2', not '\(text)'")
            }
            version = number
            try advance()
            if isSymbol(";") { try advance() }
        }
        var functions: [StorageRulesDocument.Function] = []
        var matches: [StorageRulesDocument.Match] = []
        var sawService = false
        while token.kind != .end {
            if isWord("function") {
                functions.append(try function())
            } else if isWord("service") {
                guard !sawService else { throw error("a rules file has one service block") }
                sawService = true
                try advance()
                let service = try qualifiedName()
                guard service == "firebase.storage" else {
                    throw error("expected 'service firebase.storage', not 'service \(service)'")
                }
                try expect("{")
                while !isSymbol("}") {
                    if isWord("function") {
                        functions.append(try function())
                    } else if isWord("match") {
                        matches.append(try match(version: version))
                    } else {
                        throw error("expected 'match' or 'function' but found \(tokenText)")
                    }
                }
                try advance()
            } else {
                throw error("expected 'service', 'function' or 'rules_version' but found \(tokenText)")
            }
        }
        guard sawService else { throw error("the file has no 'service firebase.storage' block") }
        return StorageRulesDocument(version: version, functions: functions, matches: matches)
    }

    private mutating func qualifiedName() throws(StorageRulesSyntaxError) -> String {
        var parts = [try name("a service name")]
        while isSymbol(".") {
            try advance()
            parts.append(try name("a service name"))
        }
        return parts.joined(separator: ".")
    }

    private mutating func match(version: Int) throws(StorageRulesSyntaxError) -> StorageRulesDocument.Match {
        let position = token.position
        // The path is read raw, straight after the 'match' word (still the current token).
        let pattern = try lexer.matchPath()
        try advance()
        let recursive = pattern.indices.filter { if case .recursive = pattern[$0] { true } else { false } }
        if recursive.count > 1 {
            throw StorageRulesSyntaxError(message: "a match path may have only one {name=**} wildcard", position: position)
        }
        if version == 1, let index = recursive.first, index != pattern.count - 1 {
            throw StorageRulesSyntaxError(
                message: "with rules_version '1', a {name=**} wildcard must be the last segment", position: position)
        }
        try expect("{")
        var functions: [StorageRulesDocument.Function] = []
        var allows: [StorageRulesDocument.Allow] = []
        var matches: [StorageRulesDocument.Match] = []
        while !isSymbol("}") {
            if isWord("function") {
                functions.append(try function())
            } else if isWord("match") {
                matches.append(try match(version: version))
            } else if isWord("allow") {
                allows.append(try allow())
            } else {
                throw error("expected 'allow', 'match' or 'function' but found \(tokenText)")
            }
        }
        try advance()
        return StorageRulesDocument.Match(
            pattern: pattern, functions: functions, allows: allows, matches: matches, position: position)
    }

    private mutating func allow() throws(StorageRulesSyntaxError) -> StorageRulesDocument.Allow {
        let position = token.position
        try advance()
        var methods: Set<String> = []
        repeat {
            if isSymbol(",") { try advance() }
            let method = try name("a method (read, write, get, list, create, update, delete)")
            guard Self.methods.contains(method) else {
                throw StorageRulesSyntaxError(
                    message: "unknown method '\(method)': use read, write, get, list, create, update or delete",
                    position: position)
            }
            methods.insert(method)
        } while isSymbol(",")
        var condition: StorageExpression?
        if isSymbol(":") {
            try advance()
            try expectWord("if")
            condition = try expression()
        }
        if isSymbol(";") {
            try advance()
        } else if !isSymbol("}") && !isWord("allow") && !isWord("match") && !isWord("function") {
            throw error("expected ';' after the allow rule but found \(tokenText)")
        }
        return StorageRulesDocument.Allow(methods: methods, condition: condition, position: position)
    }

    private mutating func function() throws(StorageRulesSyntaxError) -> StorageRulesDocument.Function {
        let position = token.position
        try advance()
        let functionName = try name("a function name")
        try expect("(")
        var parameters: [String] = []
        while !isSymbol(")") {
            if !parameters.isEmpty { try expect(",") }
            parameters.append(try name("a parameter name"))
        }
        try advance()
        try expect("{")
        var bindings: [(name: String, value: StorageExpression)] = []
        while isWord("let") {
            try advance()
            let binding = try name("a variable name")
            try expect("=")
            bindings.append((binding, try expression()))
            try expect(";")
        }
        try expectWord("return")
        let body = try expression()
        if isSymbol(";") { try advance() }
        try expect("}")
        return StorageRulesDocument.Function(
            name: functionName, parameters: parameters, bindings: bindings, body: body, position: position)
    }

    // MARK: - Expressions

    mutating func expression() throws(StorageRulesSyntaxError) -> StorageExpression {
        let condition = try binary(level: 0)
        guard isSymbol("?") else { return condition }
        let position = token.position
        try advance()
        let then = try expression()
        try expect(":")
        let otherwise = try expression()
        return .conditional(condition, then, otherwise, position)
    }

    /// Binary operators by precedence, lowest first.
    private static let levels: [[String]] = [
        ["||"], ["&&"], ["==", "!="], ["is"], ["in"], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"],
    ]

    private func binaryOperator(at level: Int) -> String? {
        for op in Self.levels[level] {
            if op == "is" || op == "in" {
                if isWord(op) { return op }
            } else if isSymbol(op) {
                return op
            }
        }
        return nil
    }

    private mutating func binary(level: Int) throws(StorageRulesSyntaxError) -> StorageExpression {
        guard level < Self.levels.count else { return try unary() }
        var left = try binary(level: level + 1)
        while let op = binaryOperator(at: level) {
            let position = token.position
            try advance()
            if op == "is" {
                let type = try name("a type name")
                left = .isType(left, type, position)
            } else {
                left = .binary(op, left, try binary(level: level + 1), position)
            }
        }
        return left
    }

    private mutating func unary() throws(StorageRulesSyntaxError) -> StorageExpression {
        if isSymbol("!") || isSymbol("-") {
            let position = token.position
            let op = isSymbol("!") ? "!" : "-"
            try advance()
            let operand = try unary()
            if op == "-", case .literal(.int(let value)) = operand { return .literal(.int(-value)) }
            if op == "-", case .literal(.float(let value)) = operand { return .literal(.float(-value)) }
            return .unary(op, operand, position)
        }
        return try postfix()
    }

    private mutating func postfix() throws(StorageRulesSyntaxError) -> StorageExpression {
        var value = try primary()
        while true {
            let position = token.position
            if isSymbol(".") {
                try advance()
                let member = try name("a field or method name")
                if isSymbol("(") {
                    let arguments = try argumentList()
                    // A call on a bare name path is a namespaced function: math.abs(x).
                    if let names = Self.names(of: value) {
                        value = .call(names + [member], arguments, position)
                    } else {
                        value = .method(value, member, arguments, position)
                    }
                } else {
                    value = .member(value, member, position)
                }
            } else if isSymbol("[") {
                try advance()
                var start: StorageExpression?
                if !isSymbol(":") { start = try expression() }
                if isSymbol(":") {
                    try advance()
                    var end: StorageExpression?
                    if !isSymbol("]") { end = try expression() }
                    guard start != nil || end != nil else { throw error("a range needs a start or an end") }
                    try expect("]")
                    value = .slice(value, start, end, position)
                } else {
                    try expect("]")
                    value = .index(value, start!, position)
                }
            } else if isSymbol("("), case .variable(let function, let at) = value {
                value = .call([function], try argumentList(), at)
            } else {
                return value
            }
        }
    }

    /// `math` in `math.abs(…)`: the names of a chain of bare names, if the value is one.
    private static func names(of expression: StorageExpression) -> [String]? {
        switch expression {
        case .variable(let name, _):
            return ["math", "timestamp", "duration", "firestore", "hashing"].contains(name) ? [name] : nil
        default: return nil
        }
    }

    private mutating func argumentList() throws(StorageRulesSyntaxError) -> [StorageExpression] {
        try expect("(")
        var arguments: [StorageExpression] = []
        while !isSymbol(")") {
            if !arguments.isEmpty { try expect(",") }
            arguments.append(try expression())
        }
        try advance()
        return arguments
    }

    private mutating func primary() throws(StorageRulesSyntaxError) -> StorageExpression {
        let position = token.position
        switch token.kind {
        case .int(let value):
            try advance()
            return .literal(.int(value))
        case .float(let value):
            try advance()
            return .literal(.float(value))
        case .string(let text):
            try advance()
            return .literal(.string(text))
        case .identifier(let name):
            try advance()
            switch name {
            case "true": return .literal(.bool(true))
            case "false": return .literal(.bool(false))
            case "null": return .literal(.null)
            default: return .variable(name, position)
            }
        case .symbol("("):
            try advance()
            let inner = try expression()
            try expect(")")
            return inner
        case .symbol("["):
            try advance()
            var items: [StorageExpression] = []
            while !isSymbol("]") {
                if !items.isEmpty {
                    try expect(",")
                    if isSymbol("]") { break }
                }
                items.append(try expression())
            }
            try advance()
            return .list(items)
        case .symbol("{"):
            try advance()
            var entries: [(key: String, value: StorageExpression)] = []
            while !isSymbol("}") {
                if !entries.isEmpty {
                    try expect(",")
                    if isSymbol("}") { break }
                }
                guard case .string(let key) = token.kind else { throw error("map keys must be strings, not \(tokenText)") }
                try advance()
                try expect(":")
                entries.append((key, try expression()))
            }
            try advance()
            return .map(entries)
        case .symbol("/"):
            throw error("path literals (used for Firestore lookups) are not supported by Hearth")
        default:
            throw error("expected a value but found \(tokenText)")
        }
    }
}
