/// One child's place in an ordering: its sort value with its key as the tie-break.
public struct IndexEntry: Sendable, Hashable, TreeKey {
    public let value: SortValue
    public let key: ChildKey

    public init(value: SortValue, key: ChildKey) {
        self.value = value
        self.key = key
    }

    public static func compare(_ lhs: IndexEntry, _ rhs: IndexEntry) -> Int {
        let order = SortValue.compare(lhs.value, rhs.value)
        return order != 0 ? order : ChildKey.compare(lhs.key, rhs.key)
    }
}

/// A position in an ordering used as a range bound: a sort value and a key that may be the
/// smallest or largest possible key.
struct IndexPosition {
    enum KeyBound {
        case min, max
        case key(ChildKey)
    }

    let value: SortValue
    let key: KeyBound

    /// Compares an entry against this position.
    func compare(_ entry: IndexEntry) -> Int {
        let order = SortValue.compare(entry.value, value)
        if order != 0 { return order }
        switch key {
        case .min: return 1
        case .max: return -1
        case .key(let bound): return ChildKey.compare(entry.key, bound)
        }
    }
}
