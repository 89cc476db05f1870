import Foundation
import HearthCore
import HearthProtocol
import Testing

/// The realtime protocol's codec, free of I/O: frames and chunks, the query object, client
/// messages and server messages (docs/protocol.md).
@Suite("Realtime protocol codec")
struct RealtimeCodecTests {
    // MARK: - Frames

    @Test func longMessagesGoAsACountAndChunksAndComeBackWhole() throws {
        #expect(RealtimeFrames.frames(for: #"{"t":"c"}"#) == [#"{"t":"c"}"#])
        let long = #"{"t":"d","d":""# + String(repeating: "é😀x", count: 9_000) + #""}"#
        let frames = RealtimeFrames.frames(for: long)
        #expect(frames.count > 2)
        #expect(Int(frames[0]) == frames.count - 1)
        for chunk in frames.dropFirst() { #expect(chunk.utf16.count <= RealtimeFrames.maxFrameLength) }
        // No character is cut in two.
        #expect(frames.dropFirst().joined() == long)
        var assembler = RealtimeFrameAssembler(maxMessageBytes: 1 << 20)
        var received: [RealtimeFrameAssembler.Received] = []
        for frame in frames { received.append(try assembler.receive(frame)) }
        #expect(received.last == .message(long))
        #expect(received.dropLast().allSatisfy { $0 == .incomplete })
        // The assembler is ready for the next message.
        #expect(try assembler.receive(#"{"t":"c"}"#) == .message(#"{"t":"c"}"#))
    }

    @Test func keepAlivesBadCountsAndOversizeMessages() throws {
        var assembler = RealtimeFrameAssembler(maxMessageBytes: 100)
        #expect(try assembler.receive("0") == .keepAlive)
        #expect(throws: RealtimeFrameError.self) { try assembler.receive("-3") }
        #expect(throws: RealtimeFrameError.self) { try assembler.receive("99999") }
        #expect(throws: RealtimeFrameError.messageTooLarge) { try assembler.receive(String(repeating: "x", count: 101)) }
        #expect(try assembler.receive("2") == .incomplete)
        #expect(try assembler.receive(String(repeating: "y", count: 60)) == .incomplete)
        #expect(throws: RealtimeFrameError.messageTooLarge) { try assembler.receive(String(repeating: "y", count: 60)) }
    }

    // MARK: - Query objects

    static func query(_ json: String) throws -> Query? {
        try RealtimeQueryObject.query(from: Array(json.utf8))
    }

    @Test func queryObjectsBecomeQueries() throws {
        #expect(try Self.query("{}") == nil)
        #expect(try Self.query(#"{"l":10,"vf":"r","i":"timestamp"}"#)
            == Query(order: .child(try Path(parsing: "timestamp")), limit: .last(10)))
        #expect(try Self.query(#"{"l":3,"vf":"l","i":".key"}"#) == Query(order: .key, limit: .first(3)))
        #expect(try Self.query(#"{"sp":5,"ep":9,"i":".value"}"#)
            == Query(order: .value, start: .init(value: .int(5)), end: .init(value: .int(9))))
        #expect(try Self.query(#"{"sp":"a","sn":"k1","i":"author/uid"}"#)
            == Query(order: .child(try Path(parsing: "author/uid")), start: .init(value: .string("a"), key: ChildKey("k1"))))
        // A null start on the priority index is a bound, not nothing.
        #expect(try Self.query(#"{"sp":null,"sn":"m"}"#) == Query(order: .priority, start: .init(value: .null, key: ChildKey("m"))))
        // Without vf, a limit counts from the start when one is set, else from the end.
        #expect(try Self.query(#"{"sp":1,"l":2}"#)?.limit == .first(2))
        #expect(try Self.query(#"{"l":2}"#)?.limit == .last(2))
    }

    @Test func startAfterAndEndBeforeInBothSpellings() throws {
        // 9.8.1 writes startAfter(v) as a start at v past every key, endBefore(v) as an end before every key.
        #expect(try Self.query(#"{"sp":3,"sn":"[MAX_NAME]","i":".value"}"#)?.start == .init(value: .int(3), inclusive: false))
        #expect(try Self.query(#"{"ep":3,"en":"[MIN_NAME]","i":".value"}"#)?.end == .init(value: .int(3), inclusive: false))
        #expect(try Self.query(#"{"sp":3,"sn":"[MIN_NAME]","i":".value"}"#)?.start == .init(value: .int(3)))
        #expect(try Self.query(#"{"ep":3,"en":"[MAX_NAME]","i":".value"}"#)?.end == .init(value: .int(3)))
        // Newer SDKs say so with sin/ein.
        #expect(try Self.query(#"{"sp":3,"sn":"k","sin":false,"i":".value"}"#)?.start
            == .init(value: .int(3), key: ChildKey("k"), inclusive: false))
        #expect(try Self.query(#"{"ep":3,"ein":false,"i":".value"}"#)?.end == .init(value: .int(3), inclusive: false))
    }

    @Test(arguments: [
        "[]", "5", #"{"i":5}"#, #"{"i":"a/$b"}"#, #"{"l":-1}"#, #"{"l":"2"}"#, #"{"l":2,"vf":"x"}"#, #"{"sp":{"a":1}}"#,
        #"{"sp":1,"sn":7}"#, #"{"sp":1,"sin":"yes"}"#, #"{"i":".key","sp":5}"#, "{",
    ])
    func badQueryObjectsAreRefused(json: String) {
        #expect(throws: RealtimeProtocolError.self) { try Self.query(json) }
    }

    // MARK: - Client messages

    static func request(_ json: String) throws -> (Int64, RealtimeRequest) {
        guard case .request(let id, let request) = try RealtimeClientMessage.parse(json) else {
            throw RealtimeProtocolError.malformed("not a request")
        }
        return (id, request)
    }

    @Test func everyActionIsRead() throws {
        guard case (1, .stats) = try Self.request(#"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.js.9-8-1":1}}}}"#) else {
            Issue.record("stats")
            return
        }
        guard case (2, .auth(let credential, nil)) = try Self.request(#"{"t":"d","d":{"r":2,"a":"auth","b":{"cred":"jwt"}}}"#),
            credential == "jwt"
        else { Issue.record("auth"); return }
        guard case (3, .auth("owner", .signedOut)) = try Self.request(#"{"t":"d","d":{"r":3,"a":"gauth","b":{"cred":"owner","noauth":true}}}"#)
        else { Issue.record("gauth noauth"); return }
        guard case (4, .auth("owner", .auth(let variable)?)) = try Self.request(
            #"{"t":"d","d":{"r":4,"a":"gauth","b":{"cred":"owner","authvar":{"uid":"u1"}}}}"#),
            variable.child(ChildKey("uid")) == .string("u1")
        else { Issue.record("gauth authvar"); return }
        guard case (5, .listen(let path, let view, let hash)) = try Self.request(
            #"{"t":"d","d":{"r":5,"a":"q","b":{"p":"/posts","q":{"l":10,"vf":"r","i":"timestamp"},"t":7,"h":""}}}"#),
            path == (try Path(parsing: "posts")), view.tag == 7, view.query?.limit == .last(10), hash == "",
            view.queryObject.map({ String(decoding: $0, as: UTF8.self) }) == #"{"l":10,"vf":"r","i":"timestamp"}"#
        else { Issue.record("listen"); return }
        guard case (6, .listen(_, let plain, nil)) = try Self.request(#"{"t":"d","d":{"r":6,"a":"q","b":{"p":"/a","h":null}}}"#),
            plain.query == nil, plain.tag == nil
        else { Issue.record("plain listen"); return }
        guard case (7, .unlisten(_, let view)) = try Self.request(#"{"t":"d","d":{"r":7,"a":"n","b":{"p":"/posts","q":{"l":1},"t":7}}}"#),
            view.tag == 7
        else { Issue.record("unlisten"); return }
        guard case (8, .put(_, let data, "hash1")) = try Self.request(
            #"{"t":"d","d":{"r":8,"a":"p","b":{"p":"/a/b","d":{"x":1,".priority":2},"h":"hash1"}}}"#),
            data.node.priority == .number(2)
        else { Issue.record("put"); return }
        // setPriority writes to `<path>/.priority`.
        guard case (8, .put(let priorityPath, let priority, nil)) = try Self.request(
            #"{"t":"d","d":{"r":8,"a":"p","b":{"p":"/a/.priority","d":5}}}"#),
            priorityPath == (try Path(parsing: "a/.priority", allowPriority: true)), priority.node == .int(5)
        else { Issue.record("priority put"); return }
        guard case (9, .merge(_, let entries)) = try Self.request(
            #"{"t":"d","d":{"r":9,"a":"m","b":{"p":"/","d":{"posts/p1/title":"Hi","people/u1":null}}}}"#),
            entries.count == 2, entries[0].path == (try Path(parsing: "posts/p1/title"))
        else { Issue.record("merge"); return }
        guard case (10, .onDisconnectPut(_, let gone)) = try Self.request(
            #"{"t":"d","d":{"r":10,"a":"o","b":{"p":"/status/u1","d":{".sv":"timestamp"}}}}"#),
            gone.hasServerValues
        else { Issue.record("onDisconnect put"); return }
        guard case (11, .onDisconnectMerge) = try Self.request(#"{"t":"d","d":{"r":11,"a":"om","b":{"p":"/s","d":{"a/b":1}}}}"#)
        else { Issue.record("onDisconnect merge"); return }
        guard case (12, .onDisconnectCancel) = try Self.request(#"{"t":"d","d":{"r":12,"a":"oc","b":{"p":"/s"}}}"#)
        else { Issue.record("onDisconnect cancel"); return }
        guard case (13, .get(_, let view)) = try Self.request(#"{"t":"d","d":{"r":13,"a":"g","b":{"p":"/a","q":{}}}}"#), view.query == nil
        else { Issue.record("get"); return }
        guard case (14, .unauth) = try Self.request(#"{"t":"d","d":{"r":14,"a":"unauth","b":{}}}"#) else { Issue.record("unauth"); return }
        guard case (15, .unknown("zz")) = try Self.request(#"{"t":"d","d":{"r":15,"a":"zz","b":{}}}"#) else { Issue.record("unknown"); return }
    }

    @Test func controlMessages() throws {
        guard case .ping = try RealtimeClientMessage.parse(#"{"t":"c","d":{"t":"p","d":{}}}"#) else { Issue.record("ping"); return }
        guard case .control("n") = try RealtimeClientMessage.parse(#"{"t":"c","d":{"t":"n"}}"#) else { Issue.record("n"); return }
    }

    @Test(arguments: [
        "", "0", "[]", #"{"t":"x"}"#, #"{"d":{}}"#, #"{"t":"d"}"#, #"{"t":"d","d":{"a":"p"}}"#, #"{"t":"d","d":{"r":"1","a":"p"}}"#,
        #"{"t":"d","d":{"r":1.5,"a":"p"}}"#, #"{"t":"c","d":{}}"#,
    ])
    func malformedMessagesAreRefused(json: String) {
        #expect(throws: RealtimeProtocolError.self) { try RealtimeClientMessage.parse(json) }
    }

    /// A request with an id whose body cannot be read is answered under that id; the
    /// connection stays.
    @Test(arguments: [
        #"{"t":"d","d":{"r":1,"a":"p","b":{"d":1}}}"#, #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"a/.b","d":1}}}"#,
        #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a"}}}"#, #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","q":{"l":-2}}}}"#,
        #"{"t":"d","d":{"r":1,"a":"q","b":{"p":"/a","q":{"l":1},"t":"x"}}}"#, #"{"t":"d","d":{"r":1,"a":"auth","b":{}}}"#,
        #"{"t":"d","d":{"r":1,"a":"gauth","b":{"cred":"x","authvar":5}}}"#, #"{"t":"d","d":{"r":1,"b":{}}}"#,
    ])
    func unreadableRequestsAreRejectedUnderTheirID(json: String) throws {
        guard case .rejected(let id, _) = try RealtimeClientMessage.parse(json) else {
            Issue.record("not rejected: \(json)")
            return
        }
        #expect(id == 1)
    }

    static func rejection(_ json: String) throws -> RealtimeProtocolError? {
        guard case .rejected(_, let error) = try RealtimeClientMessage.parse(json) else { return nil }
        return error
    }

    @Test func dataFirebaseRefusesIsAnErrorOfThatRequest() throws {
        let badKey = #"{"t":"d","d":{"r":1,"a":"p","b":{"p":"/a","d":{"b.c":1}}}}"#
        guard case .invalidData(let cause) = try Self.rejection(badKey) else {
            Issue.record("a bad key is not invalid data")
            return
        }
        #expect(cause.message.hasPrefix("Invalid data; couldn't parse key beginning at"))
        for badUpdate in [#"{"t":"d","d":{"r":1,"a":"m","b":{"p":"/a","d":{"x":{"$y":1}}}}}"#, #"{"t":"d","d":{"r":1,"a":"m","b":{"p":"/a","d":[1]}}}"#] {
            #expect(try Self.rejection(badUpdate) != nil)
        }
    }

    // MARK: - Server messages

    static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func serverMessagesHaveTheSDKsShape() throws {
        let handshake = try Self.json(RealtimeServerMessage.handshake(timestamp: 1_700_000_000_123, host: "h:9000", sessionID: "s1"))
        #expect(handshake["t"] as? String == "c")
        let control = try #require(handshake["d"] as? [String: Any])
        #expect(control["t"] as? String == "h")
        let inner = try #require(control["d"] as? [String: Any])
        #expect(inner["ts"] as? Int64 == 1_700_000_000_123 && inner["v"] as? String == "5")
        #expect(inner["h"] as? String == "h:9000" && inner["s"] as? String == "s1")
        #expect(String(decoding: RealtimeServerMessage.pong, as: UTF8.self) == #"{"t":"c","d":{"t":"o","d":{}}}"#)

        let ok = try Self.json(RealtimeServerMessage.response(id: 7, status: "ok", data: .object([(ChildKey("a"), .int(1))])))
        let body = try #require((ok["d"] as? [String: Any])?["b"] as? [String: Any])
        #expect((ok["d"] as? [String: Any])?["r"] as? Int == 7)
        #expect(body["s"] as? String == "ok" && (body["d"] as? [String: Any])?["a"] as? Int == 1)
        let denied = String(decoding: RealtimeServerMessage.response(id: 8, status: "permission_denied", data: .string("Permission denied")), as: UTF8.self)
        #expect(denied == #"{"t":"d","d":{"r":8,"b":{"s":"permission_denied","d":"Permission denied"}}}"#)

        let push = String(decoding: RealtimeServerMessage.dataPush(
            path: try Path(parsing: "posts/p1"), encodedData: Array(#"{"a":1}"#.utf8), tag: 3), as: UTF8.self)
        #expect(push == #"{"t":"d","d":{"a":"d","b":{"p":"posts/p1","d":{"a":1},"t":3}}}"#)
        let merge = String(decoding: RealtimeServerMessage.dataPush(path: .root, encodedData: Array("{}".utf8), merge: true), as: UTF8.self)
        #expect(merge == #"{"t":"d","d":{"a":"m","b":{"p":"","d":{}}}}"#)
        let revoked = String(decoding: RealtimeServerMessage.listenRevoked(
            path: try Path(parsing: "a"), queryObject: Array(#"{"l":1}"#.utf8)), as: UTF8.self)
        #expect(revoked == #"{"t":"d","d":{"a":"c","b":{"p":"a","q":[{"l":1}]}}}"#)
        let expired = try Self.json(RealtimeServerMessage.authRevoked(status: "expired_token", reason: "Auth token is expired."))
        #expect(((expired["d"] as? [String: Any])?["b"] as? [String: Any])?["s"] as? String == "expired_token")
        #expect(String(decoding: RealtimeServerMessage.shutdown("bye \"now\""), as: UTF8.self) == #"{"t":"c","d":{"t":"s","d":"bye \"now\""}}"#)
        // Data keeps its priorities, as the SDKs read it.
        let withPriority = String(decoding: RealtimeServerMessage.response(
            id: 1, status: "ok", data: Node.string("x").withPriority(.number(3))), as: UTF8.self)
        #expect(withPriority.contains(#"".priority":3"#), "\(withPriority)")
    }
}

/// What the official JavaScript SDK 9.8.1 really sends (recorded by `scripts/capture_sdk_frames.py`):
/// every frame reassembles and reads, and each query form becomes the query it means.
@Suite("Realtime frames of the JS SDK")
struct RealtimeSDKFramesTests {
    static let frames = try! String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/realtime/js-sdk-9.8.1-client-frames.txt").standardized,
        encoding: .utf8
    ).split(separator: "\n").map(String.init)

    static func requests() throws -> [(Int64, RealtimeRequest)] {
        var assembler = RealtimeFrameAssembler(maxMessageBytes: 16 << 20)
        var requests: [(Int64, RealtimeRequest)] = []
        for frame in frames {
            guard case .message(let text) = try assembler.receive(frame) else { continue }
            guard case .request(let id, let request) = try RealtimeClientMessage.parse(text) else { continue }
            requests.append((id, request))
        }
        return requests
    }

    @Test func everyRecordedMessageReadsInOrder() throws {
        let requests = try Self.requests()
        #expect(requests.map(\.0) == Array(1...Int64(requests.count)))
        #expect(requests.count >= 25)
        let big = requests.compactMap { request -> Node? in
            if case .put(let path, let data, _) = request.1, path == (try? Path(parsing: "big")) { return data.node }
            return nil
        }
        #expect(big == [.string(String(repeating: "x", count: 20_000))], "the chunked message")
    }

    @Test func eachQueryFormMeansWhatTheSDKAskedFor() throws {
        var views: [String: RealtimeRequest.QueryView] = [:]
        var gets: [String: RealtimeRequest.QueryView] = [:]
        for (_, request) in try Self.requests() {
            switch request {
            case .listen(let path, let view, let hash):
                #expect(hash == "")
                views[RealtimeServerMessage.wirePath(path)] = view
            case .get(let path, let view): gets[RealtimeServerMessage.wirePath(path)] = view
            default: break
            }
        }
        func path(_ text: String) throws -> Path { try Path(parsing: text) }
        #expect(views["q/a"]?.query == Query(order: .child(try path("timestamp")), limit: .last(10)))
        #expect(views["q/b"]?.query == Query(order: .key, start: .init(value: .string("a")), end: .init(value: .string("m")), limit: .first(3)))
        #expect(views["q/c"]?.query == .equal(order: .value, value: .int(5)))
        #expect(views["q/d"]?.query == Query(
            order: .child(try path("stars")), start: .init(value: .int(3), inclusive: false), end: .init(value: .int(9), inclusive: false)))
        #expect(views["q/e"]?.query == Query(
            order: .child(try path("author/uid")), start: .init(value: .string("u1"), key: ChildKey("k1")),
            end: .init(value: .string("u1"), key: ChildKey("k9"))))
        #expect(views["q/f"]?.query == Query(order: .priority, start: .init(value: .null, key: ChildKey("k"))))
        // startAfter on keys: the SDK sends the next possible key.
        #expect(views["q/g"]?.query == Query(order: .key, start: .init(value: .string("k5-")), limit: .first(2)))
        // endBefore(3, "k2"): the SDK sends the key just before "k2".
        #expect(views["q/h"]?.query?.end?.value == .int(3))
        #expect(views["q/h"]?.query?.end?.key.map { $0.string.hasPrefix("k1zzz") } == true)
        #expect(views["q/i"]?.query == Query(
            order: .child(try path("n")), start: .init(value: .int(1), key: ChildKey("k1-")), limit: .last(4)))
        // An ordering with nothing to filter is listened to whole, and filtered by the client.
        #expect(views["q/j"].map { $0.query == nil && $0.tag == nil } == true)
        #expect(views["q/k"]?.query == Query(order: .priority, limit: .first(2)))
        #expect(Set(views.values.compactMap(\.tag)).count == views.values.filter { $0.query != nil }.count, "tags are distinct")
        #expect(gets["once"]?.query == Query(order: .child(try path("timestamp")), limit: .last(1)))
        #expect(gets["once2"].map { $0.query == nil } == true)
    }
}
