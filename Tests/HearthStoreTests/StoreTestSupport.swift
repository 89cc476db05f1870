import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Logging
import Synchronization

/// A logger that stays quiet unless something goes wrong.
let quietLogger: Logger = {
    var logger = Logger(label: "hearth-store-tests")
    logger.logLevel = .error
    return logger
}()

/// Parses a JSON body the way a client's write arrives.
func parsed(_ json: String) throws -> JSONParser.Parsed {
    try JSONParser.parse(Array(json.utf8))
}

/// Parses JSON into a node (in export form: `.priority` and `.value` are understood).
func node(_ json: String) throws -> Node {
    try parsed(json).node
}

/// Parses a path; the last segment may be `.priority`.
func path(_ text: String) throws -> Path {
    try Path(parsing: text, allowPriority: true)
}

/// A `set` write from JSON text.
func set(_ location: String, _ json: String) throws -> Write {
    .set(try path(location), try parsed(json))
}

/// A multi-path `update` write from a base path and (relative path, JSON) pairs.
func update(_ base: String, _ entries: [(String, String)]) throws -> Write {
    .update(try path(base), try entries.map { (path: try path($0.0), value: try parsed($0.1)) })
}

/// Renders a node with priorities, for readable failure messages.
func exported(_ node: Node) -> String {
    JSONWriter.string(node, format: .init(export: true))
}

/// A database folder inside a temporary directory, and options built from a test clock and a
/// seeded random source.
struct StoreFixture {
    let directory: TemporaryDirectory
    let clock: TestClock
    var options: DatabaseOptions

    init(snapshotAfterWrites: Int = 1_000_000, snapshotAfterBytes: Int = 1 << 40, seed: UInt64 = 1) throws {
        directory = try TemporaryDirectory(prefix: "hearth-store")
        let clock = TestClock()
        self.clock = clock
        options = DatabaseOptions(
            snapshotAfterWrites: snapshotAfterWrites,
            snapshotAfterBytes: snapshotAfterBytes,
            clock: { clock.now },
            makeRandom: { SeededRandom(seed: seed) }
        )
    }

    /// Where the database lives.
    var folder: URL { directory.url.appendingPathComponent("db") }

    /// Opens (or reopens) the database in ``folder``.
    func open(name: String = "test") throws -> Database {
        try Database(name: name, folder: folder, options: options, logger: quietLogger)
    }

    func remove() { directory.remove() }
}

extension Database {
    /// Waits until the commit loop and any background snapshot it started are idle.
    func settle() {
        log.settle()
    }
}

/// A lock-protected value for collecting results from observers.
final class SendableBox<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func mutate(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}
