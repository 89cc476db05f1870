/// Where something is in a rules file: 1-based line and column (in Unicode scalars).
public struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    public let line: Int
    public let column: Int

    public var description: String { "\(line):\(column)" }

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

/// A syntax error in a `storage.rules` file.
public struct StorageRulesSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public let position: SourcePosition

    public var description: String { "\(position): \(message)" }
}

/// One token of a `storage.rules` file.
struct StorageToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier(String)
        case int(Int64)
        case float(Double)
        case string(String)
        /// Operators and punctuation.
        case symbol(String)
        case end
    }

    let kind: Kind
    let position: SourcePosition
}

/// Splits a `storage.rules` file into tokens, skipping `//` and `/* */` comments. Match paths
/// are read raw by ``matchPath()``, since `{name}` in them is not a block.
struct StorageRulesLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1
    private var column = 1

    init(_ source: String) { scalars = Array(source.unicodeScalars) }

    private static let symbols = [
        "&&", "||", "==", "!=", "<=", ">=", "{", "}", "(", ")", "[", "]", ",", ";", ":", ".", "?", "!", "=", "<", ">",
        "+", "-", "*", "/", "%",
    ]

    var position: SourcePosition { SourcePosition(line: line, column: column) }

    private func peek(_ ahead: Int = 0) -> Unicode.Scalar? {
        index + ahead < scalars.count ? scalars[index + ahead] : nil
    }

    private mutating func advance() {
        if scalars[index] == "\n" {
            line += 1
            column = 1
        } else {
            column += 1
        }
        index += 1
    }

    private func error(_ message: String, at position: SourcePosition? = nil) -> StorageRulesSyntaxError {
        StorageRulesSyntaxError(message: message, position: position ?? self.position)
    }

    /// Skips spaces and comments.
    mutating func skipTrivia() throws(StorageRulesSyntaxError) {
        while let c = peek() {
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                advance()
            } else if c == "/" && peek(1) == "/" {
                while let d = peek(), d != "\n" { _ = d; advance() }
            } else if c == "/" && peek(1) == "*" {
                let start = position
                advance()
                advance()
                while true {
                    guard let d = peek() else { throw error("unterminated comment", at: start) }
                    if d == "*" && peek(1) == "/" {
                        advance()
                        advance()
                        break
                    }
                    advance()
                }
            } else {
                return
            }
        }
    }

    mutating func next() throws(StorageRulesSyntaxError) -> StorageToken {
        try skipTrivia()
        let start = position
        guard let c = peek() else { return StorageToken(kind: .end, position: start) }
        if Self.isIdentifierStart(c) {
            var name = ""
            while let d = peek(), Self.isIdentifierStart(d) || Self.isDigit(d) {
                name.unicodeScalars.append(d)
                advance()
            }
            return StorageToken(kind: .identifier(name), position: start)
        }
        if Self.isDigit(c) { return try number(start) }
        if c == "'" || c == "\"" { return try string(quote: c, start) }
        for symbol in Self.symbols where matches(symbol) {
            for _ in symbol.unicodeScalars { advance() }
            return StorageToken(kind: .symbol(symbol), position: start)
        }
        throw error("unexpected character '\(c)'")
    }

    private func matches(_ symbol: String) -> Bool {
        for (offset, scalar) in symbol.unicodeScalars.enumerated() where peek(offset) != scalar { return false }
        return true
    }

    private mutating func number(_ start: SourcePosition) throws(StorageRulesSyntaxError) -> StorageToken {
        var text = ""
        var isFloat = false
        while let d = peek(), Self.isDigit(d) || (d == "." && !isFloat && peek(1).map(Self.isDigit) == true) {
            if d == "." { isFloat = true }
            text.unicodeScalars.append(d)
            advance()
        }
        if let e = peek(), e == "e" || e == "E" {
            isFloat = true
            text.unicodeScalars.append(e)
            advance()
            if let sign = peek(), sign == "+" || sign == "-" {
                text.unicodeScalars.append(sign)
                advance()
            }
            while let d = peek(), Self.isDigit(d) {
                text.unicodeScalars.append(d)
                advance()
            }
        }
        if isFloat {
            guard let value = Double(text) else { throw error("invalid number \(text)", at: start) }
            return StorageToken(kind: .float(value), position: start)
        }
        guard let value = Int64(text) else { throw error("integer \(text) is out of range", at: start) }
        return StorageToken(kind: .int(value), position: start)
    }

    private mutating func string(quote: Unicode.Scalar, _ start: SourcePosition) throws(StorageRulesSyntaxError) -> StorageToken {
        advance()
        var text = ""
        while true {
            guard let c = peek(), c != "\n" else { throw error("unterminated string", at: start) }
            advance()
            if c == quote { return StorageToken(kind: .string(text), position: start) }
            if c == "\\" {
                guard let escaped = peek() else { throw error("unterminated string", at: start) }
                advance()
                switch escaped {
                case "n": text += "\n"
                case "t": text += "\t"
                case "r": text += "\r"
                case "\\", "'", "\"", "/": text.unicodeScalars.append(escaped)
                case "u":
                    var hex = ""
                    for _ in 0..<4 {
                        guard let h = peek(), h.properties.isASCIIHexDigit else { throw error("invalid \\u escape") }
                        hex.unicodeScalars.append(h)
                        advance()
                    }
                    guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else {
                        throw error("invalid \\u escape")
                    }
                    text.unicodeScalars.append(scalar)
                default:
                    // Regular expressions keep their escapes: '\.' is a backslash and a dot.
                    text += "\\"
                    text.unicodeScalars.append(escaped)
                }
            } else {
                text.unicodeScalars.append(c)
            }
        }
    }

    /// Reads a match path such as `/b/{bucket}/o` or `/{userId}/full/{path=**}` up to the `{`
    /// that opens its block.
    mutating func matchPath() throws(StorageRulesSyntaxError) -> [StorageRulesDocument.Segment] {
        try skipTrivia()
        var segments: [StorageRulesDocument.Segment] = []
        while peek() == "/" {
            advance()
            let start = position
            if peek() == "{" {
                advance()
                var name = ""
                while let c = peek(), Self.isIdentifierStart(c) || Self.isDigit(c) {
                    name.unicodeScalars.append(c)
                    advance()
                }
                guard !name.isEmpty else { throw error("expected a wildcard name after '{'", at: start) }
                if peek() == "=" {
                    advance()
                    guard peek() == "*", peek(1) == "*" else { throw error("expected '**' after '=' in a wildcard") }
                    advance()
                    advance()
                    guard peek() == "}" else { throw error("expected '}' to close the wildcard") }
                    advance()
                    segments.append(.recursive(name))
                } else {
                    guard peek() == "}" else { throw error("expected '}' to close the wildcard") }
                    advance()
                    segments.append(.single(name))
                }
            } else {
                var literal = ""
                while let c = peek(), c != "/", c != "{", c != " ", c != "\t", c != "\n", c != "\r" {
                    literal.unicodeScalars.append(c)
                    advance()
                }
                guard !literal.isEmpty else { throw error("empty path segment", at: start) }
                segments.append(.literal(literal))
            }
        }
        guard !segments.isEmpty else { throw error("expected a path starting with '/' after match") }
        return segments
    }

    static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "_"
    }

    static func isDigit(_ c: Unicode.Scalar) -> Bool { c >= "0" && c <= "9" }
}
