/// The value a query orders children by, in Firebase's cross-type order:
/// null < false < true < numbers < strings < objects (all objects equal).
public struct SortValue: Sendable, Hashable {
    enum Rank: UInt8, Sendable, Hashable {
        case null, falseValue, trueValue, number, string, object
    }

    let rank: Rank
    let number: Double
    let string: String

    private init(rank: Rank, number: Double = 0, string: String = "") {
        self.rank = rank
        self.number = number
        self.string = string
    }

    /// The null value (missing children sort here).
    public static let null = SortValue(rank: .null)

    /// The sort value of a node's own value (priority ignored).
    public init(_ node: Node) {
        switch node.unprioritized {
        case .null: self.init(rank: .null)
        case .bool(let value): self.init(rank: value ? .trueValue : .falseValue)
        case .int(let value): self.init(rank: .number, number: Double(value))
        case .double(let value): self.init(rank: .number, number: value)
        case .string(let value): self.init(rank: .string, string: value)
        case .object, .prioritized: self.init(rank: .object)
        }
    }

    /// The sort value of a priority: none sorts first, then numbers, then strings.
    public init(priority: Priority?) {
        switch priority {
        case nil: self.init(rank: .null)
        case .number(let value)?: self.init(rank: .number, number: value)
        case .string(let value)?: self.init(rank: .string, string: value)
        }
    }

    /// Three-way comparison.
    public static func compare(_ lhs: SortValue, _ rhs: SortValue) -> Int {
        if lhs.rank != rhs.rank { return lhs.rank.rawValue < rhs.rank.rawValue ? -1 : 1 }
        switch lhs.rank {
        case .number:
            return lhs.number == rhs.number ? 0 : (lhs.number < rhs.number ? -1 : 1)
        case .string:
            return compareUTF16Order(lhs.string, rhs.string)
        default:
            return 0
        }
    }
}
