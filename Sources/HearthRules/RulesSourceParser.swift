/// Parses JSON with `//` and `/* */` comments (the rules file format) into ``SourceValue``,
/// keeping line and column positions for error messages.
public struct RulesSourceParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    private init(_ text: String) { bytes = Array(text.utf8) }

    /// Parses a whole document.
    /// - Throws: ``RulesError`` at the first syntax error.
    public static func parse(_ text: String) throws(RulesError) -> SourceValue {
        var parser = RulesSourceParser(text)
        try parser.skipSpaceAndComments()
        let value = try parser.parseValue(depth: 0)
        try parser.skipSpaceAndComments()
        guard parser.index == parser.bytes.count else {
            throw RulesError("unexpected text after the end of the document", at: parser.position)
        }
        return value
    }

    private var position: SourcePosition {
        // Columns count characters, not bytes.
        var column = 1
        var cursor = lineStart
        while cursor < index && cursor < bytes.count {
            if bytes[cursor] & 0xC0 != 0x80 { column += 1 }
            cursor += 1
        }
        return SourcePosition(line: line, column: column)
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func advance() {
        if bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        index += 1
    }

    private mutating func skipSpaceAndComments() throws(RulesError) {
        while let byte = peek() {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                advance()
            case UInt8(ascii: "/"):
                let start = position
                guard index + 1 < bytes.count else { throw RulesError("unexpected '/'", at: start) }
                if bytes[index + 1] == UInt8(ascii: "/") {
                    while let next = peek(), next != 0x0A { advance() }
                } else if bytes[index + 1] == UInt8(ascii: "*") {
                    advance()
                    advance()
                    var closed = false
                    while index < bytes.count {
                        if bytes[index] == UInt8(ascii: "*"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "/") {
                            advance()
                            advance()
                            closed = true
                            break
                        }
                        advance()
                    }
                    guard closed else { throw RulesError("unterminated /* comment", at: start) }
                } else {
                    throw RulesError("unexpected '/'", at: start)
                }
            default:
                return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(RulesError) -> SourceValue {
        guard depth < 256 else { throw RulesError("the document nests too deeply", at: position) }
        let start = position
        guard let byte = peek() else { throw RulesError("unexpected end of the document", at: start) }
        switch byte {
        case UInt8(ascii: "{"):
            advance()
            var members: [SourceValue.Member] = []
            try skipSpaceAndComments()
            if peek() == UInt8(ascii: "}") {
                advance()
                return .object(members, start)
            }
            while true {
                try skipSpaceAndComments()
                let keyPosition = position
                guard peek() == UInt8(ascii: "\"") else { throw RulesError("expected a quoted key", at: keyPosition) }
                let key = try parseString()
                try skipSpaceAndComments()
                guard peek() == UInt8(ascii: ":") else { throw RulesError("expected ':' after the key \"\(key)\"", at: position) }
                advance()
                try skipSpaceAndComments()
                let value = try parseValue(depth: depth + 1)
                members.append(.init(key: key, keyPosition: keyPosition, value: value))
                try skipSpaceAndComments()
                if peek() == UInt8(ascii: ",") {
                    advance()
                    continue
                }
                if peek() == UInt8(ascii: "}") {
                    advance()
                    return .object(members, start)
                }
                throw RulesError("expected ',' or '}'", at: position)
            }
        case UInt8(ascii: "["):
            advance()
            var items: [SourceValue] = []
            try skipSpaceAndComments()
            if peek() == UInt8(ascii: "]") {
                advance()
                return .array(items, start)
            }
            while true {
                try skipSpaceAndComments()
                items.append(try parseValue(depth: depth + 1))
                try skipSpaceAndComments()
                if peek() == UInt8(ascii: ",") {
                    advance()
                    continue
                }
                if peek() == UInt8(ascii: "]") {
                    advance()
                    return .array(items, start)
                }
                throw RulesError("expected ',' or ']'", at: position)
            }
        case UInt8(ascii: "\""):
            return .string(try parseString(), start)
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true, start)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false, start)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null(start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let begin = index
            while let next = peek(), next == UInt8(ascii: "-") || next == UInt8(ascii: "+") || next == UInt8(ascii: ".")
                || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") || (next >= 48 && next <= 57)
            {
                advance()
            }
            guard let number = Double(String(decoding: bytes[begin..<index], as: UTF8.self)) else {
                throw RulesError("invalid number", at: start)
            }
            return .number(number, start)
        default:
            throw RulesError("unexpected character '\(Unicode.Scalar(byte))'", at: start)
        }
    }

    private mutating func expect(_ word: String) throws(RulesError) {
        let start = position
        for expected in word.utf8 {
            guard peek() == expected else { throw RulesError("expected \(word)", at: start) }
            advance()
        }
    }

    private mutating func parseString() throws(RulesError) -> String {
        let start = position
        advance()
        var buffer: [UInt8] = []
        while let byte = peek() {
            advance()
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: buffer, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = peek() else { break }
                advance()
                switch escaped {
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "u"):
                    guard index + 4 <= bytes.count,
                        let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
                        let scalar = Unicode.Scalar(code)
                    else { throw RulesError("invalid \\u escape", at: position) }
                    for _ in 0..<4 { advance() }
                    buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: buffer.append(escaped)
                }
            case 0x0A:
                throw RulesError("unterminated string", at: start)
            default:
                buffer.append(byte)
            }
        }
        throw RulesError("unterminated string", at: start)
    }
}
