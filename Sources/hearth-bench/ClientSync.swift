import ArgumentParser
import Foundation
import HearthClient
import Synchronization

/// One run of an app on the Swift client with a cache file, for the offline tests
/// (`Tests/Offline`): optionally reads a location (from the cache when the server is
/// unreachable), makes writes (kept in the cache until the server has them), runs
/// transactions, and optionally waits until every pending write is acknowledged. Exiting
/// without waiting is an app closed with its writes still pending.
struct ClientSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-sync",
        abstract: "Run the Swift client with a cache file: read, write, transact, and wait for sync (offline tests)."
    )

    @Option(help: "The server, such as http://127.0.0.1:9000.") var url: String
    @Option(help: "The database (ns).") var ns: String
    @Option(help: "The client's cache file (SQLite).") var cache: String
    @Option(help: "A location whose value to print (its first value event).") var read: String?
    @Option(help: "Seconds to wait for the read's first value.") var readTimeout: Double = 5
    @Option(parsing: .upToNextOption, help: "Writes as PATH=JSON (a set each).") var set: [String] = []
    @Option(help: "Pushes under <prefix>/items, each with a server increment of <prefix>/count in the same update.")
    var pushes: Int = 0
    @Option(help: "Where pushes and transactions write.") var prefix: String = "app"
    @Option(help: "A name written into each pushed item.") var name: String = "client"
    @Option(help: "Transactions adding 1 to <prefix>/counter, one after another.") var transactions: Int = 0
    @Option(help: "Seconds to wait until every pending write is acknowledged (0: exit at once).") var waitSynced: Double = 0

    func run() async throws {
        guard let server = URL(string: url) else { throw ValidationError("--url \(url) is not a URL") }
        let database = Database(url: server, namespace: ns, cacheURL: URL(fileURLWithPath: cache))
        var output: [String: Any] = ["pendingAtStart": database.syncStatus.pendingWriteCount]
        var latest: LatestValue?
        if let read {
            let ref = database.reference(withPath: read)
            output["read"] = await Self.firstValue(ref, timeout: readTimeout) ?? NSNull()
            latest = LatestValue(ref)
        }
        for entry in set {
            guard let equals = entry.firstIndex(of: "=") else { throw ValidationError("--set \(entry): PATH=JSON") }
            let value = try DatabaseValue(json: String(entry[entry.index(after: equals)...]))
            database.reference(withPath: String(entry[..<equals])).setValue(value)
        }
        let items = database.reference(withPath: "\(prefix)/items")
        for index in 0..<pushes {
            let key = items.childByAutoId().key!
            database.root.updateChildValues([
                "\(prefix)/items/\(key)": ["n": DatabaseValue(index), "by": DatabaseValue(name)],
                "\(prefix)/count": .increment(1),
            ])
        }
        var committed = 0
        for _ in 0..<transactions {
            let (done, _) = try await database.reference(withPath: "\(prefix)/counter").runTransaction { snapshot in
                .success(DatabaseValue((snapshot.number ?? 0) + 1))
            }
            if done { committed += 1 }
        }
        output["transactionsCommitted"] = committed
        output["pendingAfterWrites"] = database.syncStatus.pendingWriteCount
        if waitSynced > 0 {
            output["synced"] = await Self.waitSynced(database, timeout: waitSynced)
        }
        if let latest, await Self.waitConnected(database, timeout: readTimeout) {
            // A write sent after the listen is answered after it: the value then is the server's.
            try? await database.reference(withPath: "_sync/\(name)").setValue(.serverTimestamp).acknowledged()
            await database.waitForPendingEvents()
            output["readSynced"] = latest.value ?? NSNull()
        }
        output["pendingAtExit"] = database.syncStatus.pendingWriteCount
        let json = try JSONSerialization.data(withJSONObject: output, options: [.sortedKeys])
        FileHandle.standardOutput.write(json + Data("\n".utf8))
    }

    /// The last value a listener at a location was given.
    final class LatestValue: Sendable {
        final class Slot: Sendable {
            let json = Mutex<String?>(nil)
        }

        private let slot = Slot()
        private let handle: DatabaseHandle
        private let ref: DatabaseReference

        init(_ ref: DatabaseReference) {
            self.ref = ref
            let slot = slot
            handle = ref.query.observe([.value]) { event in slot.json.withLock { $0 = event.snapshot.exportValue.json } }
        }

        deinit { ref.query.removeObserver(withHandle: handle) }

        var value: Any? {
            slot.json.withLock { $0 }.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
        }
    }

    /// The first value at `ref` as JSON, or nil if none came in time.
    static func firstValue(_ ref: DatabaseReference, timeout: Double) async -> Any? {
        let json = await first(within: timeout) { () async -> String? in
            do {
                for try await event in ref.observe(.value) { return event.snapshot.exportValue.json }
            } catch {}
            return nil
        }
        return json.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8), options: [.fragmentsAllowed]) }
    }

    /// Waits for the connection; false on timeout.
    static func waitConnected(_ database: Database, timeout: Double) async -> Bool {
        await first(within: timeout) { () async -> Bool? in
            for await status in database.observeSyncStatus() where status.isConnected { return true }
            return nil
        } ?? false
    }

    /// Waits until the server has acknowledged every write; false on timeout.
    static func waitSynced(_ database: Database, timeout: Double) async -> Bool {
        await first(within: timeout) { () async -> Bool? in
            for await status in database.observeSyncStatus() where status.pendingWriteCount == 0 && status.isConnected {
                return true
            }
            return nil
        } ?? false
    }

    /// What `work` answers, or nil when it answers nil or takes longer than `timeout` seconds.
    static func first<T: Sendable>(within timeout: Double, _ work: @escaping @Sendable () async -> T?) async -> T? {
        await withTaskGroup(of: T?.self) { group in
            group.addTask { await work() }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeout))
                return nil
            }
            let answer = await group.next() ?? nil
            group.cancelAll()
            return answer
        }
    }
}
