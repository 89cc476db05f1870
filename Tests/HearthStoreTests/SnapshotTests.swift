import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// Snapshots compact the log behind them, and a snapshot plus the log after it restores the
/// exact tree, priorities included.
@Suite("Snapshots and compaction")
struct SnapshotTests {
    @Test func explicitSnapshotCompactsTheLogAndReopenReplaysTheRest() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let inspector = SQLiteInspector(folder: fixture.folder)
        var database: Database? = try fixture.open()
        for index in 0..<12 {
            try await database!.write(set("/before/k\(index)", #"{"v":\#(index),".priority":\#(index % 3)}"#))
        }
        try await database!.write(set("/.priority", #""root""#))
        #expect(try inspector.logSequences() == Array(1...13))

        database!.snapshot()
        #expect(try inspector.snapshotSequences() == [13])
        #expect(try inspector.logSequences() == [], "the snapshot covers every record")

        // Writes after the snapshot: values, deletes, priorities, an update.
        try await database!.write(set("/after/a", #"{".value":"x",".priority":"p"}"#))
        try await database!.write(set("/before/k0", "null"))
        try await database!.write(update("/before", [("k1/v", "100"), ("k2/.priority", "9")]))
        try await database!.write(set("/before/k3/.priority", "null"))
        #expect(try inspector.logSequences() == [14, 15, 16, 17], "only records after the snapshot stay in the log")
        let expected = database!.current.state.root
        #expect(expected.priority == .string("root"))
        #expect(expected.child(at: try path("before/k2")).priority == .number(9))
        #expect(expected.child(at: try path("before/k3")).priority == nil)
        #expect(expected.child(at: try path("before/k1/v")) == .int(100))
        #expect(expected.child(at: try path("before/k0")).isNull)
        database = nil

        let reopened = try fixture.open()
        #expect(reopened.current.state.root == expected, "restored: \(exported(reopened.current.state.root))")
        #expect(reopened.current.sequence == 17)
        #expect(reopened.value(at: try path("/after/a/.priority")) == .string("p"))
    }

    @Test func automaticSnapshotsKeepOnlyLaterRecords() async throws {
        let fixture = try StoreFixture(snapshotAfterWrites: 10)
        defer { fixture.remove() }
        let inspector = SQLiteInspector(folder: fixture.folder)
        var database: Database? = try fixture.open()
        func write(_ range: Range<Int>) async throws {
            for index in range {
                try await database!.write(set("/items/i\(index)", #"{"n":\#(index),".priority":\#(100 - index)}"#))
            }
            database!.settle()
        }

        try await write(0..<9)
        #expect(try inspector.snapshotSequences() == [], "nine writes are below the threshold")
        #expect(try inspector.logSequences() == Array(1...9))

        try await write(9..<10)
        #expect(try inspector.snapshotSequences() == [10], "the tenth write starts a snapshot")
        #expect(try inspector.logSequences() == [])

        try await write(10..<15)
        #expect(try inspector.snapshotSequences() == [10])
        #expect(try inspector.logSequences() == Array(11...15), "only records after the snapshot stay")

        try await write(15..<20)
        #expect(try inspector.snapshotSequences() == [20], "the older snapshot is dropped")
        #expect(try inspector.snapshotChunkSequences() == [20], "and so are its chunks")
        #expect(try inspector.logSequences() == [])

        try await write(20..<23)
        #expect(try inspector.logSequences() == [21, 22, 23])
        // The engine's own view of the files agrees.
        let newest = try #require(try WriteLog(folder: fixture.folder).newestSnapshot())
        #expect(newest.sequence == 20)
        #expect(try WriteLog(folder: fixture.folder).recordCount(after: 0) == 3)

        let expected = database!.current.state.root
        #expect(expected.children?.count == 1 && expected.child(ChildKey("items")).childCount == 23)
        database = nil
        let reopened = try fixture.open()
        #expect(reopened.current.state.root == expected)
        #expect(reopened.current.sequence == 23)
        #expect(reopened.value(at: try path("/items/i4/.priority")) == .double(96))
        #expect(reopened.value(at: try path("/items/i22/.priority")) == .double(78))
    }

    @Test func snapshotsDuringConcurrentWritesLoseNothing() async throws {
        let fixture = try StoreFixture(snapshotAfterWrites: 25)
        defer { fixture.remove() }
        let inspector = SQLiteInspector(folder: fixture.folder)
        var database: Database? = try fixture.open()
        let writer = database!
        let count = 400
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    try await writer.write(set("/w/k\(index)", #"{"v":\#(index),".priority":"p\#(index)"}"#))
                }
            }
            try await group.waitForAll()
        }
        writer.settle()
        let snapshot = try #require(try inspector.snapshotSequences().last)
        #expect(snapshot >= 25)
        #expect(try inspector.snapshotSequences().count == 1)
        let log = try inspector.logSequences()
        #expect(log == (snapshot < Int64(count) ? Array((snapshot + 1)...Int64(count)) : []))
        let expected = writer.current.state.root
        #expect(expected.child(ChildKey("w")).childCount == count)
        database = nil
        let reopened = try fixture.open()
        #expect(reopened.current.state.root == expected)
        #expect(reopened.current.sequence == Int64(count))
    }

    @Test func closeWritesAFinalSnapshotOnlyWhenNeeded() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let inspector = SQLiteInspector(folder: fixture.folder)
        do {
            let database = try fixture.open()
            try await database.write(set("/a", "1"))
            try await database.write(set("/b", #"{"c":true}"#))
            database.close()
        }
        #expect(try inspector.snapshotSequences() == [2])
        #expect(try inspector.logSequences() == [])
        do {
            // Nothing written: close leaves the existing snapshot alone.
            let database = try fixture.open()
            #expect(database.current.state.root == (try node(#"{"a":1,"b":{"c":true}}"#)))
            database.close()
        }
        #expect(try inspector.snapshotSequences() == [2])
    }

    @Test func snapshotOfAnEmptyDatabaseRestoresEmpty() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        do {
            let database = try fixture.open()
            try await database.write(set("/a", "1"))
            try await database.write(set("/a", "null"))
            database.close()
        }
        let reopened = try fixture.open()
        #expect(reopened.current.state.root.isNull)
        #expect(reopened.current.sequence == 2)
    }

    @Test func trickyValuesRoundTripThroughSnapshotAndLog() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let values = #"""
            {"text":"quote \" backslash \\ newline \n tab \t nul-ish \u0001 emoji 😀 é",
             "numbers":{"int":9007199254740993,"neg":-9223372036854775808,"max":9223372036854775807,
                        "frac":0.1,"tiny":1e-300,"huge":1e300,"negfrac":-2.5},
             "bools":[true,false],
             "日本":{"キー":"値"},
             "7":"seven","007":"double-oh","-3":"minus","a":{".priority":-1.25,"x":1}}
            """#
        let expected = try node(values)
        do {
            let database = try fixture.open()
            try await database.write(set("/", values))
            database.close()  // snapshot path
        }
        #expect(try fixture.open().current.state.root == expected)
        do {
            let database = try fixture.open()
            try await database.write(set("/copy", values))
            // no close: log path
        }
        let reopened = try fixture.open()
        #expect(reopened.value(at: try path("/copy")) == expected)
        #expect(reopened.value(at: try path("/copy/numbers/int")) == .int(9_007_199_254_740_993))
        #expect(reopened.value(at: try path("/copy/numbers/frac")) == .double(0.1))
    }
}
