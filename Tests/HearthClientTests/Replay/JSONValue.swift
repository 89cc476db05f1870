import Foundation

/// Any JSON value, read with `JSONDecoder` (which tells booleans from numbers on every
/// platform); numbers are doubles, so `1` and `1.0` are equal, as in the suite's comparison.
enum JSONValue: Equatable, Sendable, Decodable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
    /// A number from 1e12 up once normalized: a server timestamp, equal to any other.
    case timestamp

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSONValue].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Reads JSON text.
    init(json text: String) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var number: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    var int: Int64? { number.map { Int64($0) } }

    var isNull: Bool { self == .null }

    /// Numbers from 1e12 up become ``timestamp`` (the suite's `normalize`).
    var normalized: JSONValue {
        switch self {
        case .number(let value) where value >= 1e12: return .timestamp
        case .array(let items): return .array(items.map(\.normalized))
        case .object(let members): return .object(members.mapValues(\.normalized))
        default: return self
        }
    }

    /// Compact JSON text (keys sorted).
    var json: String {
        switch self {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
            return String(value)
        case .string(let text):
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        case .array(let items): return "[" + items.map(\.json).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.sorted { $0.key < $1.key }.map { JSONValue.string($0.key).json + ":" + $0.value.json }
                .joined(separator: ",") + "}"
        case .timestamp: return "\"<timestamp>\""
        }
    }

    var description: String { json }
}
