import Foundation
import HearthCore
import HearthStore
import Synchronization
import Testing

/// What every ``HearthStore/Database`` does whichever log is behind it, written once and
/// checked against each mode: a single node's SQLite log (HearthStoreTests) and a replica of a
/// cluster's shared log in a real PostgreSQL (HearthClusterTests). Each case is given an empty
/// database whose log is running (a replica's replication task too) and may close it.
public enum DatabaseBehaviour: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case writesAreAnsweredInOrderAfterTheirEvents
    case concurrentWritesAreCommittedOnceInOneOrder
    case aRefusalIsAnsweredAfterTheWritesBeforeIt
    case aRefusedWriteChangesNothing
    case pushesCarryTheirIDsIntoTheEvents
    case aSettingIsInForceWhenItsEventIsDelivered
    case anIndexMadeWhileWritesAreQueuedStaysPublished
    case anImportIsOneBatch
    case closingRefusesLaterWrites

    public var testDescription: String { rawValue }

    /// Checks this behaviour on `database`, which must be empty.
    public func check(_ database: Database) async throws {
        switch self {
        case .writesAreAnsweredInOrderAfterTheirEvents: try await Self.writesAreAnsweredInOrderAfterTheirEvents(database)
        case .concurrentWritesAreCommittedOnceInOneOrder: try await Self.concurrentWritesAreCommittedOnceInOneOrder(database)
        case .aRefusalIsAnsweredAfterTheWritesBeforeIt: try await Self.aRefusalIsAnsweredAfterTheWritesBeforeIt(database)
        case .aRefusedWriteChangesNothing: try await Self.aRefusedWriteChangesNothing(database)
        case .pushesCarryTheirIDsIntoTheEvents: try await Self.pushesCarryTheirIDsIntoTheEvents(database)
        case .aSettingIsInForceWhenItsEventIsDelivered: try await Self.aSettingIsInForceWhenItsEventIsDelivered(database)
        case .anIndexMadeWhileWritesAreQueuedStaysPublished: try await Self.anIndexMadeWhileWritesAreQueuedStaysPublished(database)
        case .anImportIsOneBatch: try await Self.anImportIsOneBatch(database)
        case .closingRefusesLaterWrites: try await Self.closingRefusesLaterWrites(database)
        }
    }

    // MARK: - Helpers

    /// What a database's event stream delivered and its writers were told, in the order it
    /// happened: `event <seq>`, `batch <last seq>`, `push <id>`, `setting <name>=<value>`,
    /// `done <seq>`, `refused <message>`.
    final class Journal: Sendable {
        private let entries = Mutex<[String]>([])

        /// Subscribes to `database`'s events.
        init(recording database: Database) {
            let name = database.name
            database.events.subscribe { [self] source, event in
                guard source.name == name else { return }
                switch event {
                case .committed(let committed, let version):
                    for entry in committed {
                        note("event \(entry.sequence)")
                        if let pushID = entry.pushID { note("push \(pushID)") }
                    }
                    note("batch \(version.sequence)")
                case .settingChanged(let setting):
                    note("setting \(setting)=\((try? source.setting(named: setting)) ?? "nil")")
                }
            }
        }

        func note(_ entry: String) { entries.withLock { $0.append(entry) } }

        var all: [String] { entries.withLock { $0 } }

        /// Notes a write's outcome.
        func answer(_ result: Result<Database.Committed, any Error>) {
            switch result {
            case .success(let committed): note("done \(committed.sequence)")
            case .failure(let error as HearthError): note("refused \(error.message)")
            case .failure(let error): note("refused \(error)")
            }
        }

        /// Where `entry` was noted first.
        func position(of entry: String) -> Int? { all.firstIndex(of: entry) }
    }

    /// Submits `writes` back to back (each queued before the next is made), runs `then` once
    /// all are queued, and waits for every answer.
    static func submitAll(
        _ writes: [(Write, (@Sendable (DatabaseState) throws -> Void)?)], to database: Database, journal: Journal,
        then: () -> Void = {}
    ) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Mutex(writes.count)
            for (write, precondition) in writes {
                database.submit(write, precondition: precondition) { result in
                    journal.answer(result)
                    if remaining.withLock({ count in
                        count -= 1
                        return count
                    }) == 0 {
                        done.resume()
                    }
                }
            }
            then()
        }
    }

    static func path(_ text: String) throws -> Path { try Path(parsing: text) }

    static func value(_ json: String) throws -> JSONParser.Parsed { try JSONParser.parse(Array(json.utf8)) }

    static let stale = HearthError(.preconditionFailed, "stale")

    // MARK: - Cases

    /// Writes submitted back to back are answered in order, each after its commit's event.
    static func writesAreAnsweredInOrderAfterTheirEvents(_ database: Database) async throws {
        let journal = Journal(recording: database)
        let count = 40
        await submitAll(try (0..<count).map { (.set(try path("/n/k\($0)"), try value("\($0)")), nil) }, to: database, journal: journal)
        let entries = journal.all
        #expect(entries.filter { $0.hasPrefix("done ") } == (1...count).map { "done \($0)" })
        for sequence in 1...count {
            let event = try #require(entries.firstIndex(of: "event \(sequence)"))
            let done = try #require(entries.firstIndex(of: "done \(sequence)"))
            #expect(event < done, "write \(sequence) was answered before its event")
        }
        #expect(database.current.sequence == Int64(count))
        #expect(database.value(at: try path("/n")).childCount == count)
    }

    /// Writes from many tasks at once each reach the log once; the events list them in log
    /// order, batch by batch, each batch's version ending at its last write.
    static func concurrentWritesAreCommittedOnceInOneOrder(_ database: Database) async throws {
        let journal = Journal(recording: database)
        let count = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask { try await database.write(.set(try path("/w/k\(index)"), try value("\(index)"))) }
            }
            try await group.waitForAll()
        }
        let entries = journal.all
        #expect(entries.filter { $0.hasPrefix("event ") } == (1...count).map { "event \($0)" })
        // Every batch ends at the event before it.
        for (index, entry) in entries.enumerated() where entry.hasPrefix("batch ") {
            #expect(index > 0 && entries[index - 1] == "event \(entry.dropFirst("batch ".count))")
        }
        #expect(database.value(at: try path("/w")).childCount == count)
    }

    /// A write refused while others are queued before it hears so only after the write before
    /// it was committed and its event delivered; it uses up no sequence number.
    static func aRefusalIsAnsweredAfterTheWritesBeforeIt(_ database: Database) async throws {
        let journal = Journal(recording: database)
        // The first write's event is held until the others are queued, so they surely arrive
        // while it is not yet answered (however fast the disk).
        let gate = DispatchSemaphore(value: 0)
        let name = database.name
        database.events.subscribe { source, event in
            guard source.name == name, case .committed(let committed, _) = event, committed.contains(where: { $0.sequence == 1 })
            else { return }
            gate.wait()
        }
        await submitAll(
            [
                (.set(try path("/a"), try value("1")), nil),
                (.set(try path("/a"), try value("2")), { _ in throw Self.stale }),
                (.set(try path("/b"), try value("3")), nil),
            ], to: database, journal: journal, then: { gate.signal() })
        let refused = try #require(journal.position(of: "refused stale"))
        #expect(try #require(journal.position(of: "event 1")) < refused)
        #expect(try #require(journal.position(of: "done 1")) < refused)
        #expect(journal.all.filter { $0.hasPrefix("done ") } == ["done 1", "done 2"])
        #expect(database.value(at: try path("/a")) == .int(1))
        #expect(database.value(at: try path("/b")) == .int(3))
    }

    /// A write the rules refuse changes nothing: not the tree, not the sequence, no event; the
    /// next write takes the next number.
    static func aRefusedWriteChangesNothing(_ database: Database) async throws {
        try await database.write(.set(try path("/a"), try value(#""x""#)))
        let journal = Journal(recording: database)
        let before = database.current
        await #expect(throws: HearthError.self) {
            try await database.write(.set(try path("/a"), try value(#""y""#)), authorize: { _, _, _, _ in
                throw HearthError(.permissionDenied, "Permission denied")
            })
        }
        #expect(database.current.sequence == before.sequence)
        #expect(database.current.state.root == before.state.root)
        #expect(journal.all.isEmpty)
        let next = try await database.write(.set(try path("/a"), try value(#""z""#)))
        #expect(next.sequence == before.sequence + 1)
    }

    /// A push gets a new ID, under which its value is stored; the event carries the ID.
    static func pushesCarryTheirIDsIntoTheEvents(_ database: Database) async throws {
        let journal = Journal(recording: database)
        let first = try await database.push(at: try path("/posts"), value: try value(#"{"n":1}"#))
        let second = try await database.push(at: try path("/posts"), value: try value(#"{"n":2}"#))
        let firstID = try #require(first.pushID)
        let secondID = try #require(second.pushID)
        #expect(firstID.count == 20 && firstID < secondID)
        #expect(journal.all.filter { $0.hasPrefix("push ") } == ["push \(firstID)", "push \(secondID)"])
        #expect(database.value(at: try path("/posts/\(secondID)/n")) == .int(2))
    }

    /// A setting is published as an event, with its new value already the database's, before
    /// setting it returns.
    static func aSettingIsInForceWhenItsEventIsDelivered(_ database: Database) async throws {
        let journal = Journal(recording: database)
        #expect(try database.setting(named: "rules") == nil)
        try await database.setSetting(named: "rules", to: #"{"rules":{}}"#)
        #expect(journal.all.contains(#"setting rules={"rules":{}}"#))
        #expect(try database.setting(named: "rules") == #"{"rules":{}}"#)
        try await database.setSetting(named: "rules", to: #"{"rules":{".read":true}}"#)
        #expect(journal.all.last == #"setting rules={"rules":{".read":true}}"#)
        // Settings are not data: the tree is as it was.
        #expect(database.current.state.root == .null)
    }

    /// An index made while writes are queued is in the published version at once and stays in
    /// every version after, kept up to date by the writes checked before it was made.
    static func anIndexMadeWhileWritesAreQueuedStaysPublished(_ database: Database) async throws {
        let journal = Journal(recording: database)
        let items = try path("/items")
        let order = Query.Order.child(try path("/n"))
        let count = 300
        let writes: [(Write, (@Sendable (DatabaseState) throws -> Void)?)] = try (0..<count).map {
            (.set(items.child(ChildKey("i\($0)")), try value(#"{"n":\#($0)}"#)), nil)
        }
        await submitAll(writes, to: database, journal: journal) {
            database.ensureIndex(at: items, order: order)
            #expect(database.current.state.index(at: items, order: order) != nil)
        }
        let state = database.current.state
        #expect(state.index(at: items, order: order)?.count == count)
        let top = database.run(Query(order: order, limit: .last(3)), at: items, index: false)
        #expect(top.map(\.key.string) == ["i297", "i298", "i299"])
    }

    /// An import logged as several records is committed as one batch, and answered once.
    static func anImportIsOneBatch(_ database: Database) async throws {
        let journal = Journal(recording: database)
        let filler = String(repeating: "x", count: 100)
        let json = "{" + (0..<50).map { #""c\#($0)":"\#(filler)""# }.joined(separator: ",") + "}"
        let big = try value(json).node
        try await database.replace(at: try path("/big"), with: big, maxRecordBytes: 1024)
        let entries = journal.all
        let events = entries.filter { $0.hasPrefix("event ") }
        #expect(events.count > 1, "the import should be several records")
        #expect(entries.filter { $0.hasPrefix("batch ") } == ["batch \(events.count)"])
        #expect(database.value(at: try path("/big")) == big)
    }

    /// After ``HearthStore/Database/close()`` a write through a kept reference is refused as
    /// unavailable and changes nothing.
    static func closingRefusesLaterWrites(_ database: Database) async throws {
        try await database.write(.set(try path("/a"), try value("1")))
        database.close()
        do {
            try await database.write(.set(try path("/a"), try value("2")))
            Issue.record("a write after close was accepted")
        } catch let error as HearthError {
            #expect(error.code == .unavailable)
        }
        #expect(database.value(at: try path("/a")) == .int(1))
    }
}
