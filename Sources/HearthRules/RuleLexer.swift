/// A syntax error inside one rule expression, at a character (Unicode scalar) offset of its text.
struct RuleSyntaxError: Error, Sendable, Hashable {
    let message: String
    let offset: Int
}

/// One token of a rule expression.
struct RuleToken: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case number(Double)
        case string(String)
        case regex(pattern: String, flags: String)
        case identifier(String)
        /// `true`, `false`, `null`.
        case keyword(String)
        /// Operators and punctuation: `( ) [ ] , . ? : ! + - * / % < <= > >= == === != !== && ||`.
        case symbol(String)
        case end
    }

    let kind: Kind
    /// Offset of the first character, in Unicode scalars from the start of the expression.
    let offset: Int
}

/// Splits a rule expression into tokens. A `/` starts a regular expression literal where an
/// operand is expected (after `(`, `,`, `[`, an operator, or at the start); elsewhere it divides.
struct RuleLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ source: String) { scalars = Array(source.unicodeScalars) }

    static func tokenize(_ source: String) throws(RuleSyntaxError) -> [RuleToken] {
        var lexer = RuleLexer(source)
        var tokens: [RuleToken] = []
        while true {
            let token = try lexer.next(after: tokens.last)
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        index + ahead < scalars.count ? scalars[index + ahead] : nil
    }

    private static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_" || c == "$"
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }

    /// True when a `/` after `previous` begins an operand (so it is a regex, not a division).
    private static func expectsOperand(after previous: RuleToken?) -> Bool {
        guard let previous else { return true }
        switch previous.kind {
        case .symbol(let symbol): return symbol != ")" && symbol != "]"
        case .end: return true
        default: return false
        }
    }

    private mutating func next(after previous: RuleToken?) throws(RuleSyntaxError) -> RuleToken {
        while let c = peek(), c == " " || c == "\t" || c == "\n" || c == "\r" { index += 1 }
        let start = index
        guard let c = peek() else { return RuleToken(kind: .end, offset: start) }

        if Self.isIdentifierStart(c) {
            var name = ""
            while let d = peek(), Self.isIdentifierStart(d) || Self.isDigit(d) {
                name.unicodeScalars.append(d)
                index += 1
            }
            switch name {
            case "true", "false", "null": return RuleToken(kind: .keyword(name), offset: start)
            default: return RuleToken(kind: .identifier(name), offset: start)
            }
        }
        if Self.isDigit(c) || (c == "." && peek(1).map(Self.isDigit) == true) {
            return try number(start: start)
        }
        if c == "'" || c == "\"" {
            return try string(quote: c, start: start)
        }
        if c == "/" && Self.expectsOperand(after: previous) {
            return try regex(start: start)
        }

        for symbol in ["===", "!==", "==", "!=", "<=", ">=", "&&", "||"] where matches(symbol) {
            index += symbol.unicodeScalars.count
            return RuleToken(kind: .symbol(symbol), offset: start)
        }
        switch c {
        case "(", ")", "[", "]", ",", ".", "?", ":", "!", "+", "-", "*", "/", "%", "<", ">":
            index += 1
            return RuleToken(kind: .symbol(String(Character(c))), offset: start)
        case "=":
            throw RuleSyntaxError(message: "assignment is not allowed; use == or ===", offset: start)
        case "&", "|":
            throw RuleSyntaxError(message: "bitwise operators are not supported; use && or ||", offset: start)
        default:
            throw RuleSyntaxError(message: "unexpected character '\(Character(c))'", offset: start)
        }
    }

    private func matches(_ symbol: String) -> Bool {
        var offset = 0
        for s in symbol.unicodeScalars {
            guard peek(offset) == s else { return false }
            offset += 1
        }
        return true
    }

    private mutating func number(start: Int) throws(RuleSyntaxError) -> RuleToken {
        var text = ""
        while let d = peek(), Self.isDigit(d) {
            text.unicodeScalars.append(d)
            index += 1
        }
        if peek() == ".", peek(1).map(Self.isDigit) == true {
            text += "."
            index += 1
            while let d = peek(), Self.isDigit(d) {
                text.unicodeScalars.append(d)
                index += 1
            }
        }
        if let e = peek(), e == "e" || e == "E" {
            var exponent = "e"
            var ahead = 1
            if let sign = peek(ahead), sign == "+" || sign == "-" {
                exponent.unicodeScalars.append(sign)
                ahead += 1
            }
            guard peek(ahead).map(Self.isDigit) == true else {
                throw RuleSyntaxError(message: "invalid number", offset: start)
            }
            index += ahead
            while let d = peek(), Self.isDigit(d) {
                exponent.unicodeScalars.append(d)
                index += 1
            }
            text += exponent
        }
        if let next = peek(), Self.isIdentifierStart(next) || Self.isDigit(next) {
            throw RuleSyntaxError(message: "invalid number", offset: start)
        }
        guard let value = Double(text.hasPrefix(".") ? "0" + text : text) else {
            throw RuleSyntaxError(message: "invalid number", offset: start)
        }
        return RuleToken(kind: .number(value), offset: start)
    }

    private mutating func string(quote: Unicode.Scalar, start: Int) throws(RuleSyntaxError) -> RuleToken {
        index += 1
        var text = ""
        while let c = peek() {
            index += 1
            if c == quote { return RuleToken(kind: .string(text), offset: start) }
            if c == "\n" { break }
            guard c == "\\" else {
                text.unicodeScalars.append(c)
                continue
            }
            let escapeOffset = index - 1
            guard let e = peek() else { break }
            index += 1
            switch e {
            case "n": text += "\n"
            case "t": text += "\t"
            case "r": text += "\r"
            case "b": text += "\u{08}"
            case "f": text += "\u{0C}"
            case "v": text += "\u{0B}"
            case "0": text += "\u{00}"
            case "u":
                var hex = ""
                for _ in 0..<4 {
                    guard let h = peek(), h.properties.isASCIIHexDigit else {
                        throw RuleSyntaxError(message: "invalid \\u escape", offset: escapeOffset)
                    }
                    hex.unicodeScalars.append(h)
                    index += 1
                }
                guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw RuleSyntaxError(message: "invalid \\u escape", offset: escapeOffset)
                }
                text.unicodeScalars.append(scalar)
            case "x":
                var hex = ""
                for _ in 0..<2 {
                    guard let h = peek(), h.properties.isASCIIHexDigit else {
                        throw RuleSyntaxError(message: "invalid \\x escape", offset: escapeOffset)
                    }
                    hex.unicodeScalars.append(h)
                    index += 1
                }
                text.unicodeScalars.append(Unicode.Scalar(UInt8(hex, radix: 16)!))
            default:
                text.unicodeScalars.append(e)
            }
        }
        throw RuleSyntaxError(message: "unterminated string", offset: start)
    }

    private mutating func regex(start: Int) throws(RuleSyntaxError) -> RuleToken {
        index += 1
        var pattern = ""
        var inClass = false
        while true {
            guard let c = peek(), c != "\n" else {
                throw RuleSyntaxError(message: "unterminated regular expression", offset: start)
            }
            index += 1
            if c == "\\" {
                guard let e = peek() else {
                    throw RuleSyntaxError(message: "unterminated regular expression", offset: start)
                }
                index += 1
                // `\/` is just a slash; every other escape goes to the regex engine as written.
                if e != "/" { pattern += "\\" }
                pattern.unicodeScalars.append(e)
                continue
            }
            if c == "[" { inClass = true }
            if c == "]" { inClass = false }
            if c == "/" && !inClass { break }
            pattern.unicodeScalars.append(c)
        }
        guard !pattern.isEmpty else {
            throw RuleSyntaxError(message: "empty regular expression", offset: start)
        }
        var flags = ""
        while let f = peek(), Self.isIdentifierStart(f) || Self.isDigit(f) {
            flags.unicodeScalars.append(f)
            index += 1
        }
        if let flag = flags.first(where: { $0 != "i" }) {
            throw RuleSyntaxError(message: "unsupported regular expression flag '\(flag)'; only i is allowed", offset: start)
        }
        return RuleToken(kind: .regex(pattern: pattern, flags: flags), offset: start)
    }
}
