import Foundation
import GRDB
import HearthCore
import HearthOutbox
import HearthTesting
import Logging
import Synchronization

/// A logger that stays quiet unless something goes badly wrong.
let quietLogger: Logger = {
    var logger = Logger(label: "hearth-functions-tests")
    logger.logLevel = .critical
    return logger
}()

/// A lock-protected list that observers append to from any thread, with a way to wait (on a
/// signal, not on time) until it holds enough entries.
final class Collected<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    private let signal = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    func append(_ item: Element) {
        items.withLock { $0.append(item) }
        signal.continuation.yield()
    }

    var all: [Element] { items.withLock { $0 } }

    /// Waits until at least `count` entries arrived, and returns them all.
    func wait(for count: Int) async -> [Element] {
        var iterator = signal.stream.makeAsyncIterator()
        while items.withLock({ $0.count }) < count {
            guard await iterator.next() != nil else { break }
        }
        return all
    }
}

/// A real ``SQLiteOutbox`` in a SQLite file of a temporary folder, with its tables made.
struct OutboxFixture {
    let directory: TemporaryDirectory
    let queue: DatabaseQueue
    let outbox: SQLiteOutbox

    init(source: String = "database/test") throws {
        directory = try TemporaryDirectory(prefix: "hearth-functions-outbox")
        queue = try DatabaseQueue(path: directory.url.appendingPathComponent("outbox.sqlite").path)
        try queue.write { db in
            try SQLiteOutbox.createTables(in: db)
            try SQLiteOutbox.addCursors(in: db)
        }
        outbox = SQLiteOutbox(source: source, writer: queue)
    }

    /// Records events in one transaction, as a commit would.
    func record(_ events: [OutboxEvent]) throws {
        try queue.write { db in try SQLiteOutbox.record(events, in: db) }
    }

    /// Records one event per ID for `subscriber`, at `time`.
    func record(ids: [String], for subscriber: String = "fn", time: Int64 = 4_000) throws {
        try record(ids.map { OutboxEvent(subscriber: subscriber, id: $0, body: Array("{\"id\":\"\($0)\"}".utf8), time: time) })
    }

    func remove() { directory.remove() }
}

/// JSON text parsed and written back with sorted keys, so two documents compare as values.
func canonicalJSON(_ value: Any) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]), as: UTF8.self)
}

func canonicalJSON(text: String) throws -> String {
    try canonicalJSON(try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]))
}
