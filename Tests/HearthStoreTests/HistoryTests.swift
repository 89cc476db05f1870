import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// Which snapshots history keeps (pure), and restoring a database to any moment it keeps.
@Suite("History and point-in-time restore")
struct HistoryTests {
    typealias Point = SnapshotRetention.Point
    let hour: Int64 = 3_600_000

    @Test func withoutHistoryOnlyTheNewestSnapshotStays() {
        let points = [Point(sequence: 10, createdAt: 1), Point(sequence: 20, createdAt: 2)]
        #expect(SnapshotRetention.kept(points, now: 3, history: 0) == [20])
        #expect(SnapshotRetention.kept([], now: 3, history: hour) == [])
    }

    @Test func theBaseIsTheNewestSnapshotAtOrBeforeTheWindowAndTheRestAreThinned() {
        // A window of 8 hours ending at hour 20: it starts at hour 12.
        let points = (1...20).map { Point(sequence: Int64($0) * 100, createdAt: Int64($0) * hour) }
        let kept = SnapshotRetention.kept(points, now: 20 * hour, history: 8 * hour)
        #expect(kept.first == 1200, "the snapshot of hour 12 reaches back to the window's start")
        #expect(kept.last == 2000, "the newest stays")
        // Between them, about one per quarter of the window (2 hours).
        #expect(kept == [1200, 1400, 1600, 1800, 2000])
    }

    @Test func theOldestSnapshotStaysWhileNothingReachesTheWindowsStart() {
        let points = [Point(sequence: 0, createdAt: 0), Point(sequence: 50, createdAt: 5 * hour), Point(sequence: 60, createdAt: 5 * hour + 1)]
        #expect(SnapshotRetention.kept(points, now: 6 * hour, history: 24 * hour) == [0, 60])
        // Once the window has moved past the pseudo-snapshot, the newest point before it is the base.
        #expect(SnapshotRetention.kept(points, now: 30 * hour, history: 24 * hour) == [50, 60])
    }

    @Test func aDatabaseIsRebuiltAtAnySequenceAndTimeItKeeps() async throws {
        var fixture = try StoreFixture(snapshotAfterWrites: 5)
        fixture.options.history = 24 * hour
        defer { fixture.remove() }
        let database = try fixture.open()
        var expected: [Int64: Node] = [0: .null]
        var times: [Int64: Int64] = [:]
        for index in 1...23 {
            fixture.clock.advance(by: 1000)
            let committed = try await database.write(set("/counter", "\(index)"))
            database.settle()
            expected[committed.sequence] = database.current.state.root
            times[committed.sequence] = fixture.clock.now
        }
        let history = try DatabaseHistory(folder: fixture.folder)
        let range = try #require(try history.range())
        #expect(range.earliestSequence == 0, "a day of history reaches back to the first write")
        #expect(range.latestSequence == 23)
        for (sequence, tree) in expected {
            #expect(try history.tree(at: sequence) == tree, "write \(sequence)")
        }
        // A time between two commits is the earlier commit's moment.
        #expect(try history.sequence(for: .time(times[7]! + 500)) == 7)
        #expect(try history.sequence(for: .time(times[7]!)) == 7)
        #expect(try history.sequence(for: .time(times[1]! - 1)) == 0)
        #expect(throws: StoreError.self) { try history.sequence(for: .sequence(24)) }
        let entries = try history.entries(limit: 3)
        #expect(entries.map(\.sequence) == [21, 22, 23])
        #expect(entries.last?.committedAt == times[23])
        #expect(entries.last?.path == "/counter")
    }

    @Test func historyOlderThanTheWindowIsDroppedAndSaysSo() async throws {
        var fixture = try StoreFixture(snapshotAfterWrites: 4)
        fixture.options.history = hour
        defer { fixture.remove() }
        let database = try fixture.open()
        for index in 1...8 {
            try await database.write(set("/v", "\(index)"))
            database.settle()
        }
        let early = fixture.clock.now
        fixture.clock.advance(by: 2 * hour)
        for index in 9...16 {
            try await database.write(set("/v", "\(index)"))
            database.settle()
        }
        let history = try DatabaseHistory(folder: fixture.folder)
        let range = try #require(try history.range())
        #expect(range.earliestSequence > 0, "writes more than an hour old are compacted away")
        #expect(range.earliestSequence <= 12)
        do {
            _ = try history.sequence(for: .time(early - 1))
            Issue.record("a time before the history kept was accepted")
        } catch let error as StoreError {
            #expect(error.message.contains("before the history kept"), "\(error.message)")
        }
        #expect(try history.tree(at: 14) == (try node(#"{"v":14}"#)))
    }

    @Test func restoringReplacesTheDatabaseAndKeepsTheOldOneAside() async throws {
        var fixture = try StoreFixture(snapshotAfterWrites: 3)
        fixture.options.history = hour
        defer { fixture.remove() }
        let url = fixture.directory.url.appendingPathComponent("data")
        do {
            let folder = try DataFolder(url: url, options: fixture.options, logger: quietLogger)
            let database = try folder.database(named: "app")
            try await database.setSetting(named: "rules", to: #"{"rules":{".read":true}}"#)
            for index in 1...10 { try await database.write(set("/posts/p\(index)", #""post \#(index)""#)) }
            try await database.write(set("/posts", "null"))  // the bad write, 11
            folder.close()
        }
        let data = try DataFolder(url: url, options: fixture.options, logger: quietLogger)
        let copy = try data.restoreDatabase(named: "app", to: .sequence(10), as: "app-before", now: fixture.clock.now)
        #expect(copy.previous == nil)
        let restored = try data.restoreDatabase(named: "app", to: .sequence(10), now: fixture.clock.now)
        #expect(restored.sequence == 10)
        let aside = try #require(restored.previous)
        #expect(FileManager.default.fileExists(atPath: aside.appendingPathComponent("log.sqlite").path))
        #expect(data.databaseNames() == ["app", "app-before"], "the folder moved aside is not a database")
        for name in ["app", "app-before"] {
            let database = try data.database(named: name)
            #expect(database.value(at: try path("/posts/p10")) == .string("post 10"))
            #expect(database.current.sequence == 10)
            #expect(try database.setting(named: "rules") == #"{"rules":{".read":true}}"#)
            let next = try await database.write(set("/posts/p11", #""after""#))
            #expect(next.sequence == 11, "writes go on after the restored point")
        }
        #expect(throws: StoreError.self) { try data.restoreDatabase(named: "app", to: .sequence(5), as: "app-before", now: 0) }
        #expect(throws: StoreError.self, "an open database is not replaced under its server") {
            try data.restoreDatabase(named: "app", to: .sequence(5), now: 0)
        }
    }
}
