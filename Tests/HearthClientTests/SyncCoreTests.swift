import Foundation
import HearthCore
import Testing

@testable import HearthClient

/// The sync core alone, driven by hand-written server messages: no socket, no clock, no
/// tasks. Each test gives the core local calls and the server's answers and checks the
/// messages it asks to send and the events it raises.
@Suite("Sync core")
struct SyncCoreTests {
    // MARK: - Listens

    @Test func aListenIsSentOnceReadyAndItsDataRaisesEvents() throws {
        // Given a core that is not connected yet, with a listener on /items
        var core = SyncCore()
        let (listener, first) = core.addListener(path: Self.path("items"), query: nil, types: [.childAdded, .value], cached: nil)
        #expect(first.sent.isEmpty)
        #expect(first.events.isEmpty)

        // When the connection opens and authenticates
        let restored = Self.connect(&core)

        // Then the listen goes out with an empty hash, and the server's data raises the events
        let listen = try #require(restored.sent.first)
        #expect(listen.action == "q")
        #expect(listen.body["p"] as? String == "/items")
        #expect(listen.body["h"] as? String == "")
        var actions = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/items","d":{"a":1,"b":2}}}}"#), now: 0)
        actions += core.receive(try Self.message(#"{"t":"d","d":{"r":\#(listen.id),"b":{"s":"ok","d":""}}}"#), now: 0)
        #expect(actions.events.map(\.summary) == ["\(listener) childAdded items/a", "\(listener) childAdded items/b", "\(listener) value items"])
    }

    @Test func equalQueriesShareOneListenAndAQueryGetsATag() throws {
        var core = SyncCore()
        Self.connect(&core)
        let query = Query(order: .key, limit: .last(2))
        let (_, first) = core.addListener(path: Self.path("items"), query: query, types: [.value], cached: nil)
        let (_, second) = core.addListener(path: Self.path("items"), query: query, types: [.childAdded], cached: nil)
        let listen = try #require(first.sent.first)
        #expect(second.sent.isEmpty)
        #expect((listen.body["t"] as? NSNumber)?.intValue == 1)
        let wireQuery = try #require(listen.body["q"] as? [String: Any])
        #expect(wireQuery["i"] as? String == ".key")
        #expect((wireQuery["l"] as? NSNumber)?.intValue == 2)
        #expect(wireQuery["vf"] as? String == "r")

        // Data tagged for the query reaches both its registrations; a tag no longer listened is dropped.
        let tagged = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/items","d":{"x":1,"y":2},"t":1}}}"#), now: 0)
        #expect(tagged.events.map(\.summary) == ["2 childAdded items/x", "2 childAdded items/y", "1 value items"])
        let stray = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/items","d":{"z":1},"t":9}}}"#), now: 0)
        #expect(stray.isEmpty)
    }

    @Test func removingTheLastListenerUnlistens() throws {
        var core = SyncCore()
        Self.connect(&core)
        let (id, _) = core.addListener(path: Self.path("items"), query: nil, types: [.value], cached: nil)
        let actions = core.removeListener(id)
        let unlisten = try #require(actions.sent.first)
        #expect(unlisten.action == "n")
        #expect(unlisten.body["p"] as? String == "/items")
    }

    @Test func aRevokedListenCancelsItsListeners() throws {
        var core = SyncCore()
        Self.connect(&core)
        let (id, added) = core.addListener(path: Self.path("secret"), query: nil, types: [.value], cached: nil)
        let listen = try #require(added.sent.first)
        let actions = core.receive(
            try Self.message(#"{"t":"d","d":{"r":\#(listen.id),"b":{"s":"permission_denied","d":"Permission denied"}}}"#), now: 0)
        guard case .cancel(let registrations, let error)? = actions.last else { Issue.record("no cancel: \(actions)"); return }
        #expect(registrations == [id])
        #expect(error.kind == .permissionDenied)
    }

    // MARK: - Writes

    @Test func writesMadeOfflineShowAtOnceAndGoInOrderWhenReady() throws {
        // Given a listener on /items with no connection
        var core = SyncCore()
        let (listener, _) = core.addListener(path: Self.path("items"), query: nil, types: [.childAdded], cached: nil)

        // When two writes are made offline
        let (first, shown) = core.write(Self.path("items/a"), .set(.int(1)), now: 0)
        let (second, _) = core.write(Self.path("items/b"), .set(.int(2)), now: 0)

        // Then the first shows at once, nothing is sent, and both go after the listen once ready
        #expect(shown.events.map(\.summary) == ["\(listener) childAdded items/a"])
        #expect(shown.sent.isEmpty)
        #expect(try first.get() == 1)
        #expect(try second.get() == 2)
        let restored = Self.connect(&core)
        #expect(restored.sent.map(\.action) == ["q", "p", "p"])
        #expect(restored.sent.map { $0.body["p"] as? String } == ["/items", "/items/a", "/items/b"])
        #expect(core.status.pendingWriteCount == 2)
    }

    @Test func aRefusedWriteIsTakenBackBeforeItsAnswer() throws {
        var core = SyncCore()
        Self.connect(&core)
        let (listener, listening) = core.addListener(path: Self.path("items"), query: nil, types: [.childAdded, .childRemoved], cached: nil)
        let listen = try #require(listening.sent.first)
        _ = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(listen.id),"b":{"s":"ok","d":""}}}"#), now: 0)
        let (written, actions) = core.write(Self.path("items/a"), .set(.int(1)), now: 0)
        let write = try #require(actions.sent.first)
        let answer = core.receive(
            try Self.message(#"{"t":"d","d":{"r":\#(write.id),"b":{"s":"permission_denied","d":"Permission denied"}}}"#), now: 0)
        #expect(answer.events.map(\.summary) == ["\(listener) childRemoved items/a"])
        guard case .completeWrite(let id, .failure(let error))? = answer.last else { Issue.record("no answer: \(answer)"); return }
        #expect(id == (try written.get()))
        #expect(error.kind == .permissionDenied)
    }

    @Test func serverValuesShowWithTheEstimatedServerTime() throws {
        var core = SyncCore()
        let opened = core.connecting()
        #expect(opened)
        // The server's clock is 500 ms ahead of the device's.
        _ = core.receive(.handshake(timestamp: 10_500, sessionID: "s"), now: 10_000)
        #expect(core.serverTimeOffset == 500)
        _ = core.write(Self.path("stamp"), .set(.object([(ChildKey(".sv"), .string("timestamp"))])), now: 20_000)
        #expect(core.visible(at: Self.path("stamp")).node == .int(20_500))
    }

    @Test func aWriteToTheCacheIsSavedAndRemovedWhenAnswered() throws {
        var core = SyncCore(hasCache: true)
        Self.connect(&core)
        let (_, actions) = core.write(Self.path("a"), .set(.int(1)), now: 0)
        #expect(actions.contains { if case .saveWrite = $0 { true } else { false } })
        let write = try #require(actions.sent.first)
        let answer = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(write.id),"b":{"s":"ok","d":""}}}"#), now: 0)
        #expect(answer.contains { if case .removeSavedWrite(1) = $0 { true } else { false } })
    }

    @Test func savedWritesComeBackShownAndAreSentFirst() throws {
        let saved = LocalCache.SavedWrite(id: 7, path: Self.path("a"), change: .set(.int(1)), local: .set(.int(1)))
        var core = SyncCore(savedWrites: [saved], hasCache: true)
        #expect(core.visible(at: Self.path("a")).node == .int(1))
        let (next, _) = core.write(Self.path("b"), .set(.int(2)), now: 0)
        #expect(try next.get() == 8)
        let restored = Self.connect(&core)
        #expect(restored.sent.map { $0.body["p"] as? String } == ["/a", "/b"])
    }

    // MARK: - Reads

    @Test func aReadWaitsForTheConnectionThenAsksTheCache() throws {
        var core = SyncCore()
        _ = core.connecting()
        let (start, actions) = core.get(path: Self.path("a"), query: nil, cacheHasCopy: false)
        guard case .sent(let id) = start else { Issue.record("not sent: \(start)"); return }
        guard case .arm(.getTimeout(id), _)? = actions.first else { Issue.record("no timer: \(actions)"); return }
        let fired = core.timerFired(.getTimeout(id))
        guard case .answerGetFromCache(id, _)? = fired.first else { Issue.record("\(fired)"); return }
        // Fired twice (or after the answer): nothing more.
        let again = core.timerFired(.getTimeout(id))
        #expect(again.isEmpty)
    }

    @Test func aReadAnsweredByTheServerIsKeptForTheCache() throws {
        var core = SyncCore(hasCache: true)
        Self.connect(&core)
        let (start, actions) = core.get(path: Self.path("a"), query: nil, cacheHasCopy: false)
        guard case .sent(let id) = start else { Issue.record("not sent: \(start)"); return }
        #expect(actions.sent.first?.action == "g")
        let answer = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(id),"b":{"s":"ok","d":{"x":1}}}}"#), now: 0)
        guard case .completeGet(id, .success(let node))? = answer.last else { Issue.record("no answer: \(answer)"); return }
        #expect(node == .object([(ChildKey("x"), .int(1))]))
        #expect(answer.contains { if case .arm(.cacheFlush, _) = $0 { true } else { false } })
        guard case .saveCache(let batch)? = core.timerFired(.cacheFlush).first else { Issue.record("no batch"); return }
        #expect(batch.count == 2)
    }

    @Test func aReadOfAListenedLocationIsAnsweredLocally() throws {
        var core = SyncCore()
        Self.connect(&core)
        let (_, listening) = core.addListener(path: Self.path("a"), query: nil, types: [.value], cached: nil)
        let listen = try #require(listening.sent.first)
        _ = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/a","d":5}}}"#), now: 0)
        _ = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(listen.id),"b":{"s":"ok","d":""}}}"#), now: 0)
        guard case (.answered(let node), let actions) = core.get(path: Self.path("a"), query: nil, cacheHasCopy: false) else {
            Issue.record("not answered locally")
            return
        }
        #expect(node == .int(5))
        #expect(actions.isEmpty)
    }

    // MARK: - Transactions

    @Test func aTransactionRunsAgainOnDataStaleAndCommits() throws {
        // Given a transaction started offline (it runs at once on what is known: nothing)
        var core = SyncCore()
        let (id, started) = core.startTransaction(at: Self.path("counter"), applyLocally: true, cached: nil)
        #expect(started.last.isRunTransaction(id))
        let input = try #require(core.transactionInput(id))
        #expect(input == .null)
        _ = core.transactionRan(id, input: input, output: .int(1), now: 0)
        #expect(core.visible(at: Self.path("counter")).node == .int(1))

        // When connected, its write goes with the hash of what it saw
        let restored = Self.connect(&core)
        let put = try #require(restored.sent.first { $0.action == "p" })
        #expect(put.body["h"] as? String == Node.null.hash)

        // and the server says another value came first (and sends it): it runs again on it
        let listen = try #require(restored.sent.first { $0.action == "q" })
        _ = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/counter","d":41}}}"#), now: 0)
        _ = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(listen.id),"b":{"s":"ok","d":""}}}"#), now: 0)
        let stale = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(put.id),"b":{"s":"datastale","d":"stale"}}}"#), now: 0)
        #expect(stale.last.isRunTransaction(id))
        let second = try #require(core.transactionInput(id))
        #expect(second == .int(41))
        let rerun = core.transactionRan(id, input: second, output: .int(42), now: 0)
        let retry = try #require(rerun.sent.first)
        #expect(retry.body["h"] as? String == Node.int(41).hash)

        // Then the server's new value and ok commit it, with the value after
        _ = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/counter","d":42}}}"#), now: 0)
        let ok = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(retry.id),"b":{"s":"ok","d":""}}}"#), now: 0)
        guard case .completeTransaction(id, .success(let outcome))? = ok.last else { Issue.record("not completed: \(ok)"); return }
        #expect(outcome.committed)
        #expect(outcome.value == .int(42))
        #expect(ok.sent.map(\.action) == ["n"])
    }

    @Test func aConnectedTransactionWaitsForTheValue() throws {
        var core = SyncCore()
        Self.connect(&core)
        let (id, started) = core.startTransaction(at: Self.path("counter"), applyLocally: true, cached: nil)
        guard case .arm(.transactionStart(id), _)? = started.last else { Issue.record("no timer: \(started)"); return }
        #expect(started.sent.first?.action == "q")
        let value = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/counter","d":3}}}"#), now: 0)
        // The transaction's own listen raises no event for listeners, only the run.
        #expect(value.events.isEmpty)
        #expect(value.last.isRunTransaction(id))
        #expect(core.transactionInput(id) == .int(3))
        let late = core.timerFired(.transactionStart(id))
        #expect(late.isEmpty)
    }

    @Test func anAbortedTransactionEndsWithTheValueItSaw() throws {
        var core = SyncCore()
        let (id, _) = core.startTransaction(at: Self.path("x"), applyLocally: true, cached: nil)
        let actions = core.transactionRan(id, input: .null, output: nil, now: 0)
        guard case .completeTransaction(id, .success(let outcome))? = actions.last else { Issue.record("\(actions)"); return }
        #expect(!outcome.committed)
        #expect(core.transactionInput(id) == nil)
    }

    // MARK: - The connection

    @Test func aClosedConnectionFailsItsRequestsAndRestoresListensAndWrites() throws {
        var core = SyncCore()
        Self.connect(&core)
        _ = core.addListener(path: Self.path("items"), query: nil, types: [.value], cached: nil)
        let (callback, _) = core.request("o", body: #"{"p":"/x","d":1}"#)
        _ = core.write(Self.path("items/a"), .set(.int(1)), now: 0)
        let (opened, closed) = core.disconnected()
        #expect(opened)
        #expect(!core.isReady)
        guard case .completeRequest(callback, .failure)? = closed.last else { Issue.record("\(closed)"); return }
        let restored = Self.connect(&core)
        #expect(restored.sent.map(\.action) == ["q", "p"])
    }

    @Test func aNewCredentialIsSentBeforeAnythingElse() throws {
        var core = SyncCore()
        Self.connect(&core, credential: "token-1")
        let paused = core.credentialChanged()
        #expect(!core.isReady)
        guard case .authenticate(false, true)? = paused.last else { Issue.record("\(paused)"); return }
        _ = core.write(Self.path("a"), .set(.int(1)), now: 0)
        let resumed = core.authenticate(credential: "token-2", restoring: true)
        #expect(resumed.sent.map(\.action) == ["auth", "p"])
        #expect(resumed.sent.first?.body["cred"] as? String == "token-2")
    }

    @Test func goingOfflineClosesTheSocketAndKeepsItClosed() {
        var core = SyncCore()
        let closing = core.setOnline(false)
        guard case .closeConnection? = closing.first else { Issue.record("\(closing)"); return }
        let openedOffline = core.connecting()
        #expect(!openedOffline)
        _ = core.setOnline(true)
        let openedOnline = core.connecting()
        #expect(openedOnline)
    }

    @Test func theServerEndingAListenOrTheCredentialIsHandled() throws {
        var core = SyncCore()
        Self.connect(&core)
        let (id, _) = core.addListener(path: Self.path("secret"), query: nil, types: [.value], cached: nil)
        // `c`: the rules no longer allow the listen.
        let revoked = core.receive(try Self.message(#"{"t":"d","d":{"a":"c","b":{"p":"/secret"}}}"#), now: 0)
        guard case .cancel([id], _)? = revoked.last else { Issue.record("\(revoked)"); return }
        // `ac`: the credential expired: a fresh one is asked for.
        let expired = core.receive(try Self.message(#"{"t":"d","d":{"a":"ac","b":{"s":"expired_token","d":"expired"}}}"#), now: 0)
        guard case .authenticate(true, false)? = expired.first else { Issue.record("\(expired)"); return }
        // `r`: the server asks the client to reconnect.
        let reset = core.receive(try Self.message(#"{"t":"c","d":{"t":"r","d":"elsewhere"}}"#), now: 0)
        guard case .closeConnection? = reset.first else { Issue.record("\(reset)"); return }
    }

    // MARK: - Kept synced, onDisconnect, status

    @Test func aKeptSyncedLocationIsListenedWithoutEvents() throws {
        var core = SyncCore()
        Self.connect(&core)
        let kept = core.keepSynced(path: Self.path("feed"), query: nil, true, cached: nil)
        #expect(kept.sent.map(\.action) == ["q"])
        let again = core.keepSynced(path: Self.path("feed"), query: nil, true, cached: nil)
        #expect(again.isEmpty)
        let data = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/feed","d":{"a":1}}}}"#), now: 0)
        #expect(data.events.isEmpty)
        let stopped = core.keepSynced(path: Self.path("feed"), query: nil, false, cached: nil)
        #expect(stopped.sent.map(\.action) == ["n"])
    }

    @Test func onDisconnectRequestsWaitForTheConnection() throws {
        var core = SyncCore()
        let (callback, queued) = core.request("o", body: #"{"p":"/status/ann","d":"offline"}"#)
        #expect(queued.isEmpty)
        let restored = Self.connect(&core)
        let sent = try #require(restored.sent.first)
        #expect(sent.action == "o")
        let answer = core.receive(try Self.message(#"{"t":"d","d":{"r":\#(sent.id),"b":{"s":"ok","d":""}}}"#), now: 0)
        guard case .completeRequest(callback, .success)? = answer.last else { Issue.record("\(answer)"); return }
    }

    @Test func theStatusIsPublishedOnlyWhileObservedAndWhenItChanges() throws {
        var core = SyncCore()
        Self.connect(&core)
        let unobserved = core.write(Self.path("a"), .set(.int(1)), now: 0).1
        #expect(!unobserved.contains { if case .status = $0 { true } else { false } })
        let now = core.observeStatus()
        #expect(now == SyncStatus(isConnected: true, pendingWriteCount: 1, pendingWritePaths: ["/a"]))
        let (_, second) = core.write(Self.path("b"), .set(.int(2)), now: 0)
        guard case .status(let status)? = second.last else { Issue.record("\(second)"); return }
        #expect(status.pendingWritePaths == ["/a", "/b"])
        let (_, closed) = core.disconnected()
        #expect(closed.contains { if case .status(let status) = $0 { !status.isConnected } else { false } })
    }

    // MARK: - The device's cache

    @Test func cachedDataShowsAtOnceAndItsHashGoesWithTheListen() throws {
        var core = SyncCore(hasCache: true)
        let key = try #require(core.cacheKeyToLoad(path: Self.path("items"), query: nil))
        #expect(key.isDefault)
        let cached = Node.object([(ChildKey("a"), .int(1))])
        let (listener, shown) = core.addListener(path: Self.path("items"), query: nil, types: [.value], cached: cached)
        #expect(shown.events.map(\.summary) == ["\(listener) value items"])
        // The view exists now: the cache is not asked again.
        #expect(core.cacheKeyToLoad(path: Self.path("items"), query: nil) == nil)
        let restored = Self.connect(&core)
        #expect(restored.sent.first?.body["h"] as? String == cached.hash)
    }

    @Test func serverDataIsQueuedForTheCacheInBatches() throws {
        var core = SyncCore(hasCache: true)
        Self.connect(&core)
        _ = core.addListener(path: Self.path("items"), query: nil, types: [.value], cached: nil)
        let first = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/items/a","d":1}}}"#), now: 0)
        let second = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/items/b","d":2}}}"#), now: 0)
        // One timer for the batch, however many updates it holds.
        #expect(first.contains { if case .arm(.cacheFlush, _) = $0 { true } else { false } })
        #expect(!second.contains { if case .arm = $0 { true } else { false } })
        guard case .saveCache(let batch)? = core.timerFired(.cacheFlush).first else { Issue.record("no batch"); return }
        #expect(batch.count == 2)
        // What stopping leaves is saved too.
        _ = core.receive(try Self.message(#"{"t":"d","d":{"a":"d","b":{"p":"/items/c","d":3}}}"#), now: 0)
        let stopped = core.stop()
        #expect(stopped.contains { if case .saveCache(let batch) = $0 { batch.count == 1 } else { false } })
    }

    // MARK: - Purity

    @Test func theSameInputsGiveTheSameActions() throws {
        func run() throws -> [String] {
            var core = SyncCore()
            var log: [String] = []
            _ = core.addListener(path: Self.path("b"), query: nil, types: [.value], cached: nil)
            _ = core.addListener(path: Self.path("a"), query: Query(order: .key, limit: .first(1)), types: [.value], cached: nil)
            _ = core.addListener(path: Self.path("a"), query: Query(order: .value, limit: .first(1)), types: [.value], cached: nil)
            _ = core.write(Self.path("c"), .set(.object([(ChildKey(".sv"), .string("timestamp"))])), now: 5)
            log += Self.connect(&core).texts
            log += core.disconnected().actions.map { "\($0)" }
            log += Self.connect(&core).texts
            return log
        }
        #expect(try run() == run())
    }

    // MARK: - Helpers

    static func path(_ text: String) -> Path { Path(keys: Path.keys(splitting: text)) }

    static func message(_ text: String) throws -> RealtimeMessage { try RealtimeMessage.parse(text) }

    /// Opens, handshakes and authenticates `core`; returns what restoring it sent.
    @discardableResult
    static func connect(_ core: inout SyncCore, credential: String? = nil) -> [SyncAction] {
        let opened = core.connecting()
        #expect(opened)
        var actions = core.receive(.handshake(timestamp: 0, sessionID: "session"), now: 0)
        actions += core.authenticate(credential: credential, restoring: true)
        return actions
    }
}

/// One message the core asked to send, read back.
struct SentRequest {
    let id: Int64
    let action: String
    let body: [String: Any]

    init?(_ text: String) {
        guard let envelope = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let data = envelope["d"] as? [String: Any], let id = (data["r"] as? NSNumber)?.int64Value,
            let action = data["a"] as? String
        else { return nil }
        self.id = id
        self.action = action
        self.body = data["b"] as? [String: Any] ?? [:]
    }
}

extension [SyncAction] {
    var sent: [SentRequest] {
        compactMap { action -> SentRequest? in
            guard case .send(let text) = action else { return nil }
            return SentRequest(text)
        }
    }

    /// The messages sent, as text.
    var texts: [String] {
        compactMap { action -> String? in
            guard case .send(let text) = action else { return nil }
            return text
        }
    }

    var events: [ViewEvent] {
        flatMap { action -> [ViewEvent] in
            guard case .deliver(let events) = action else { return [] }
            return events
        }
    }
}

extension SyncAction? {
    func isRunTransaction(_ id: Int) -> Bool {
        guard case .runTransaction(id)? = self else { return false }
        return true
    }
}

extension ViewEvent {
    /// `registration type path`, for comparing sequences at a glance.
    var summary: String { "\(registration) \(type) \(path.keys.map(\.string).joined(separator: "/"))" }
}
