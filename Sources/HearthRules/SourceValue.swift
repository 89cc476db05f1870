/// A line and column in a rules file, both starting at 1.
public struct SourcePosition: Sendable, Hashable, CustomStringConvertible {
    public let line: Int
    public let column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }
}

/// A JSON value read from a rules file, remembering where each part started so that errors can
/// point at it. Object members keep their order.
public indirect enum SourceValue: Sendable {
    case null(SourcePosition)
    case bool(Bool, SourcePosition)
    case number(Double, SourcePosition)
    case string(String, SourcePosition)
    case array([SourceValue], SourcePosition)
    case object([Member], SourcePosition)

    /// One `"key": value` pair of an object.
    public struct Member: Sendable {
        public let key: String
        public let keyPosition: SourcePosition
        public let value: SourceValue
    }

    /// Where the value starts.
    public var position: SourcePosition {
        switch self {
        case .null(let p), .bool(_, let p), .number(_, let p), .string(_, let p), .array(_, let p), .object(_, let p):
            return p
        }
    }

    /// The member named `key` of an object.
    public subscript(key: String) -> SourceValue? {
        guard case .object(let members, _) = self else { return nil }
        return members.last { $0.key == key }?.value
    }
}
