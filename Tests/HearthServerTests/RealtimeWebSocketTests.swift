import Foundation
import HearthEngine
import HearthServer
import HearthTesting
import Testing

/// The realtime protocol at `/.ws` (docs/protocol.md) on a real server over loopback, seen on the
/// wire by a raw WebSocket client: the handshake, ping and keep-alive, chunked frames both
/// ways, the order of pushes and responses, default and tagged listens, gets, conditional
/// puts, merges, onDisconnect, rules and their revocations, credentials, and what bad input
/// gets (the protocol's error, and no change).
@Suite("Realtime WebSocket")
struct RealtimeWebSocketTests {
    static let admin = TestServer.adminHeaders

    /// Rules for the rules and credential tests.
    static let rules = """
        {"rules": {
          "public": {".read": true, ".write": true},
          "private": {".read": "auth != null", ".write": "auth != null"},
          "users": {"$uid": {".read": "auth != null && auth.uid == $uid", ".write": "auth != null && auth.uid == $uid"}},
          "admins": {".read": "auth != null && auth.admin == true", ".write": "auth != null && auth.admin == true"},
          "doc": {".read": true, ".write": true},
          "scores": {".read": true, ".write": true, ".indexOn": "n"}
        }}
        """

    /// Open rules with an index on `scores/n` (and none on `scores/m`).
    static let indexedRules = #"{"rules": {".read": true, ".write": true, "scores": {".indexOn": "n"}}}"#

    static let scores = #"{"a": {"n": 1, "m": 3}, "b": {"n": 2, "m": 2}, "c": {"n": 3, "m": 1}}"#

    /// A fresh server with `rules` (open when nil) and `seed` at the root, written by an admin.
    static func withRealtime(
        rules: String? = nil, seed: String? = nil, _ body: (TestServer) async throws -> Void
    ) async throws {
        try await withServer(configure: { if let rules { $0.defaultRules = rules } }) { server in
            if let seed {
                let seeded = try await server.request("PUT", "/.json", body: seed, headers: admin)
                try #require(seeded.status == 200, "seeding: \(seeded.text)")
            }
            try await body(server)
        }
    }

    // MARK: - Connection

    @Test func theHandshakeComesFirstWithTimeVersionHostAndSession() async throws {
        try await withServer { server in
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let ws = try await RealtimeTestClient.connect(server)
            let handshake = try await ws.nextMessage()
            #expect(handshake.controlType == "h", "\(handshake.text)")
            let payload = try #require(handshake.controlData as? [String: Any], "\(handshake.text)")
            #expect(payload.keys.sorted() == ["h", "s", "ts", "v"])
            #expect(payload["v"] as? String == "5")
            let ts = try #require((payload["ts"] as? NSNumber)?.int64Value)
            #expect(ts >= before - 1000 && ts <= Int64(Date().timeIntervalSince1970 * 1000) + 1000, "ts \(ts)")
            #expect((payload["h"] as? String)?.hasPrefix("127.0.0.1") == true, "h \(payload["h"] ?? "none")")
            let session = try #require(payload["s"] as? String)
            #expect(!session.isEmpty)

            // Every connection is a session of its own.
            let other = try await RealtimeTestClient.connect(server)
            let second = try await other.nextMessage()
            let otherSession = (second.controlData as? [String: Any])?["s"] as? String
            #expect(otherSession != nil && otherSession != session)
            try await ws.close()
            try await other.close()
        }
    }

    @Test func aPingIsAnsweredWithAPongAndAKeepAliveIsIgnored() async throws {
        try await withServer { server in
            let ws = try await RealtimeTestClient.open(server)
            try await ws.sendFrame(#"{"t":"c","d":{"t":"p","d":{}}}"#)
            let pong = try await ws.nextMessage()
            #expect(canonicalJSON(text: pong.text) == canonicalJSON(text: #"{"t":"c","d":{"t":"o","d":{}}}"#))

            // The keep-alive gets no answer and does not end the connection: the next thing
            // after it is the pong of a later ping.
            try await ws.sendFrame("0")
            try await ws.sendFrame("0")
            #expect(try await ws.roundTrip().isEmpty)
            let put = try await ws.request("p", #"{"p":"/alive","d":true}"#)
            #expect(put.status == "ok")
            #expect(try await server.read("/alive.json") == "true")
        }
    }

    @Test func statsAreAcknowledged() async throws {
        try await withServer { server in
            let ws = try await RealtimeTestClient.open(server)
            let before = try await server.dump()
            let stats = try await ws.request("s", #"{"c":{"sdk.js.10-12-2":1}}"#)
            #expect(stats.status == "ok", "\(stats.text)")
            #expect(try await server.dump() == before)
        }
    }

    // MARK: - Framing

    @Test func aClientMessageSentInChunksIsReassembled() async throws {
        try await withServer { server in
            let ws = try await RealtimeTestClient.open(server)
            let value = String(repeating: "0123456789", count: 4_000)
            let message = RealtimeTestClient.envelope(id: 1, action: "p", body: #"{"p":"/big","d":"\#(value)"}"#)
            // 40,000 characters: a count of 3, then the chunks, with a keep-alive before them.
            let count = (message.count + 16_383) / 16_384
            #expect(count == 3)
            try await ws.sendFrame("0")
            try await ws.sendFrame(String(count))
            for start in stride(from: 0, to: message.count, by: 16_384) {
                let from = message.index(message.startIndex, offsetBy: start)
                let to = message.index(from, offsetBy: min(16_384, message.count - start))
                try await ws.sendFrame(String(message[from..<to]))
            }
            let (response, before) = try await ws.response(to: 1)
            #expect(before.isEmpty)
            #expect(response.status == "ok", "\(response.text)")
            #expect(try await server.read("/big.json") == "\"\(value)\"")

            // The same through the helper, then a message of one frame: the assembler is back
            // to whole messages.
            let second = String(repeating: "9876543210", count: 2_000)
            #expect(try await ws.request("p", #"{"p":"/big2","d":"\#(second)"}"#).status == "ok")
            #expect(try await ws.request("p", #"{"p":"/small","d":1}"#).status == "ok")
            #expect(try await server.read("/big2.json") == "\"\(second)\"")
            #expect(try await server.read("/small.json") == "1")
        }
    }

    @Test func aServerMessageOver16384CharactersArrivesAsACountAndChunks() async throws {
        // Characters outside the BMP count twice in the SDKs' lengths; chunks must not split them.
        let value = String(repeating: "ab😀é", count: 8_000)
        try await withServer { server in
            let json = String(decoding: try JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed), as: UTF8.self)
            try await server.expectOK("PUT", "/big.json", body: json)
            let ws = try await RealtimeTestClient.open(server)
            let id = try await ws.send("q", #"{"p":"/big","h":""}"#)
            let (ok, before) = try await ws.response(to: id)
            #expect(ok.status == "ok")
            let push = try #require(before.first)
            #expect(before.count == 1)
            #expect(push.frames > 2, "a push of \(push.text.utf16.count) characters came in \(push.frames) frames")
            #expect(push.action == "d" && push.path == "big")
            #expect(push.body?["d"] as? String == value)

            // A get's answer is chunked the same way.
            let get = try await ws.request("g", #"{"p":"/big"}"#)
            #expect(get.frames > 2)
            #expect(get.status == "ok")
            #expect(get.body?["d"] as? String == value)
        }
    }

    @Test func nsChoosesTheDatabaseAndAnInvalidNameShutsTheSocketDown() async throws {
        try await withServer { server in
            let other = try await RealtimeTestClient.open(server, query: "v=5&ns=other-db")
            #expect(try await other.request("p", #"{"p":"/where","d":"other"}"#).status == "ok")
            #expect(try await server.read("/where.json?ns=other-db") == #""other""#)
            #expect(try await server.read("/where.json") == "null")

            let (texts, closeFrame) = try RawWebSocketExchange.serverFrames(port: server.port, query: "v=5&ns=Not_Valid")
            // A name that can never be opened: a shutdown, so the SDK stops reconnecting.
            #expect(texts.count == 1 && texts[0].contains(#""t":"s""#), "\(texts)")
            #expect(closeFrame)
        }
    }

    // MARK: - Ordering

    @Test func aListensDataArrivesBeforeItsOK() async throws {
        try await Self.withRealtime(seed: #"{"a": {"b": 1, "c": {".priority": 2, "d": "x"}}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let id = try await ws.send("q", #"{"p":"/a","h":""}"#)
            let (ok, before) = try await ws.response(to: id)
            #expect(before.count == 1, "\(before.map(\.text))")
            let push = try #require(before.first)
            #expect(push.action == "d")
            #expect(push.path == "a")
            #expect(push.tag == nil)
            // Export format: priorities included.
            #expect(push.json == canonicalJSON(text: #"{"b": 1, "c": {".priority": 2, "d": "x"}}"#))
            #expect(ok.status == "ok")
        }
    }

    @Test func aListenWhoseHashMatchesGetsNoDataAndOneThatDiffersDoes() async throws {
        // {"foo":"bar"} hashes to XnLeTeWQmzTHImTbSMDLg/qMrKY= (docs/protocol.md §11).
        try await Self.withRealtime(seed: #"{"h": {"foo": "bar"}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let matching = try await ws.send("q", #"{"p":"/h","h":"XnLeTeWQmzTHImTbSMDLg/qMrKY="}"#)
            let (ok, before) = try await ws.response(to: matching)
            #expect(ok.status == "ok")
            #expect(before.isEmpty, "\(before.map(\.text))")

            let other = try await RealtimeTestClient.open(server)
            let stale = try await other.send("q", #"{"p":"/h","h":"aSSNoqcS4oQwJ2xxH20rvpp3zP0="}"#)
            let (staleOK, staleBefore) = try await other.response(to: stale)
            #expect(staleOK.status == "ok")
            #expect(staleBefore.map(\.json) == [canonicalJSON(text: #"{"foo": "bar"}"#)])
        }
    }

    @Test func pipelinedPutsAreAllAnsweredInOrderAndAnotherConnectionSeesThemInOrder() async throws {
        try await Self.withRealtime(seed: #"{"counter": 0}"#) { server in
            let listener = try await RealtimeTestClient.open(server)
            let listen = try await listener.request("q", #"{"p":"/counter","h":""}"#)
            #expect(listen.status == "ok")
            #expect(try await listener.nextPush().json == "0")

            let writer = try await RealtimeTestClient.open(server)
            var ids: [Int] = []
            for value in 1...50 {
                ids.append(try await writer.send("p", #"{"p":"/counter","d":\#(value)}"#))
            }
            var answered: [Int] = []
            while answered.count < ids.count {
                let message = try await writer.nextMessage()
                guard let id = message.requestID else { continue }
                #expect(message.status == "ok", "\(message.text)")
                answered.append(id)
            }
            #expect(answered == ids)

            var seen: [String] = []
            for _ in 1...50 {
                let push = try await listener.nextPush()
                #expect(push.action == "d" && push.path == "counter", "\(push.text)")
                seen.append(push.json)
            }
            #expect(seen == (1...50).map(String.init))
            #expect(try await listener.roundTrip().isEmpty)
            #expect(try await server.read("/counter.json") == "50")
        }
    }

    @Test func aReadSentBehindPipelinedWritesSeesThemAndIsAnsweredAfterThem() async throws {
        try await withServer { server in
            // Another connection listens there, so every write has events to deliver.
            let listener = try await RealtimeTestClient.open(server)
            #expect(try await listener.request("q", #"{"p":"/counter","h":""}"#).status == "ok")
            let ws = try await RealtimeTestClient.open(server)
            var ids: [Int] = []
            for value in 1...50 {
                ids.append(try await ws.send("p", #"{"p":"/counter","d":\#(value)}"#))
            }
            let stale = try await ws.send("p", #"{"p":"/counter","d":0,"h":"not the hash"}"#)
            let get = try await ws.send("g", #"{"p":"/counter"}"#)
            let listen = try await ws.send("q", #"{"p":"/counter","h":""}"#)
            var answered: [Int] = []
            while answered.count < ids.count + 3 {
                let message = try await ws.nextMessage()
                guard let id = message.requestID else { continue }
                #expect(message.status == (id == stale ? "datastale" : "ok"), "\(message.text)")
                if id == get { #expect(message.json == "50", "\(message.text)") }
                answered.append(id)
            }
            // Requests are handled in order (docs/protocol.md §6.1), so they are answered in order.
            #expect(answered == ids + [stale, get, listen])
        }
    }

    // MARK: - Listens

    @Test func aDefaultListenSeesWritesBelowAtAndAboveItUntilUnlistened() async throws {
        try await Self.withRealtime(seed: #"{"box": {"items": {"x": 0}}, "sentinel": 0}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("q", #"{"p":"/box/items","h":""}"#).status == "ok")
            #expect(try await ws.nextPush().json == canonicalJSON(text: #"{"x": 0}"#))
            #expect(try await ws.request("q", #"{"p":"/sentinel","h":""}"#).status == "ok")
            #expect(try await ws.nextPush().json == "0")

            // Below: at the absolute path written.
            try await server.expectOK("PUT", "/box/items/x.json", body: "1")
            var push = try await ws.nextPush()
            #expect(push.action == "d" && push.path == "box/items/x" && push.json == "1", "\(push.text)")
            // A merge: `m` with the relative paths.
            try await server.expectOK("PATCH", "/box/items.json", body: #"{"y": 2, "z/w": 3}"#)
            push = try await ws.nextPush()
            #expect(push.action == "m" && push.path == "box/items", "\(push.text)")
            #expect(push.json == canonicalJSON(text: #"{"y": 2, "z/w": 3}"#))
            // Above: the listen's own path with its new value.
            try await server.expectOK("PUT", "/box.json", body: #"{"items": {"only": true}, "other": 1}"#)
            push = try await ws.nextPush()
            #expect(push.action == "d" && push.path == "box/items", "\(push.text)")
            #expect(push.json == canonicalJSON(text: #"{"only": true}"#))
            try await server.expectOK("DELETE", "/box.json")
            push = try await ws.nextPush()
            #expect(push.action == "d" && push.path == "box/items" && push.json == "null", "\(push.text)")

            // After `n`, writes there are not pushed: the next push is the sentinel's.
            let unlisten = try await ws.request("n", #"{"p":"/box/items"}"#)
            #expect(unlisten.status == "ok")
            try await server.expectOK("PUT", "/box/items/x.json", body: "2")
            try await server.expectOK("PUT", "/sentinel.json", body: "1")
            push = try await ws.nextPush()
            #expect(push.path == "sentinel" && push.json == "1", "\(push.text)")
        }
    }

    @Test func aTaggedQueryFollowsItsMovingLimitWindowUntilUnlistened() async throws {
        try await Self.withRealtime(rules: Self.indexedRules, seed: #"{"scores": \#(Self.scores), "sentinel": 0}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("q", #"{"p":"/sentinel","h":""}"#).status == "ok")
            _ = try await ws.nextPush()

            let query = #"{"l":2,"vf":"r","i":"n"}"#
            let id = try await ws.send("q", #"{"p":"/scores","q":\#(query),"t":7,"h":""}"#)
            let (ok, before) = try await ws.response(to: id)
            #expect(ok.status == "ok")
            #expect(ok.json == "{}", "no warning for an indexed query: \(ok.text)")
            #expect(before.count == 1)
            let initial = try #require(before.first)
            #expect(initial.action == "d" && initial.path == "scores" && initial.tag == 7, "\(initial.text)")
            #expect(initial.json == canonicalJSON(text: #"{"b": {"n": 2, "m": 2}, "c": {"n": 3, "m": 1}}"#))

            // A new last child moves the window: the whole result again, under the tag.
            try await server.expectOK("PUT", "/scores/d.json", body: #"{"n": 4}"#)
            var push = try await ws.nextPush()
            #expect(push.path == "scores" && push.tag == 7, "\(push.text)")
            #expect(push.json == canonicalJSON(text: #"{"c": {"n": 3, "m": 1}, "d": {"n": 4}}"#))
            // A child leaving the window lets the next one in.
            try await server.expectOK("PUT", "/scores/c/n.json", body: "0")
            push = try await ws.nextPush()
            #expect(push.tag == 7)
            #expect(push.json == canonicalJSON(text: #"{"b": {"n": 2, "m": 2}, "d": {"n": 4}}"#))
            // A change outside the window sends nothing: the next push is the sentinel's.
            try await server.expectOK("PUT", "/scores/a/n.json", body: "1.5")
            try await server.expectOK("PUT", "/sentinel.json", body: "1")
            push = try await ws.nextPush()
            #expect(push.path == "sentinel" && push.json == "1", "\(push.text)")

            // Unlistened: nothing more for the tag.
            #expect(try await ws.request("n", #"{"p":"/scores","q":\#(query),"t":7}"#).status == "ok")
            try await server.expectOK("PUT", "/scores/e.json", body: #"{"n": 9}"#)
            try await server.expectOK("PUT", "/sentinel.json", body: "2")
            push = try await ws.nextPush()
            #expect(push.path == "sentinel" && push.json == "2", "\(push.text)")
        }
    }

    @Test func aQueryOnAnUnindexedChildIsServedWithTheNoIndexWarning() async throws {
        try await Self.withRealtime(rules: Self.indexedRules, seed: #"{"scores": \#(Self.scores)}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let id = try await ws.send("q", #"{"p":"/scores","q":{"l":1,"vf":"l","i":"m"},"t":3,"h":""}"#)
            let (ok, before) = try await ws.response(to: id)
            #expect(ok.status == "ok", "\(ok.text)")
            #expect(ok.json == canonicalJSON(text: #"{"w": ["no_index"]}"#))
            // The data comes first; the client filters it (it may be the whole location).
            #expect(before.count == 1)
            let push = try #require(before.first)
            #expect(push.tag == 3)
            let children = (push.body?["d"] as? [String: Any]) ?? [:]
            #expect(children["c"] != nil, "the first child by m must be there: \(push.text)")
        }
    }

    @Test func aGetReadsOnceAndAnUnindexedFilteredGetFails() async throws {
        try await Self.withRealtime(rules: Self.indexedRules, seed: #"{"scores": \#(Self.scores)}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let whole = try await ws.request("g", #"{"p":"/scores/a"}"#)
            #expect(whole.status == "ok")
            #expect(whole.json == canonicalJSON(text: #"{"n": 1, "m": 3}"#))
            let first = try await ws.request("g", #"{"p":"/scores","q":{"l":2,"vf":"l","i":"n"}}"#)
            #expect(first.status == "ok")
            #expect(first.json == canonicalJSON(text: #"{"a": {"n": 1, "m": 3}, "b": {"n": 2, "m": 2}}"#))
            let missing = try await ws.request("g", #"{"p":"/nothing"}"#)
            #expect(missing.status == "ok" && missing.json == "null", "\(missing.text)")

            let unindexed = try await ws.request("g", #"{"p":"/scores","q":{"l":1,"vf":"l","i":"m"}}"#)
            #expect(unindexed.status != "ok", "\(unindexed.text)")
            #expect(unindexed.message?.hasPrefix("Index not defined") == true, "\(unindexed.text)")
            // A get is no listen: later writes are not pushed.
            try await server.expectOK("PUT", "/scores/a/n.json", body: "5")
            #expect(try await ws.roundTrip().isEmpty)
        }
    }

    // MARK: - Writes

    @Test func aPutWithAHashSucceedsOnlyWhenTheHashMatches() async throws {
        try await Self.withRealtime(seed: #"{"tx": {"foo": "bar"}, "n": 500}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let before = try await server.dump()
            for wrong in ["aSSNoqcS4oQwJ2xxH20rvpp3zP0=", "", "not a hash"] {
                let stale = try await ws.request("p", #"{"p":"/tx","d":{"foo":"baz"},"h":"\#(wrong)"}"#)
                #expect(stale.status == "datastale", "h \(wrong): \(stale.text)")
            }
            #expect(try await server.dump() == before)

            let matched = try await ws.request("p", #"{"p":"/tx","d":{"foo":"baz"},"h":"XnLeTeWQmzTHImTbSMDLg/qMrKY="}"#)
            #expect(matched.status == "ok", "\(matched.text)")
            #expect(try await server.read("/tx.json") == #"{"foo":"baz"}"#)
            // 500 hashes to Ajg9bohDwTVmqR14o1bVJnneryM=.
            #expect(try await ws.request("p", #"{"p":"/n","d":501,"h":"Ajg9bohDwTVmqR14o1bVJnneryM="}"#).status == "ok")
            #expect(try await server.read("/n.json") == "501")
            // The empty hash means "no value": it holds where there is none, and only there.
            #expect(try await ws.request("p", #"{"p":"/fresh","d":1,"h":""}"#).status == "ok")
            #expect(try await ws.request("p", #"{"p":"/fresh","d":2,"h":""}"#).status == "datastale")
            #expect(try await server.read("/fresh.json") == "1")
        }
    }

    @Test func aMergeIsAppliedAtomically() async throws {
        try await Self.withRealtime(seed: #"{"m": {"a": 1, "b": 2}}"#) { server in
            let listener = try await RealtimeTestClient.open(server)
            #expect(try await listener.request("q", #"{"p":"/m","h":""}"#).status == "ok")
            _ = try await listener.nextPush()

            let ws = try await RealtimeTestClient.open(server)
            let merged = try await ws.request("m", #"{"p":"/m","d":{"a":10,"c/d":3,"b":null}}"#)
            #expect(merged.status == "ok", "\(merged.text)")
            #expect(canonicalJSON(text: try await server.read("/m.json")) == canonicalJSON(text: #"{"a": 10, "c": {"d": 3}}"#))
            // One event for the whole merge on the other connection.
            let push = try await listener.nextPush()
            #expect(push.action == "m" && push.path == "m", "\(push.text)")
            #expect(push.json == canonicalJSON(text: #"{"a": 10, "c/d": 3, "b": null}"#))
            #expect(try await listener.roundTrip().isEmpty)
        }
    }

    @Test func onDisconnectOperationsRunWhenTheSocketClosesAndCancelledOnesDoNot() async throws {
        try await Self.withRealtime(seed: #"{"presence": {"a": "online"}, "cancelled": "kept"}"#) { server in
            let watcher = try await RealtimeTestClient.open(server)
            #expect(try await watcher.request("q", #"{"p":"/presence","h":""}"#).status == "ok")
            _ = try await watcher.nextPush()
            #expect(try await watcher.request("q", #"{"p":"/cancelled","h":""}"#).status == "ok")
            _ = try await watcher.nextPush()

            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("o", #"{"p":"/cancelled","d":"gone"}"#).status == "ok")
            #expect(try await ws.request("o", #"{"p":"/cancelled/deeper","d":1}"#).status == "ok")
            #expect(try await ws.request("o", #"{"p":"/presence/a","d":"offline"}"#).status == "ok")
            #expect(try await ws.request("om", #"{"p":"/presence","d":{"last":{".sv":"timestamp"},"b":"gone"}}"#).status == "ok")
            // Cancels what is kept at /cancelled and below, nothing else.
            #expect(try await ws.request("oc", #"{"p":"/cancelled"}"#).status == "ok")
            // Nothing runs while the socket is open.
            #expect(try await watcher.roundTrip().isEmpty)
            #expect(try await server.read("/presence/a.json") == #""online""#)

            try await ws.close()
            let first = try await watcher.nextPush()
            #expect(first.action == "d" && first.path == "presence/a" && first.json == #""offline""#, "\(first.text)")
            let second = try await watcher.nextPush()
            #expect(second.action == "m" && second.path == "presence", "\(second.text)")
            let merged = second.body?["d"] as? [String: Any]
            #expect(merged?["b"] as? String == "gone")
            #expect((merged?["last"] as? NSNumber).map { abs($0.int64Value - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000 } == true)
            #expect(try await watcher.roundTrip().isEmpty)
            #expect(try await server.read("/cancelled.json") == #""kept""#)
        }
    }

    // MARK: - Rules

    @Test func aDeniedListenGetsPermissionDeniedAndNoData() async throws {
        try await Self.withRealtime(rules: Self.rules, seed: #"{"private": {"secret": 1}, "public": {"x": 1}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let id = try await ws.send("q", #"{"p":"/private","h":""}"#)
            let (denied, before) = try await ws.response(to: id)
            #expect(denied.status == "permission_denied", "\(denied.text)")
            #expect(before.isEmpty, "\(before.map(\.text))")
            #expect(try await ws.request("g", #"{"p":"/private"}"#).status == "permission_denied")
            // The connection stays, and a denied listen pushes nothing later.
            try await server.expectOK("PUT", "/private/secret.json", body: "2", headers: Self.admin)
            #expect(try await ws.request("q", #"{"p":"/public","h":""}"#).status == "ok")
            #expect(try await ws.roundTrip().map(\.path) == ["public"])
        }
    }

    @Test func aDeniedWriteGetsPermissionDeniedAndChangesNothing() async throws {
        try await Self.withRealtime(rules: Self.rules, seed: #"{"private": {"secret": 1}, "public": {"x": 1}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let before = try await server.dump()
            let put = try await ws.request("p", #"{"p":"/private/secret","d":2}"#)
            #expect(put.status == "permission_denied", "\(put.text)")
            #expect(put.message?.isEmpty == false)
            // A merge with one denied path writes none of its paths.
            let merge = try await ws.request("m", #"{"p":"/","d":{"public/x":2,"private/secret":3}}"#)
            #expect(merge.status == "permission_denied", "\(merge.text)")
            // onDisconnect operations are judged when they are queued.
            let queued = try await ws.request("o", #"{"p":"/private/secret","d":4}"#)
            #expect(queued.status == "permission_denied", "\(queued.text)")
            try await ws.close()
            // Let the server finish ending the session: a new connection's write is answered after.
            let next = try await RealtimeTestClient.open(server)
            #expect(try await next.request("p", #"{"p":"/public/x","d":1}"#).status == "ok")
            #expect(try await server.dump() == before)
        }
    }

    @Test func aRulesDeployRevokesListensThatMayNoLongerRead() async throws {
        try await Self.withRealtime(rules: Self.rules, seed: #"{"doc": {"a": 1, "b": 2}, "public": {"x": 0}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("q", #"{"p":"/doc","h":""}"#).status == "ok")
            _ = try await ws.nextPush()
            #expect(try await ws.request("q", #"{"p":"/doc","q":{"l":1,"vf":"l","i":".key"},"t":4,"h":""}"#).status == "ok")
            _ = try await ws.nextPush()
            #expect(try await ws.request("q", #"{"p":"/public","h":""}"#).status == "ok")
            _ = try await ws.nextPush()

            let closed = Self.rules.replacingOccurrences(
                of: #""doc": {".read": true, ".write": true}"#, with: #""doc": {".read": false, ".write": true}"#)
            try #require(closed != Self.rules)
            let deployed = try await server.request("PUT", "/.settings/rules.json", body: closed, headers: Self.admin)
            #expect(deployed.status == 200, "\(deployed.text)")

            var revoked: [RealtimeMessage] = []
            for _ in 0..<2 { revoked.append(try await ws.nextPush()) }
            #expect(revoked.allSatisfy { $0.action == "c" && $0.path == "doc" }, "\(revoked.map(\.text))")
            let queries = revoked.compactMap { $0.body?["q"] as? [Any] }
            #expect(queries.map { canonicalJSON($0) } == [canonicalJSON(text: #"[{"l":1,"vf":"l","i":".key"}]"#)])
            // Writes there are pushed no more; the listen that may still read goes on.
            try await server.expectOK("PUT", "/doc/a.json", body: "5")
            try await server.expectOK("PUT", "/public/x.json", body: "1")
            let push = try await ws.nextPush()
            #expect(push.path == "public/x" && push.json == "1", "\(push.text)")
            // A new listen there is refused.
            #expect(try await ws.request("q", #"{"p":"/doc","h":""}"#).status == "permission_denied")
        }
    }

    // MARK: - Credentials

    @Test func authWithAHearthIDTokenSignsIn() async throws {
        try await Self.withRealtime(rules: Self.rules) { server in
            let account = try await AuthEndpointTests.signUp(server, "alice@example.com")
            let token = try #require(account["idToken"] as? String)
            let uid = try #require(account["localId"] as? String)
            let exp = try #require((AuthEndpointTests.payload(token)?["exp"] as? NSNumber)?.int64Value)

            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("p", #"{"p":"/users/\#(uid)/name","d":"Alice"}"#).status == "permission_denied")
            let auth = try await ws.request("auth", #"{"cred":"\#(token)"}"#)
            #expect(auth.status == "ok", "\(auth.text)")
            let payload = auth.body?["d"] as? [String: Any]
            #expect((payload?["auth"] as? [String: Any])?["uid"] as? String == uid, "\(auth.text)")
            #expect((payload?["expires"] as? NSNumber)?.int64Value == exp)
            #expect(try await ws.request("p", #"{"p":"/users/\#(uid)/name","d":"Alice"}"#).status == "ok")
            #expect(try await ws.request("q", #"{"p":"/users/\#(uid)","h":""}"#).status == "ok")
            #expect(try await ws.request("q", #"{"p":"/users/someone-else","h":""}"#).status == "permission_denied")
            let stored = try await server.request("GET", "/users/\(uid)/name.json", headers: Self.admin)
            #expect(stored.text == #""Alice""#)
        }
    }

    @Test func authWithAnUnsignedEmulatorTokenSignsInAndABadTokenIsRefused() async throws {
        try await Self.withRealtime(rules: Self.rules, seed: #"{"users": {"bob": {"name": "Bob"}}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let bad = try await ws.request("auth", #"{"cred":"not.a.token"}"#)
            #expect(bad.status == "invalid_token", "\(bad.text)")
            #expect(try await ws.request("g", #"{"p":"/users/bob"}"#).status == "permission_denied")

            let bob = TestToken.unsigned(uid: "bob")
            // An override from a user's credential is ignored: only an admin's counts.
            let auth = try await ws.request("auth", #"{"cred":"\#(bob)","authvar":{"uid":"carol"}}"#)
            #expect(auth.status == "ok", "\(auth.text)")
            #expect(((auth.body?["d"] as? [String: Any])?["auth"] as? [String: Any])?["uid"] as? String == "bob")
            let read = try await ws.request("g", #"{"p":"/users/bob"}"#)
            #expect(read.json == canonicalJSON(text: #"{"name": "Bob"}"#), "\(read.text)")
            #expect(try await ws.request("g", #"{"p":"/users/carol"}"#).status == "permission_denied")

            let expired = TestToken.unsigned(uid: "bob", expiresIn: -60)
            let late = try await ws.request("auth", #"{"cred":"\#(expired)"}"#)
            #expect(late.status == "expired_token", "\(late.text)")
            // A refused credential leaves the connection signed out.
            #expect(try await ws.request("g", #"{"p":"/users/bob"}"#).status == "permission_denied")
        }
    }

    @Test func gauthWithTheAdminCredentialAndItsOverrides() async throws {
        try await Self.withRealtime(rules: Self.rules, seed: #"{"admins": {"x": 1}, "users": {"carol": 1, "bob": 2}, "private": 3}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("g", #"{"p":"/admins"}"#).status == "permission_denied")

            let admin = try await ws.request("gauth", #"{"cred":"\#(TestServer.adminToken)"}"#)
            #expect(admin.status == "ok", "\(admin.text)")
            // Rules do not apply to the admin.
            #expect(try await ws.request("g", #"{"p":"/admins"}"#).json == #"{"x":1}"#)
            #expect(try await ws.request("p", #"{"p":"/admins/y","d":2}"#).status == "ok")

            // authvar: the rules see this auth.
            let carol = try await ws.request("gauth", #"{"cred":"\#(TestServer.adminToken)","authvar":{"uid":"carol","admin":true}}"#)
            #expect(carol.status == "ok", "\(carol.text)")
            #expect(try await ws.request("g", #"{"p":"/admins/x"}"#).json == "1")
            #expect(try await ws.request("g", #"{"p":"/users/carol"}"#).json == "1")
            #expect(try await ws.request("g", #"{"p":"/users/bob"}"#).status == "permission_denied")

            // noauth: signed out.
            let none = try await ws.request("gauth", #"{"cred":"owner","noauth":true}"#)
            #expect(none.status == "ok", "\(none.text)")
            #expect(try await ws.request("g", #"{"p":"/private"}"#).status == "permission_denied")

            // unauth after the admin: signed out as well.
            #expect(try await ws.request("gauth", #"{"cred":"owner"}"#).status == "ok")
            #expect(try await ws.request("g", #"{"p":"/private"}"#).json == "3")
            #expect(try await ws.request("unauth").status == "ok")
            #expect(try await ws.request("g", #"{"p":"/private"}"#).status == "permission_denied")
        }
    }

    @Test func unauthRevokesTheListensTheSignedOutConnectionMayNotRead() async throws {
        try await Self.withRealtime(rules: Self.rules, seed: #"{"users": {"bob": {"name": "Bob"}}, "public": {"x": 0}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("auth", #"{"cred":"\#(TestToken.unsigned(uid: "bob"))"}"#).status == "ok")
            #expect(try await ws.request("q", #"{"p":"/users/bob","h":""}"#).status == "ok")
            _ = try await ws.nextPush()
            #expect(try await ws.request("q", #"{"p":"/public","h":""}"#).status == "ok")
            _ = try await ws.nextPush()

            #expect(try await ws.request("unauth").status == "ok")
            let revoked = try await ws.nextPush()
            #expect(revoked.action == "c" && revoked.path == "users/bob", "\(revoked.text)")
            try await server.expectOK("PUT", "/users/bob/name.json", body: #""Robert""#, headers: Self.admin)
            try await server.expectOK("PUT", "/public/x.json", body: "1")
            let push = try await ws.nextPush()
            #expect(push.path == "public/x", "\(push.text)")
        }
    }

    // MARK: - Bad input

    /// Frames that are not messages of the protocol: each gets an `e` and the socket closes.
    static let brokenMessages = [
        #"{"t":"d","d":"#,
        "not json",
        "[1,2,3]",
        #"{"t":"x","d":{}}"#,
        #"{"t":"d","d":{"a":"p","b":{"p":"/a","d":1}}}"#,
        #"{"t":"d","d":{"r":"1","a":"p","b":{"p":"/a","d":1}}}"#,
        #"{"t":"c"}"#,
        // A chunk count out of range.
        "-1",
    ]

    @Test(arguments: brokenMessages)
    func aMessageThatIsNotOfTheProtocolGetsAnErrorAndTheSocketCloses(_ frame: String) async throws {
        try await withServer { server in
            let ws = try await RealtimeTestClient.open(server)
            let before = try await server.dump()
            try await ws.sendFrame(frame)
            let messages = try await ws.messagesUntilClosed()
            #expect(messages.map(\.controlType) == ["e"], "\(frame) got \(messages.map(\.text))")
            #expect((messages.first?.controlData as? String)?.isEmpty == false)
            #expect(try await server.dump() == before)
        }
    }

    @Test func aBinaryFrameGetsAnErrorAndTheSocketCloses() async throws {
        try await withServer { server in
            let ws = try await RealtimeTestClient.open(server)
            try await ws.sendBinary(Array(RealtimeTestClient.envelope(id: 1, action: "p", body: #"{"p":"/a","d":1}"#).utf8))
            let messages = try await ws.messagesUntilClosed()
            #expect(messages.map(\.controlType) == ["e"], "\(messages.map(\.text))")
            #expect(try await server.read("/a.json") == "null")
        }
    }

    /// Requests whose body cannot be read: answered with an error under their id.
    static let unreadableRequests: [(action: String, body: String)] = [
        ("p", #"{"p":"a/.b","d":1}"#),
        ("p", #"{"p":"/a[0]","d":1}"#),
        ("p", #"{"p":"/x","d":{"a.b":1}}"#),
        ("p", #"{"p":"/x","d":{"ok":{"$bad":1}}}"#),
        ("p", #"{"p":"/x"}"#),
        ("p", #"{"d":1}"#),
        ("m", #"{"p":"/x","d":{"a/.b":1}}"#),
        ("m", #"{"p":"/x","d":{"ok":1,"b":{"c#":1}}}"#),
        ("m", #"{"p":"/x","d":[1,2]}"#),
        ("o", #"{"p":"/x","d":{"a.b":1}}"#),
        ("om", #"{"p":"a/.b","d":{"c":1}}"#),
        ("q", #"{"p":"a/.b","h":""}"#),
        ("q", #"{"p":"/x","q":{"l":-1},"t":1,"h":""}"#),
        ("q", #"{"p":"/x","q":{"i":".key","sp":5,"l":1},"t":1,"h":""}"#),
        ("g", #"{"p":"/x","q":{"vf":"sideways","l":1}}"#),
        ("auth", #"{}"#),
    ]

    @Test func aRequestWithAnUnreadableBodyIsAnsweredUnderItsIDAndChangesNothing() async throws {
        try await Self.withRealtime(seed: #"{"x": {"keep": 1}}"#) { server in
            let ws = try await RealtimeTestClient.open(server)
            let before = try await server.dump()
            for request in Self.unreadableRequests {
                let response = try await ws.request(request.action, request.body)
                #expect(response.status != nil && response.status != "ok", "\(request.action) \(request.body): \(response.text)")
                #expect(response.message?.isEmpty == false, "\(response.text)")
            }
            // The connection stays; onDisconnect operations that were refused do not run.
            #expect(try await ws.roundTrip().isEmpty)
            #expect(try await ws.request("p", #"{"p":"/x/keep","d":1}"#).status == "ok")
            try await ws.close()
            let next = try await RealtimeTestClient.open(server)
            #expect(try await next.request("p", #"{"p":"/x/keep","d":1}"#).status == "ok")
            #expect(try await server.dump() == before)
        }
    }

    @Test func anUnknownActionFailsAndTheConnectionStays() async throws {
        try await withServer { server in
            let ws = try await RealtimeTestClient.open(server)
            let unknown = try await ws.request("frobnicate", #"{"p":"/a"}"#)
            #expect(unknown.status == "failed", "\(unknown.text)")
            #expect(unknown.message?.isEmpty == false)
            // Without a body as well.
            try await ws.sendFrame(#"{"t":"d","d":{"r":99,"a":"zz"}}"#)
            let (bare, _) = try await ws.response(to: 99)
            #expect(bare.status == "failed", "\(bare.text)")
            #expect(try await ws.request("p", #"{"p":"/a","d":1}"#).status == "ok")
            #expect(try await server.read("/a.json") == "1")
        }
    }

    // MARK: - Limits

    @Test func listensPastTheConnectionsLimitFailAndTheOthersGoOn() async throws {
        try await withServer(configure: { $0.defaultRules = Self.openRules; $0.realtimeLimits.maxListens = 2 }) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("q", #"{"p":"/a","h":""}"#).status == "ok")
            #expect(try await ws.request("q", #"{"p":"/b","h":""}"#).status == "ok")
            let third = try await ws.request("q", #"{"p":"/c","h":""}"#)
            #expect(third.status == "failed")
            #expect(third.message?.contains("Too many listens") == true, "\(third.json)")
            // The first two still get their events.
            #expect(try await ws.request("p", #"{"p":"/a","d":1}"#).status == "ok")
            let push = try await ws.nextPush()
            #expect(push.path == "a" && push.json == "1")
        }
    }

    @Test func aMessagePastTheLimitGetsAnErrorAndTheSocketCloses() async throws {
        try await withServer(configure: { $0.defaultRules = Self.openRules; $0.realtimeLimits.maxMessageBytes = 20_000 }) { server in
            let ws = try await RealtimeTestClient.open(server)
            let big = String(repeating: "x", count: 30_000)
            _ = try await ws.send("p", #"{"p":"/big","d":"\#(big)"}"#)
            let messages = try await ws.messagesUntilClosed()
            #expect(messages.last?.controlType == "e", "\(messages.map(\.text))")
            #expect(try await server.read("/big.json") == "null")
        }
    }

    @Test func onDisconnectOperationsPastTheLimitAreRefusedAndNeverRun() async throws {
        try await withServer(configure: { $0.defaultRules = Self.openRules; $0.realtimeLimits.maxOnDisconnectOperations = 2 }) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("o", #"{"p":"/left/a","d":1}"#).status == "ok")
            #expect(try await ws.request("o", #"{"p":"/left/b","d":2}"#).status == "ok")
            let third = try await ws.request("o", #"{"p":"/left/c","d":3}"#)
            #expect(third.status == "write_too_big", "\(third.json)")
            // Cancelling one makes room again.
            #expect(try await ws.request("oc", #"{"p":"/left/b"}"#).status == "ok")
            #expect(try await ws.request("o", #"{"p":"/left/d","d":4}"#).status == "ok")
            try await ws.close()
            let watcher = try await RealtimeTestClient.open(server)
            let left = try await Self.eventually { try await watcher.request("g", #"{"p":"/left","q":{}}"#) }
            #expect(left.json == canonicalJSON(text: #"{"a":1,"d":4}"#))
        }
    }

    /// A reader that stops reading is disconnected once the events waiting for it pass the
    /// bound (its onDisconnect then runs); the server does not hold them all.
    @Test func aClientThatStopsReadingIsDisconnected() async throws {
        try await withServer(configure: {
            $0.defaultRules = Self.openRules
            $0.realtimeLimits.maxQueuedEvents = 16
            $0.realtimeLimits.maxQueuedBytes = 256 << 10
        }) { server in
            let stalled = try RawWebSocketExchange.StalledClient(port: server.port, query: "v=5&ns=default")
            try stalled.send(#"{"t":"d","d":{"r":1,"a":"o","b":{"p":"/gone","d":true}}}"#)
            try stalled.send(#"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/flood","h":""}}}"#)
            let watcher = try await RealtimeTestClient.open(server)
            // The stalled client's requests are answered (here: its onDisconnect is queued).
            _ = try await Self.eventually { () async throws -> RealtimeMessage in
                let queued = try await watcher.request("g", #"{"p":"/flood","q":{}}"#)
                _ = try await watcher.request("p", #"{"p":"/probe","d":1}"#)
                return queued
            }
            let chunk = String(repeating: "y", count: 64 << 10)
            var gone = false
            for index in 0..<400 where !gone {
                #expect(try await watcher.request("p", #"{"p":"/flood/v","d":"\#(index)\#(chunk)"}"#).status == "ok")
                if index % 20 == 19 {
                    gone = try await watcher.request("g", #"{"p":"/gone","q":{}}"#).json == "true"
                }
            }
            let result = try await Self.eventually { () async throws -> RealtimeMessage in
                let value = try await watcher.request("g", #"{"p":"/gone","q":{}}"#)
                guard value.json == "true" else { throw TestServerError("not yet") }
                return value
            }
            #expect(result.json == "true", "the stalled client was not disconnected")
        }
    }

    @Test func theServersFiguresCountRealtimeSessionsAndListens() async throws {
        try await withServer(configure: { $0.defaultRules = Self.openRules }) { server in
            let ws = try await RealtimeTestClient.open(server)
            #expect(try await ws.request("q", #"{"p":"/counted","h":""}"#).status == "ok")
            let stats = try await server.request("GET", "/.hearth/stats", headers: Self.admin)
            let connections = try #require((stats.json as? [String: Any])?["connections"] as? [String: Int])
            #expect(connections["realtime"] == 1)
            #expect(connections["streams"] == 1)
        }
    }

    static let openRules = #"{"rules": {".read": true, ".write": true}}"#

    /// Runs `body` until it stops throwing, for at most 20 seconds.
    static func eventually<T>(_ body: () async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + .seconds(20)
        while true {
            do {
                return try await body()
            } catch where ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}

