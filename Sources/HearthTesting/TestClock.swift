import Synchronization

/// A settable millisecond clock for ``HearthStore/DatabaseOptions/clock``.
public final class TestClock: Sendable {
    private let milliseconds: Mutex<Int64>

    /// A clock reading `start` (milliseconds since the epoch).
    public init(start: Int64 = 1_700_000_000_000) {
        milliseconds = Mutex(start)
    }

    /// The current reading.
    public var now: Int64 { milliseconds.withLock { $0 } }

    /// Moves the clock forward.
    public func advance(by delta: Int64) {
        milliseconds.withLock { $0 += delta }
    }

    /// Sets the reading.
    public func set(_ value: Int64) {
        milliseconds.withLock { $0 = value }
    }
}

/// A deterministic random number generator (SplitMix64) for push IDs in tests.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
