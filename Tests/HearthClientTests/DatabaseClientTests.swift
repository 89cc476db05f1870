import Foundation
import HearthClient
import HearthServer
import HearthTesting
import Testing

/// The Swift SDK against a real in-process server: references, writes, reads, queries,
/// listeners as async sequences, transactions and errors.
@Suite("HearthClient database")
struct DatabaseClientTests {
    struct Post: Codable, Equatable, Sendable {
        var title: String
        var body: String
        var stars: Int
    }

    static func withDatabase(_ body: (Database, TestServer) async throws -> Void) async throws {
        try await TestServer.with { (server: TestServer) async throws in
            let database = Database(url: server.baseURL)
            try await body(database, server)
        }
    }

    /// The next event of `events`, failing after a few seconds.
    static func next(
        _ iterator: inout AsyncThrowingStream<DataEvent, any Error>.Iterator, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> DataEvent {
        let event = try await iterator.next()
        return try #require(event, "the stream ended", sourceLocation: sourceLocation)
    }

    // MARK: - References and writes

    @Test func referencesNavigate() async throws {
        try await Self.withDatabase { database, _ in
            let ref = database.root.child("posts/p1").child("author")
            #expect(ref.key == "author")
            #expect(ref.pathString == "posts/p1/author")
            #expect(ref.parent?.key == "p1")
            #expect(ref.root.key == nil)
            #expect(database.reference(withPath: "posts/p1/author") == ref)
            let first = database.root.child("posts").childByAutoId()
            let second = database.root.child("posts").childByAutoId()
            #expect(first.key!.count == 20)
            #expect(first.key! < second.key!)
        }
    }

    @Test func codableValuesRoundTrip() async throws {
        try await Self.withDatabase { database, _ in
            let ref = database.root.child("posts/p1")
            try await ref.setValue(Post(title: "Hello", body: "First", stars: 2)).acknowledged()
            let snapshot = try await ref.getData()
            #expect(snapshot.exists)
            #expect(snapshot.key == "p1")
            #expect(try snapshot.value(as: Post.self) == Post(title: "Hello", body: "First", stars: 2))
            #expect(snapshot.childSnapshot(forPath: "title").string == "Hello")
            #expect(snapshot.childSnapshot(forPath: "stars").number == 2)
            #expect(snapshot.childrenCount == 3)
            try await ref.removeValue().acknowledged()
            #expect(try await ref.getData().exists == false)
            #expect(throws: DecodingError.self) { try snapshot.childSnapshot(forPath: "title").value(as: Int.self) }
        }
    }

    @Test func multiPathUpdatesAreAtomic() async throws {
        try await Self.withDatabase { database, _ in
            let key = database.root.child("posts").childByAutoId().key!
            let post: DatabaseValue = ["title": "Hi", "uid": "alice", "stars": 0]
            try await database.root.updateChildValues(["posts/\(key)": post, "user-posts/alice/\(key)": post, "stats/posts": .increment(1)]).acknowledged()
            #expect(try await database.root.child("user-posts/alice/\(key)/title").getData().string == "Hi")
            #expect(try await database.root.child("stats/posts").getData().number == 1)
            try await database.root.updateChildValues(["posts/\(key)": nil, "user-posts/alice/\(key)": .null]).acknowledged()
            #expect(try await database.root.child("posts").getData().exists == false)
            // Server values: the server's clock.
            try await database.root.child("stamp").setValue(.serverTimestamp).acknowledged()
            let stamp = try #require(try await database.root.child("stamp").getData().number)
            #expect(abs(stamp - Date().timeIntervalSince1970 * 1000) < 60_000)
        }
    }

    // MARK: - Queries

    /// "/" followed by a combining mark is one Swift `Character`; split at characters, the "/"
    /// stayed inside a key and the write went to the wrong place (the server splits at the scalar).
    @Test func aSlashBeforeACombiningMarkStillSeparatesKeys() async throws {
        try await Self.withDatabase { database, _ in
            let ref = database.root.child("marks/\u{301}x")
            #expect(ref.pathString == "marks/\u{301}x")
            #expect(ref.key == "\u{301}x")
            try await ref.setValue("set").acknowledged()
            try await database.root.updateChildValues(["marks/\u{30A}y": "updated"]).acknowledged()
            let marks = try await database.root.child("marks").getData()
            #expect(marks.childKeys.sorted() == ["\u{301}x", "\u{30A}y"].sorted())
            #expect(marks.childSnapshot(forPath: "\u{30A}y").string == "updated")
        }
    }

    @Test func queriesOrderFilterAndLimit() async throws {
        try await Self.withDatabase { database, server in
            _ = try await server.request(
                "PUT", "/.settings/rules.json", body: #"{"rules": {".read": true, ".write": true, "posts": {".indexOn": ["stars"]}}}"#,
                headers: ["Authorization": "Bearer \(TestServer.adminToken)"])
            let posts = database.root.child("posts")
            for (key, stars) in [("a", 5), ("b", 1), ("c", 9), ("d", 3), ("e", 7)] {
                try await posts.child(key).setValue(Post(title: key, body: "", stars: stars)).acknowledged()
            }
            let top = try await posts.queryOrdered(byChild: "stars").queryLimited(toLast: 3).getData()
            #expect(top.childKeys == ["a", "e", "c"])
            let middle = try await posts.queryOrdered(byChild: "stars").queryStarting(atValue: 3).queryEnding(atValue: 7).getData()
            #expect(middle.childKeys == ["d", "a", "e"])
            let exact = try await posts.queryOrdered(byChild: "stars").queryEqual(toValue: 9).getData()
            #expect(exact.childKeys == ["c"])
            let lastKeys = try await posts.queryOrderedByKey().queryLimited(toLast: 2).getData()
            #expect(lastKeys.childKeys == ["d", "e"])
            let after = try await posts.queryOrderedByKey().queryStarting(afterValue: "c").getData()
            #expect(after.childKeys == ["d", "e"])
            // Unindexed: a listener is answered (the server warns, the client filters), a one-shot
            // read is refused with Firebase's text, as Firebase's server does.
            let unindexed = posts.queryOrdered(byChild: "title").queryLimited(toFirst: 1)
            var events = unindexed.observe(.value).makeAsyncIterator()
            #expect(try await Self.next(&events).snapshot.childKeys == ["a"])
            await #expect(throws: HearthClientError.self) {
                try await posts.queryOrdered(byChild: "body").queryLimited(toFirst: 1).getData()
            }
        }
    }

    // MARK: - Listeners

    @Test func valueListenersGetTheValueAndEveryChange() async throws {
        try await Self.withDatabase { database, _ in
            let ref = database.root.child("counter")
            var events = ref.observe(.value).makeAsyncIterator()
            let initial = try await Self.next(&events)
            #expect(initial.type == .value)
            #expect(initial.snapshot.exists == false)
            try await ref.setValue(1).acknowledged()
            #expect(try await Self.next(&events).snapshot.number == 1)
            try await database.root.updateChildValues(["counter": 2, "other": "x"]).acknowledged()
            #expect(try await Self.next(&events).snapshot.number == 2)
        }
    }

    @Test func childEventsFollowAddsChangesAndRemovals() async throws {
        try await Self.withDatabase { database, _ in
            let comments = database.root.child("comments/p1")
            try await comments.child("c1").setValue(["text": "first"] as DatabaseValue).acknowledged()
            var events = comments.observe([.childAdded, .childChanged, .childRemoved]).makeAsyncIterator()
            let existing = try await Self.next(&events)
            #expect(existing.type == .childAdded)
            #expect(existing.snapshot.key == "c1")
            #expect(existing.previousSiblingKey == nil)
            try await comments.child("c2").setValue(["text": "second"] as DatabaseValue).acknowledged()
            let added = try await Self.next(&events)
            #expect(added.type == .childAdded)
            #expect(added.snapshot.key == "c2")
            #expect(added.previousSiblingKey == "c1")
            try await comments.child("c1/text").setValue("edited").acknowledged()
            let changed = try await Self.next(&events)
            #expect(changed.type == .childChanged)
            #expect(changed.snapshot.childSnapshot(forPath: "text").string == "edited")
            try await comments.child("c2").removeValue().acknowledged()
            let removed = try await Self.next(&events)
            #expect(removed.type == .childRemoved)
            #expect(removed.snapshot.key == "c2")
            #expect(removed.snapshot.childSnapshot(forPath: "text").string == "second")
        }
    }

    @Test func aLimitedQuerysWindowMoves() async throws {
        try await Self.withDatabase { database, server in
            _ = try await server.request(
                "PUT", "/.settings/rules.json", body: #"{"rules": {".read": true, ".write": true, "posts": {".indexOn": ["stars"]}}}"#,
                headers: ["Authorization": "Bearer \(TestServer.adminToken)"])
            let posts = database.root.child("posts")
            for (key, stars) in [("a", 1), ("b", 2), ("c", 3)] {
                try await posts.child(key).setValue(Post(title: key, body: "", stars: stars)).acknowledged()
            }
            let top2 = posts.queryOrdered(byChild: "stars").queryLimited(toLast: 2)
            var events = top2.observe([.childAdded, .childRemoved, .childMoved, .value]).makeAsyncIterator()
            #expect(try await Self.next(&events).snapshot.key == "b")
            #expect(try await Self.next(&events).snapshot.key == "c")
            #expect(try await Self.next(&events).type == .value)
            // "a" jumps to the top: "b" leaves the window and "a" enters it.
            try await posts.child("a/stars").setValue(10).acknowledged()
            let removed = try await Self.next(&events)
            #expect(removed.type == .childRemoved)
            #expect(removed.snapshot.key == "b")
            let added = try await Self.next(&events)
            #expect(added.type == .childAdded)
            #expect(added.snapshot.key == "a")
            #expect(added.previousSiblingKey == "c")
            let value = try await Self.next(&events)
            #expect(value.type == .value)
            #expect(value.snapshot.childKeys == ["c", "a"])
            // "c" overtakes nobody, but "a" falling below "c" is a move within the window.
            try await posts.child("a/stars").setValue(3).acknowledged()
            var sawMove = false
            for _ in 0..<2 {
                let event = try await Self.next(&events)
                if event.type == .childMoved {
                    sawMove = true
                    #expect(event.snapshot.key == "a")
                    #expect(event.previousSiblingKey == nil)
                }
            }
            #expect(sawMove)
        }
    }

    @Test func aListenerTheRulesRefuseEndsWithAnError() async throws {
        try await TestServer.with(configure: { $0.defaultRules = #"{"rules": {"open": {".read": true}}}"# }) { (server: TestServer) async throws in
            let database = Database(url: server.baseURL)
            var refused = database.root.child("secret").observe(.value).makeAsyncIterator()
            let error = await #expect(throws: HearthClientError.self) { _ = try await refused.next() }
            #expect(error?.kind == .permissionDenied)
            await #expect(throws: HearthClientError.self) { try await database.root.child("secret").setValue(1).acknowledged() }
            var allowed = database.root.child("open").observe(.value).makeAsyncIterator()
            #expect(try await Self.next(&allowed).snapshot.exists == false)
        }
    }

    @Test func aListenerReconnectsByItselfAfterTheServerGoesAway() async throws {
        let first = try await TestServer.start()
        let port = first.port
        let database = Database(url: first.baseURL)
        try await database.root.child("greeting").setValue("hello").acknowledged()
        var events = database.root.child("greeting").observe(.value).makeAsyncIterator()
        #expect(try await Self.next(&events).snapshot.string == "hello")
        await first.stop()
        // A new server on the same port (with new data): the listener finds it and catches up.
        try await TestServer.with(configure: { $0.port = port }) { (second: TestServer) async throws in
            try await Database(url: second.baseURL).root.child("greeting").setValue("hello again").acknowledged()
            var latest: String?
            while latest != "hello again" {
                latest = try await Self.next(&events).snapshot.string
            }
            #expect(latest == "hello again")
        }
    }

    // MARK: - Transactions

    @Test func concurrentTransactionsLoseNoIncrement() async throws {
        try await Self.withDatabase { database, _ in
            let counter = database.root.child("counter")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        for _ in 0..<10 {
                            try await counter.runTransaction(Int.self) { value in
                                value = (value ?? 0) + 1
                                return true
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await counter.getData().number == 60)
            // An aborted transaction writes nothing.
            let (committed, value) = try await counter.runTransaction(Int.self) { _ in false }
            #expect(!committed)
            #expect(value == 60)
        }
    }
}
