import Synchronization

/// Event IDs for a running server: unique, stable once recorded, and cheap to make, since one
/// is made for every event a write records, under the database writer's lock.
///
/// An ID is UUID-shaped (`8-4-4-4-12` lowercase hex): 64 random bits chosen when the generator
/// is made, then a 64-bit counter. Two IDs of one generator never repeat (the counter), and two
/// generators, such as the same server before and after a restart, differ by their random half
/// (a repeat needs two 64-bit draws to collide). This avoids asking the kernel for randomness
/// per event, which `UUID()` does.
public final class EventIDGenerator: Sendable {
    private let prefix: UInt64
    private let counter = Atomic<UInt64>(0)

    /// - Parameter prefix: the random half; drawn from the system's generator by default.
    public init(prefix: UInt64 = UInt64.random(in: .min ... .max)) {
        self.prefix = prefix
    }

    /// A new ID.
    public func next() -> String {
        let count = counter.add(1, ordering: .relaxed).newValue
        var bytes = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
        var position = 0
        func hex(_ value: UInt64, nibbles: Int, from shift: Int) {
            for index in 0..<nibbles {
                if position == 8 || position == 13 || position == 18 || position == 23 { position += 1 }
                let nibble = Int((value >> UInt64(shift - 4 * index)) & 0xF)
                bytes[position] = nibble < 10 ? UInt8(ascii: "0") + UInt8(nibble) : UInt8(ascii: "a") + UInt8(nibble - 10)
                position += 1
            }
        }
        hex(prefix, nibbles: 16, from: 60)
        hex(count, nibbles: 16, from: 60)
        return String(decoding: bytes, as: UTF8.self)
    }
}
