import ArgumentParser
import Foundation
import HearthCore
import HearthStore
import Logging

/// In-process engine benchmarks: no HTTP, real SQLite files.
struct InProcess: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inprocess",
        abstract: "Measure writes into a 1M-child node, indexed top-20 queries, tree memory and restart time."
    )

    @Option(help: "Children under the big node.")
    var children: Int = 1_000_000

    @Option(help: "Children for the top-20 query benchmark.")
    var queryChildren: Int = 100_000

    @Option(help: "Durable writes to time.")
    var writes: Int = 20_000

    @Option(help: "Concurrent writers.")
    var concurrency: Int = 16

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var logger = Logger(label: "bench")
        logger.logLevel = .warning

        // 1. Memory of a 1M-node tree.
        let rssBefore = residentBytes()
        let big = makeBigNode(count: children)
        let rssAfter = residentBytes()
        let perNode = Double(rssAfter - rssBefore) / Double(children)
        report("memory of a \(children)-child tree", "\(mb(rssAfter - rssBefore)) MB (\(Int(perNode)) bytes per child)")

        // 2. Pure engine: writes into the big node (no I/O).
        var state = DatabaseState(root: Node.object([(ChildKey("big"), big)]))
        let coreWrites = 200_000
        var clock = ContinuousClock.now
        for index in 0..<coreWrites {
            let path = Path(keys: [ChildKey("big"), ChildKey("new-\(index)")])
            state = try state.applying(.set(path, .int(Int64(index))), now: 0).0
        }
        let coreRate = Double(coreWrites) / seconds(since: clock)
        report("engine writes into a node with \(children) children (no I/O)", "\(Int(coreRate)) writes/s")

        // 3. Durable writes into the big node through the database (group commit, fsync).
        let database = try Database(name: "bench", folder: directory.appendingPathComponent("db"), logger: logger)
        clock = .now
        try await database.replace(at: Path(keys: [ChildKey("big")]), with: big)
        report("import of \(children) children (one atomic write)", String(format: "%.2f s", seconds(since: clock)))
        let writeRate = try await durableWrites(database)
        report("durable writes into a node with \(children) children, \(concurrency) writers", "\(Int(writeRate)) writes/s")

        // 4. Restart time with the big tree.
        database.close()
        clock = .now
        let reopened = try Database(name: "bench", folder: directory.appendingPathComponent("db"), logger: logger)
        let restart = seconds(since: clock)
        let count = reopened.value(at: Path(keys: [ChildKey("big")])).childCount
        report("restart with \(count) children (snapshot + log replay)", String(format: "%.2f s", restart))

        // 5. Top-20 by a child value over 100k children, indexed.
        try await topQueries(folder: directory.appendingPathComponent("query"), logger: logger)
    }

    private func makeBigNode(count: Int) -> Node {
        var entries: [(ChildKey, Node)] = []
        entries.reserveCapacity(count)
        var generator = PushIDGenerator()
        var random = SystemRandomNumberGenerator()
        for index in 0..<count {
            let key = generator.next(now: 1_700_000_000_000 + Int64(index / 10), using: &random)
            let post = Node.object([
                (ChildKey("author"), .string("user\(index % 1000)")),
                (ChildKey("stars"), .int(Int64(index % 997))),
            ])
            entries.append((ChildKey(key), post))
        }
        return .object(Children(entries: entries))
    }

    private func durableWrites(_ database: Database) async throws -> Double {
        let perWriter = writes / concurrency
        let clock = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<concurrency {
                group.addTask {
                    for index in 0..<perWriter {
                        let value = Node.object([
                            (ChildKey("author"), .string("writer\(writer)")), (ChildKey("stars"), .int(Int64(index))),
                        ])
                        let parsed = JSONParser.Parsed(node: value, depth: 1, hasServerValues: false)
                        try await database.push(at: Path(keys: [ChildKey("big")]), value: parsed)
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double(perWriter * concurrency) / seconds(since: clock)
    }

    private func topQueries(folder: URL, logger: Logger) async throws {
        let database = try Database(name: "query", folder: folder, logger: logger)
        var entries: [(ChildKey, Node)] = []
        var random = SystemRandomNumberGenerator()
        for index in 0..<queryChildren {
            entries.append((ChildKey("post\(index)"), Node.object([
                (ChildKey("title"), .string("Post \(index)")),
                (ChildKey("stars"), .int(Int64.random(in: 0..<1_000_000, using: &random))),
            ])))
        }
        let posts = Path(keys: [ChildKey("posts")])
        try await database.replace(at: posts, with: .object(Children(entries: entries)))
        let query = Query(order: .child(Path(keys: [ChildKey("stars")])), limit: .last(20))

        var clock = ContinuousClock.now
        _ = database.run(query, at: posts)
        report("first top-20 query over \(queryChildren) children (builds the index)", String(format: "%.1f ms", seconds(since: clock) * 1000))

        let rounds = 20_000
        clock = .now
        var checksum = 0
        for _ in 0..<rounds { checksum &+= database.run(query, at: posts).count }
        let indexed = Double(rounds) / seconds(since: clock)
        report("indexed top-20 by child value over \(queryChildren) children", "\(Int(indexed)) queries/s")

        clock = .now
        let scans = 20
        let root = database.current.state.root
        for _ in 0..<scans { checksum &+= root.child(at: posts).run(query).count }
        let scanned = Double(scans) / seconds(since: clock)
        report("same query without an index (full scan and sort)", String(format: "%.1f queries/s", scanned))
        precondition(checksum == (rounds + scans) * 20)
        database.close()
    }

    private func report(_ what: String, _ figure: String) {
        FileHandle.standardOutput.write(Data("| \(what) | \(figure) |\n".utf8))
    }

    private func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private func mb(_ bytes: Int) -> String { String(format: "%.0f", Double(bytes) / 1_048_576) }

    /// Resident memory from /proc/self/statm (Linux).
    private func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
