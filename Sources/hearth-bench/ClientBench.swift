import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthClient
import Synchronization

/// The Swift client's own figures (BENCHMARKS.md): the memory and disk its cache takes for a
/// listened location of N children, the time to show them from the cache with the server
/// unreachable, and how many events per second it applies from one busy listener.
struct ClientBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-bench",
        abstract: "Measure the Swift client: cache memory and disk for N nodes, and events/s from one busy listener."
    )

    @Option(help: "The server, such as http://127.0.0.1:9000 (open rules or --token).") var url: String
    @Option(help: "The server's admin token (to load the data).") var token: String
    @Option(help: "The database (ns).") var ns: String = "client-bench"
    @Option(help: "Children cached (each a leaf).") var nodes: Int = 100_000
    @Option(help: "Writes the busy listener receives.") var events: Int = 20_000
    @Option(help: "A folder for the cache file.") var folder: String = NSTemporaryDirectory()

    func run() async throws {
        guard let server = URL(string: url) else { throw ValidationError("--url \(url) is not a URL") }
        try await cacheFigures(server)
        try await listenerRate(server)
    }

    // MARK: - Cache

    private func cacheFigures(_ server: URL) async throws {
        var object: [String: String] = [:]
        for index in 0..<nodes { object[String(format: "k%07d", index)] = "value \(index) of the benchmark" }
        var request = URLRequest(url: server.appending(path: "bench/items.json").appending(queryItems: [.init(name: "ns", value: ns)]))
        request.httpMethod = "PUT"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.httpBody = try JSONSerialization.data(withJSONObject: object)
        let (_, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw ValidationError("loading the data failed: \(response)") }

        let cacheFile = URL(fileURLWithPath: folder).appending(path: "client-bench-\(UUID().uuidString).sqlite")
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: cacheFile.path + suffix) } }
        let before = RealtimeIdle.residentKilobytes(getpid())
        var start = ContinuousClock.now
        let (coldLoad, after) = try await { () async throws -> (Duration, Int) in
            let database = Database(url: server, namespace: ns, token: token, cacheURL: cacheFile)
            let ref = database.reference(withPath: "bench/items")
            var handle: DatabaseHandle?
            let first = try await firstValue(ref) { handle = $0 }
            let coldLoad = ContinuousClock.now - start
            guard first == nodes else { throw ValidationError("the listener got \(first) children, not \(nodes)") }
            await database.waitForPendingEvents()
            let after = RealtimeIdle.residentKilobytes(getpid())
            if let handle { ref.query.removeObserver(withHandle: handle) }
            return (coldLoad, after)
        }()  // the database goes here: it closes its connection and writes its cache out
        // Launched again with the server unreachable: the data comes from the cache.
        start = ContinuousClock.now
        let offline = Database(url: URL(string: "http://127.0.0.1:9")!, namespace: ns, token: token, cacheURL: cacheFile)
        let cached = try await firstValue(offline.reference(withPath: "bench/items")) { _ in }
        let warmOffline = ContinuousClock.now - start
        offline.goOffline()
        let disk = ["", "-wal"].reduce(0) { total, suffix in
            total + ((try? FileManager.default.attributesOfItem(atPath: cacheFile.path + suffix)[.size] as? Int) ?? 0)
        }
        print("""
            cache, \(nodes) children listened: first value from the server in \(Self.ms(coldLoad)) ms; \
            memory +\((after - before) / 1024) MB resident (\(String(format: "%.0f", Double((after - before) * 1024) / Double(nodes))) B per node); \
            cache file \(String(format: "%.1f", Double(disk) / 1_048_576)) MB (\(disk / nodes) B per node); \
            from the cache with the server unreachable: \(cached) children in \(Self.ms(warmOffline)) ms
            """)
    }

    private func firstValue(_ ref: DatabaseReference, handle: (DatabaseHandle) -> Void) async throws -> Int {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            let once = OnceFlag()
            handle(ref.query.observe([.value]) { event in
                if once.claim() { continuation.resume(returning: event.snapshot.childrenCount) }
            })
        }
    }

    // MARK: - One busy listener

    private func listenerRate(_ server: URL) async throws {
        let reader = Database(url: server, namespace: ns, token: token)
        let writer = Database(url: server, namespace: ns, token: token)
        let feedPath = "bench/feed-\(UUID().uuidString.prefix(8))"
        let feed = reader.reference(withPath: feedPath)
        let target = events
        let clock = ContinuousClock()
        let progress = EventCounter()
        let (done, finished) = AsyncStream<Duration>.makeStream()
        let start = clock.now
        let handle = feed.query.observe([.childAdded]) { _ in
            if progress.add() == target { finished.yield(clock.now - start) }
        }
        _ = try await feed.getData()  // the listen is answered (empty) before the writes start
        let writesStart = clock.now
        var last: DatabaseWrite?
        for index in 0..<events {
            last = writer.reference(withPath: feedPath).childByAutoId().setValue(DatabaseValue(index))
        }
        try await last?.acknowledged()
        let written = clock.now - writesStart
        var elapsed = Duration.zero
        for await value in done {
            elapsed = value
            break
        }
        feed.query.removeObserver(withHandle: handle)
        let applied = elapsed - (writesStart - start)
        let rate = Double(events) / (Double(applied.components.attoseconds) / 1e18 + Double(applied.components.seconds))
        print("""
            one busy listener: \(events) child_added events applied in \(Self.ms(applied)) ms \
            (\(Int(rate)) events/s; the writer's \(events) writes were acknowledged in \(Self.ms(written)) ms)
            """)
    }

    static func ms(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
    }

    final class OnceFlag: Sendable {
        private let claimed = Mutex(false)
        func claim() -> Bool { claimed.withLock { claimed in defer { claimed = true }; return !claimed } }
    }

    final class EventCounter: Sendable {
        private let count = Mutex(0)
        func add() -> Int { count.withLock { $0 += 1; return $0 } }
    }
}
