import Foundation
import GRDB
@testable import HearthStore
import HearthTesting
import Synchronization
import Testing

/// SQLite's online backup, as Hearth uses it, under a writer that never stops.
@Suite("Online SQLite copies")
struct OnlineCopyTests {
    @Test func aCopyMadeDuringWritesIsOneCommittedStateAndFinishes() throws {
        let directory = try TemporaryDirectory(prefix: "hearth-copy")
        defer { directory.remove() }
        let source = directory.url.appendingPathComponent("source.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .wal
        let writer = try DatabaseQueue(path: source.path, configuration: configuration)
        let payload = String(repeating: "x", count: 2000)
        try writer.write { db in
            try db.execute(sql: "CREATE TABLE row (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)")
            for id in 1...2000 { try db.execute(sql: "INSERT INTO row (id, payload) VALUES (?, ?)", arguments: [id, payload]) }
        }
        // Another connection commits rows one by one for as long as the copy runs.
        let stop = Atomic<Bool>(false)
        let committed = Mutex<Int>(2000)
        @Sendable func commitRow() throws {
            try committed.withLock { last in
                try writer.write { db in
                    try db.execute(sql: "INSERT INTO row (id, payload) VALUES (?, ?)", arguments: [last + 1, payload])
                }
                last += 1
            }
        }
        let thread = Thread {
            while !stop.load(ordering: .relaxed) { try? commitRow() }
        }
        thread.start()
        let destination = directory.url.appendingPathComponent("copy.sqlite")
        var steps = 0
        var lastProgress: SQLiteOnlineCopy.Progress?
        // A few pages per step, with commits landing between steps: without the read
        // transaction held across steps, SQLite would restart the copy at each commit. The copy
        // commits one itself early on, so one lands mid-copy however a loaded machine schedules
        // the writer, and no thread of the test pool ever waits on another.
        try SQLiteOnlineCopy.copy(from: source, to: destination, pagesPerStep: 8) { progress in
            steps += 1
            lastProgress = progress
            if steps == 2 { try? commitRow() }
            if steps % 16 == 0 { Thread.sleep(forTimeInterval: 0.001) }
        }
        let writtenDuring = committed.withLock { $0 }
        stop.store(true, ordering: .relaxed)
        #expect(steps > 100, "the copy went in many steps (\(steps))")
        #expect(lastProgress?.copiedPages == lastProgress?.totalPages)
        #expect(writtenDuring > 2000, "the writer committed while the copy ran")

        let copy = try DatabaseQueue(path: destination.path)
        try copy.read { db in
            #expect(try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok")
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM row") ?? 0
            let highest = try Int.fetchOne(db, sql: "SELECT max(id) FROM row") ?? 0
            #expect(count == highest, "the rows are one committed prefix, without holes")
            #expect(count >= 2000)
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path + "-wal"), "the copy is whole without a -wal")
        #expect(throws: StoreError.self, "an existing copy is never overwritten") {
            try SQLiteOnlineCopy.copy(from: source, to: destination)
        }
    }
}
