import Foundation
import HearthCore

/// A value to write: what `updateChildValues` takes per path, written as literals
/// (`"text"`, `3`, `true`, `nil`, `["a": 1]`), from any `Encodable`, or a server value
/// (``serverTimestamp``, ``increment(_:)``).
public struct DatabaseValue: Sendable, Equatable, CustomStringConvertible {
    let node: Node

    init(node: Node) { self.node = node }

    /// Null: writing it deletes.
    public static let null = DatabaseValue(node: .null)

    /// The server's time when the write is applied (`{".sv": "timestamp"}`).
    public static let serverTimestamp = DatabaseValue(node: .object([(ChildKey(".sv"), .string("timestamp"))]))

    /// The stored number plus `delta`, computed by the server (`{".sv": {"increment": delta}}`).
    public static func increment(_ delta: Double) -> DatabaseValue {
        let number: Node = delta == delta.rounded() && abs(delta) < 9e15 ? .int(Int64(delta)) : .double(delta)
        return DatabaseValue(node: .object([(ChildKey(".sv"), .object([(ChildKey("increment"), number)]))]))
    }

    /// `value` as JSON, through `JSONEncoder`.
    public static func encoding<T: Encodable>(_ value: T) throws -> DatabaseValue {
        DatabaseValue(node: try Self.node(encoding: value))
    }

    static func node<T: Encodable>(encoding value: T) throws -> Node {
        let data = try JSONEncoder().encode(value)
        do {
            return try JSONParser.parse(Array(data)).node
        } catch {
            throw HearthClientError(.badRequest, "\(T.self) does not encode as a database value: \(error)")
        }
    }

    /// A value from JSON text, in Firebase's export format (`.priority`, `.value` and `.sv` kept).
    /// - Throws: ``HearthClientError`` (badRequest) with Firebase's words for text that is not such a value.
    public init(json: String) throws {
        do {
            node = try JSONParser.parse(Array(json.utf8)).node
        } catch {
            throw HearthClientError(.badRequest, error.message)
        }
    }

    /// The value as JSON text in export format (priorities kept).
    public var json: String { JSONWriter.string(node, format: .init(export: true)) }

    public init(_ value: Int) { node = .int(Int64(value)) }
    public init(_ value: Double) { node = .double(value) }
    public init(_ value: String) { node = .string(value) }
    public init(_ value: Bool) { node = .bool(value) }

    /// The value as JSON text.
    public var description: String { JSONWriter.string(node) }
}

extension DatabaseValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { node = .null }
    public init(booleanLiteral value: Bool) { node = .bool(value) }
    public init(integerLiteral value: Int64) { node = .int(value) }
    public init(floatLiteral value: Double) { node = .double(value) }
    public init(stringLiteral value: String) { node = .string(value) }

    public init(arrayLiteral elements: DatabaseValue...) {
        node = .object(elements.enumerated().map { (ChildKey(String($0.offset)), $0.element.node) })
    }

    public init(dictionaryLiteral elements: (String, DatabaseValue)...) {
        node = .object(elements.map { (ChildKey($0.0), $0.1.node) })
    }
}

/// A timestamp field of a model: the server's time when written as ``server``, and the stored
/// milliseconds when read. Rules such as FriendlyPix's `newData.val() === now` accept only the
/// server's time.
public struct ServerTimestamp: Codable, Sendable, Hashable, Comparable {
    /// Milliseconds since the epoch; nil until the server has set it.
    public var milliseconds: Int64?

    public init(milliseconds: Int64?) { self.milliseconds = milliseconds }

    /// "Set this to the server's time."
    public static let server = ServerTimestamp(milliseconds: nil)

    public var date: Date? { milliseconds.map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) } }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Int64.self) {
            milliseconds = value
        } else if let value = try? container.decode(Double.self) {
            milliseconds = Int64(value)
        } else {
            milliseconds = nil
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if let milliseconds {
            var container = encoder.singleValueContainer()
            try container.encode(milliseconds)
        } else {
            var container = encoder.container(keyedBy: ServerValueKey.self)
            try container.encode("timestamp", forKey: .sv)
        }
    }

    public static func < (lhs: ServerTimestamp, rhs: ServerTimestamp) -> Bool {
        (lhs.milliseconds ?? .max) < (rhs.milliseconds ?? .max)
    }

    private enum ServerValueKey: String, CodingKey {
        case sv = ".sv"
    }
}
