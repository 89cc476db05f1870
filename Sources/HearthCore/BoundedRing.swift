/// The newest `capacity` values appended, the oldest dropped first: what a server keeps of
/// something that never stops coming (its request log, its figures over time). A value type;
/// its owner guards it (a `Mutex`) when it is shared.
public struct BoundedRing<Element> {
    /// How many values are kept (at least 1).
    public let capacity: Int
    private var storage: [Element] = []
    /// Where the next value goes once the ring is full (the oldest value's place).
    private var next = 0

    public init(capacity: Int) {
        precondition(capacity >= 1, "a ring keeps at least one value")
        self.capacity = capacity
        storage.reserveCapacity(min(capacity, 4_096))
    }

    /// Keeps `value`, dropping the oldest when full.
    public mutating func append(_ value: Element) {
        if storage.count < capacity {
            storage.append(value)
        } else {
            storage[next] = value
        }
        next = (next + 1) % capacity
    }

    /// The values kept, oldest first.
    public var oldestFirst: [Element] {
        storage.count < capacity ? storage : Array(storage[next...] + storage[..<next])
    }

    public var count: Int { storage.count }
}

extension BoundedRing: Sendable where Element: Sendable {}
