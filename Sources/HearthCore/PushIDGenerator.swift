/// Generates Firebase push IDs: 20 characters, 8 encoding the time in milliseconds and 12
/// random, drawn from an alphabet in ASCII order so that IDs sort by time.
///
/// Within one millisecond (or if the clock steps back) the random part is incremented instead
/// of redrawn, so IDs from one generator never decrease.
public struct PushIDGenerator: Sendable {
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    private var lastTime: Int64 = .min
    private var lastRandom = [Int](repeating: 0, count: 12)

    public init() {}

    /// The next ID for the time `now` (milliseconds since the epoch).
    public mutating func next(now: Int64, using random: inout some RandomNumberGenerator) -> String {
        let time = max(now, lastTime)
        if time == lastTime {
            var index = 11
            while index >= 0 && lastRandom[index] == 63 {
                lastRandom[index] = 0
                index -= 1
            }
            if index >= 0 { lastRandom[index] += 1 }
        } else {
            // 72 random bits from two draws: ten digits from the first, two from the second. A
            // draw from the system generator is a system call, and `Int.random(in:using:)` per
            // digit (twelve draws, through generic arithmetic when the generator is an
            // existential) cost more than the rest of a write.
            let first = random.next()
            let second = random.next()
            for index in 0..<10 { lastRandom[index] = Int(truncatingIfNeeded: (first >> UInt64(58 - 6 * index)) & 63) }
            for index in 0..<2 { lastRandom[10 + index] = Int(truncatingIfNeeded: (second >> UInt64(58 - 6 * index)) & 63) }
        }
        lastTime = time
        var bytes = [UInt8](repeating: 0, count: 20)
        var remaining = time
        for index in stride(from: 7, through: 0, by: -1) {
            bytes[index] = Self.alphabet[Int(remaining % 64)]
            remaining /= 64
        }
        for index in 0..<12 { bytes[8 + index] = Self.alphabet[lastRandom[index]] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
