import Foundation
import HearthClient
import HearthTesting
import Testing

/// The getting-started article's code (HearthClient.docc), section by section, against a real
/// in-process server, through the public API only.
@Suite("The client's getting-started article")
struct ClientGettingStartedTests {
    struct Post: Codable, Sendable {
        var title: String
        var stars: Int
    }

    @Test func connectWithAUserAndRead() async throws {
        try await TestServer.with { (server: TestServer) async throws in
            // Connect
            let auth = Auth(url: server.baseURL)
            _ = try await auth.createUser(email: "ann@example.com", password: "secret-pw")
            await auth.signOut()
            _ = try await auth.signIn(email: "ann@example.com", password: "secret-pw")
            let database = Database(url: server.baseURL, auth: auth)
            try await database.root.child("posts/p1").setValue(["title": "Hello", "stars": 2]).acknowledged()

            // Read
            let snapshot = try await database.root.child("posts/p1").getData()
            #expect(snapshot.exists)
            let post = try snapshot.value(as: Post.self)
            #expect(post.title == "Hello")
            #expect(snapshot.childSnapshot(forPath: "stars").number == 2)
        }
    }

    @Test func listenWriteAndRunTransactions() async throws {
        try await TestServer.with { (server: TestServer) async throws in
            let database = Database(url: server.baseURL)

            // Listen
            let latest = database.root.child("posts").queryOrdered(byChild: "stars").queryLimited(toLast: 20)
            var events = latest.observe([.childAdded, .childRemoved]).makeAsyncIterator()

            // Write
            let post = database.root.child("posts").childByAutoId()
            let key = post.key!
            try await database.root.updateChildValues([
                "posts/\(key)": ["title": "Hello", "stars": 0, "at": .serverTimestamp],
                "user-posts/ann/\(key)": true,
                "stats/posts": .increment(1),
            ]).acknowledged()
            let added = try #require(try await events.next())
            #expect(added.type == .childAdded)
            #expect(added.snapshot.key == key)
            #expect(try await database.root.child("stats/posts").getData().number == 1)

            // Run transactions
            let (committed, snapshot) = try await database.root.child("posts/\(key)/stars").runTransaction { current in
                .success(DatabaseValue(Int(current.number ?? 0) + 1))
            }
            #expect(committed)
            #expect(snapshot.number == 1)
            let (changed, value) = try await database.root.child("posts/\(key)").runTransaction(Post.self) { post in
                guard post != nil else { return false }
                post!.stars += 1
                return true
            }
            #expect(changed)
            #expect(value?.stars == 2)
        }
    }

    @Test func workOffline() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("client-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await TestServer.with { (server: TestServer) async throws in
            let cache = folder.appendingPathComponent("hearth.sqlite")
            let database = Database(url: server.baseURL, cacheURL: cache)
            database.root.child("feed/ann").keepSynced(true)

            // Presence: written by the server when this client disconnects.
            let presence = database.root.child("status/ann")
            try await presence.onDisconnect().setValue(["online": false, "at": .serverTimestamp])
            try await presence.setValue(["online": true]).acknowledged()

            // Offline, a write waits and the status says so; back online, it is sent.
            database.goOffline()
            let write = database.root.child("feed/ann/n1").setValue(DatabaseValue("hi"))
            #expect(database.syncStatus.pendingWriteCount == 1)
            #expect(database.syncStatus.hasPendingWrites(at: "feed/ann"))
            database.goOnline()
            try await write.acknowledged()
            #expect(database.syncStatus.pendingWriteCount == 0)

            // The onDisconnect write happened when the connection dropped (the server runs it
            // as it notices the socket closed: wait for it, within a limit).
            let observer = Database(url: server.baseURL)
            let deadline = ContinuousClock.now + .seconds(10)
            var online = try await observer.root.child("status/ann/online").getData().bool
            while online != false, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                online = try await observer.root.child("status/ann/online").getData().bool
            }
            #expect(online == false)
        }
    }
}
