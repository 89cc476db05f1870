import Foundation
import Synchronization

/// Latencies in nanoseconds, kept as counts in log-linear buckets (32 per power of two, so a
/// percentile is read to within about 3 %): a ten-minute run records millions of values in a
/// fixed 15 KB.
struct LatencyHistogram: Sendable {
    private static let subBuckets = 32
    private static let bucketCount = 60 * 32

    private var counts = [Int](repeating: 0, count: LatencyHistogram.bucketCount)
    private(set) var count = 0
    private(set) var max: UInt64 = 0

    private static func index(of value: UInt64) -> Int {
        guard value >= UInt64(subBuckets) else { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount  // ≥ 5
        let sub = Int((value >> UInt64(exponent - 5)) & 31)
        return Swift.min((exponent - 4) * subBuckets + sub, bucketCount - 1)
    }

    /// The middle of bucket `index`'s range.
    private static func value(at index: Int) -> UInt64 {
        guard index >= subBuckets else { return UInt64(index) }
        let exponent = index / subBuckets + 4
        let width = UInt64(1) << UInt64(exponent - 5)
        return UInt64(subBuckets + index % subBuckets) * width + width / 2
    }

    mutating func record(_ value: UInt64) {
        counts[Self.index(of: value)] += 1
        count += 1
        if value > max { max = value }
    }

    mutating func record(contentsOf values: [UInt64]) {
        for value in values { record(value) }
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] += other.counts[index] }
        count += other.count
        max = Swift.max(max, other.max)
    }

    /// The value below which a fraction `p` of the recorded values lie (nil when empty);
    /// `p` = 1 gives the exact maximum.
    func percentile(_ p: Double) -> UInt64? {
        guard count > 0 else { return nil }
        if p >= 1 { return max }
        let rank = Swift.max(1, Int((Double(count) * p).rounded(.up)))
        var seen = 0
        for (index, bucket) in counts.enumerated() where bucket > 0 {
            seen += bucket
            if seen >= rank { return Swift.min(Self.value(at: index), max) }
        }
        return max
    }
}

/// What one soak run counts: operations by kind, errors by kind (with the first messages
/// verbatim), and latencies. Latencies count only while ``measuring`` (after the warm-up);
/// operations and errors count for the whole run. Thread-safe: clients on every event loop
/// report here, in small batches.
final class SoakRecorder: Sendable {
    enum Latency: String, CaseIterable, Sendable {
        case restRead = "rest-read"
        case restWrite = "rest-write"
        case realtimeWrite = "realtime-write"
        case transaction = "transaction"
        case sseDelivery = "sse-delivery"
        case realtimeDelivery = "realtime-delivery"
    }

    enum Operation: String, CaseIterable, Sendable {
        case restRead = "rest-reads"
        case restWrite = "rest-writes"
        case realtimeWrite = "realtime-writes"
        case transaction = "transactions"
        case transactionRetry = "transaction-retries (datastale)"
        /// A transaction that saw only stale answers for all its attempts, under contention:
        /// it gives up as Firebase's SDKs do (`maxretry`), an outcome for the app, not a fault.
        case transactionGaveUp = "transactions given up (every attempt stale, under contention)"
        case sseEvent = "sse-events"
        case realtimeEvent = "realtime-events"
        case lateTick = "late ticks (previous request still unanswered)"
        case vanishCycle = "vanishing-client cycles"
        case ghostCycle = "ghost-client cycles (silent until the server gives up)"
        case slowConsumerOpened = "slow consumers opened"
    }

    let measuring = Atomic<Bool>(false)
    private let totals: [LockedHistogram]
    /// Latencies since the last sample of the time series.
    private let window: [LockedHistogram]
    private let operations: [SharedCount]
    private let errorCounts = Mutex<[String: Int]>([:])
    private let errorSamples = Mutex<[String]>([])
    let errorTotal = Atomic<Int>(0)

    static let sampleLimit = 12

    init() {
        totals = Latency.allCases.map { _ in LockedHistogram() }
        window = Latency.allCases.map { _ in LockedHistogram() }
        operations = Operation.allCases.map { _ in SharedCount() }
    }

    private static func slot(_ kind: Latency) -> Int { Latency.allCases.firstIndex(of: kind)! }
    private static func slot(_ kind: Operation) -> Int { Operation.allCases.firstIndex(of: kind)! }

    func count(_ kind: Operation, _ amount: Int = 1) {
        operations[Self.slot(kind)].value.add(amount, ordering: .relaxed)
    }

    func operationCount(_ kind: Operation) -> Int { operations[Self.slot(kind)].value.load(ordering: .relaxed) }

    func record(_ kind: Latency, _ values: [UInt64]) {
        guard !values.isEmpty, measuring.load(ordering: .relaxed) else { return }
        totals[Self.slot(kind)].state.withLock { $0.record(contentsOf: values) }
        window[Self.slot(kind)].state.withLock { $0.record(contentsOf: values) }
    }

    func record(_ kind: Latency, _ value: UInt64) {
        guard measuring.load(ordering: .relaxed) else { return }
        totals[Self.slot(kind)].state.withLock { $0.record(value) }
        window[Self.slot(kind)].state.withLock { $0.record(value) }
    }

    func histogram(_ kind: Latency) -> LatencyHistogram { totals[Self.slot(kind)].state.withLock { $0 } }

    /// The latencies of `kind` since the last call, and a fresh window.
    func takeWindow(_ kind: Latency) -> LatencyHistogram {
        window[Self.slot(kind)].state.withLock { histogram in
            defer { histogram = LatencyHistogram() }
            return histogram
        }
    }

    /// Counts an error of `kind` (an HTTP status, a dropped stream, a timeout…); the first few
    /// messages are kept verbatim.
    func error(_ kind: String, _ message: String) {
        errorTotal.add(1, ordering: .relaxed)
        errorCounts.withLock { $0[kind, default: 0] += 1 }
        errorSamples.withLock { if $0.count < Self.sampleLimit { $0.append("\(kind): \(message.prefix(300))") } }
    }

    var errorsByKind: [String: Int] { errorCounts.withLock { $0 } }
    var firstErrors: [String] { errorSamples.withLock { $0 } }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}

/// A histogram behind a lock (a `Mutex` cannot be an array's element).
final class LockedHistogram: Sendable {
    let state = Mutex(LatencyHistogram())
}

/// A count shared by threads (an `Atomic` cannot be an array's element).
final class SharedCount: Sendable {
    let value = Atomic<Int>(0)
}

/// One writer's sequence numbers in its room: every write carries `{"seq":n,"stamp":ns}` at
/// `rooms/<room>/<key>`, n counting up from 1.
final class WriterLedger: Sendable {
    let key: String
    let room: Int
    /// The highest sequence number sent, and the highest the server acknowledged.
    let sent = Atomic<Int64>(0)
    let acknowledged = Atomic<Int64>(0)

    init(key: String, room: Int) {
        self.key = key
        self.room = room
    }

    func acknowledge(_ seq: Int64) {
        var current = acknowledged.load(ordering: .relaxed)
        while seq > current {
            let (exchanged, original) = acknowledged.compareExchange(expected: current, desired: seq, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }
}

/// What one listener of a room has seen: the last sequence number of every writer. Each
/// writer's values must arrive in order and without a gap (a write committed after the
/// listener was acknowledged must reach it).
final class ListenerLedger: Sendable {
    let room: Int
    let name: String
    let recorder: SoakRecorder
    private let seen = Mutex<[String: Int64]>([:])
    /// Set once the listen is acknowledged (SSE: the first `put` arrived).
    let ready = Atomic<Bool>(false)
    /// The connection was lost: its gaps after that are not counted again.
    let lost = Atomic<Bool>(false)

    init(room: Int, name: String, recorder: SoakRecorder) {
        self.room = room
        self.name = name
        self.recorder = recorder
    }

    /// A value of `writer` with sequence number `seq` arrived.
    func saw(writer: String, seq: Int64) {
        let last = seen.withLock { seen -> Int64 in
            let last = seen[writer] ?? 0
            if seq > last { seen[writer] = seq }
            return last
        }
        if seq != last + 1 {
            let what = seq <= last ? "again or out of order" : "after a gap: \(seq - last - 1) value(s) missed"
            recorder.error("missed-event", "\(name) got \(writer) seq \(seq) \(what) (last seen \(last))")
        }
    }

    /// The whole room arrived (the first value, or a resync): every writer's number is taken
    /// as it is, without checking for gaps.
    func reset(to values: [String: Int64]) {
        seen.withLock { seen in
            for (writer, seq) in values where seq > seen[writer] ?? 0 { seen[writer] = seq }
        }
    }

    func lastSeen(_ writer: String) -> Int64 { seen.withLock { $0[writer] ?? 0 } }
}
