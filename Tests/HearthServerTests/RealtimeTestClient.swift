import Foundation
import HearthTesting
import Logging
import NIOCore
import NIOWebSocket
import Testing
import WSClient

/// A raw realtime-protocol client for tests (docs/protocol.md): one WebSocket to a test server's
/// `/.ws`, sending frames and JSON text exactly as given and reading what the server sends,
/// frame by frame or message by message. It knows the framing (chunk counts) and the request
/// envelope, nothing else, so tests see the wire as an SDK does.
///
/// Every wait ends on a frame arriving or the socket closing, with a generous deadline that
/// only a broken server reaches. Used from one task at a time.
final class RealtimeTestClient {
    /// What the socket delivered.
    enum Frame: Equatable {
        case text(String)
        case binary
        /// The socket closed (with the server's close code, when it sent one).
        case closed(WebSocketErrorCode?)
    }

    private enum Event: Sendable {
        case text(String)
        case binary
        case closed(WebSocketErrorCode?)
        case deadline(Int)
    }

    /// The longest wait for one frame: far past anything a working server on loopback needs.
    static let deadline: Duration = .seconds(10)
    /// The protocol's longest frame (docs/protocol.md §3).
    static let maxFrameLength = 16_384

    private let writer: WebSocketOutboundWriter
    private var events: AsyncStream<Event>.AsyncIterator
    private let continuation: AsyncStream<Event>.Continuation
    private let task: Task<Void, Never>
    private var deadlineToken = 0
    private var nextRequestID = 1
    /// Messages read while waiting for a response, handed out first by ``nextMessage()``.
    private var pending: [RealtimeMessage] = []
    /// The close frame, once the socket closed.
    private(set) var closed: Frame?

    private init(
        writer: WebSocketOutboundWriter, events: AsyncStream<Event>, continuation: AsyncStream<Event>.Continuation,
        task: Task<Void, Never>
    ) {
        self.writer = writer
        self.events = events.makeAsyncIterator()
        self.continuation = continuation
        self.task = task
    }

    deinit {
        task.cancel()
    }

    /// Opens a WebSocket to `server` at `/.ws?<query>`; nothing is read yet (the handshake waits).
    static func connect(_ server: TestServer, query: String = "v=5&ns=default") async throws -> RealtimeTestClient {
        let (events, continuation) = AsyncStream<Event>.makeStream()
        let (writers, writerContinuation) = AsyncStream<WebSocketOutboundWriter>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var logger = Logger(label: "realtime-test-client")
        logger.logLevel = .critical
        let client = WebSocketClient(
            url: "ws://127.0.0.1:\(server.port)/.ws?\(query)",
            configuration: .init(maxFrameSize: 1 << 20), logger: logger
        ) { inbound, outbound, _ in
            writerContinuation.yield(outbound)
            for try await message in inbound.messages(maxSize: 1 << 20) {
                switch message {
                case .text(let text): continuation.yield(.text(text))
                case .binary: continuation.yield(.binary)
                }
            }
        }
        let task = Task {
            let close = try? await client.run()
            writerContinuation.finish()
            continuation.yield(.closed(close?.closeCode))
            continuation.finish()
        }
        var iterator = writers.makeAsyncIterator()
        guard let writer = await iterator.next() else { throw TestServerError("the WebSocket did not open") }
        return RealtimeTestClient(writer: writer, events: events, continuation: continuation, task: task)
    }

    /// Connects and reads the handshake, which must come first; returns the client and the
    /// handshake's payload (`ts`, `v`, `h`, `s`).
    static func open(
        _ server: TestServer, query: String = "v=5&ns=default", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> RealtimeTestClient {
        let client = try await connect(server, query: query)
        let first = try await client.nextMessage()
        #expect(first.controlType == "h", "first message: \(first.text)", sourceLocation: sourceLocation)
        return client
    }

    /// Closes the socket and waits until it is closed.
    func close() async throws {
        try? await writer.close(.normalClosure, reason: nil)
        while closed == nil { _ = try await nextFrame() }
    }

    // MARK: - Sending

    /// Sends `text` as one text frame, as is.
    func sendFrame(_ text: String) async throws {
        try await writer.write(.text(text))
    }

    /// Sends a binary frame.
    func sendBinary(_ bytes: [UInt8]) async throws {
        try await writer.write(.binary(ByteBuffer(bytes: bytes)))
    }

    /// Sends one message: one frame, or a count and chunks of 16,384 characters past that (docs/protocol.md §3).
    func sendMessage(_ text: String) async throws {
        let units = Array(text.utf16)
        guard units.count > Self.maxFrameLength else { return try await sendFrame(text) }
        // Tests send ASCII when chunking, so UTF-16 units are characters.
        let chunks = stride(from: 0, to: units.count, by: Self.maxFrameLength).map {
            String(decoding: units[$0..<min($0 + Self.maxFrameLength, units.count)], as: UTF16.self)
        }
        try await sendFrame(String(chunks.count))
        for chunk in chunks { try await sendFrame(chunk) }
    }

    /// The envelope of request `id`: `{"t":"d","d":{"r":id,"a":action,"b":body}}`.
    static func envelope(id: Int, action: String, body: String) -> String {
        #"{"t":"d","d":{"r":\#(id),"a":"\#(action)","b":\#(body)}}"#
    }

    /// Sends a request (body as JSON text) without waiting; returns its id.
    @discardableResult
    func send(_ action: String, _ body: String = "{}") async throws -> Int {
        let id = nextRequestID
        nextRequestID += 1
        try await sendMessage(Self.envelope(id: id, action: action, body: body))
        return id
    }

    /// Sends a request and waits for its response; what arrived before it stays readable
    /// through ``nextMessage()``.
    func request(
        _ action: String, _ body: String = "{}", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> RealtimeMessage {
        let id = try await send(action, body)
        let (response, before) = try await response(to: id)
        pending.append(contentsOf: before)
        return response
    }

    /// Reads until the response to `id`; returns it and the messages that came before it, in
    /// order (those are not kept for ``nextMessage()``).
    func response(to id: Int) async throws -> (response: RealtimeMessage, before: [RealtimeMessage]) {
        var before: [RealtimeMessage] = []
        while true {
            let message = try await nextMessage()
            if message.requestID == id { return (message, before) }
            before.append(message)
        }
    }

    /// Sends a ping and reads until the pong; returns what came before it. As the server
    /// handles a connection's messages in order, everything it queued before reading the ping
    /// has then arrived.
    func roundTrip() async throws -> [RealtimeMessage] {
        try await sendFrame(#"{"t":"c","d":{"t":"p","d":{}}}"#)
        var before: [RealtimeMessage] = []
        while true {
            let message = try await nextMessage()
            if message.controlType == "o" { return before }
            before.append(message)
        }
    }

    // MARK: - Receiving

    /// The next frame, as sent (chunks are not joined).
    func nextFrame() async throws -> Frame {
        if let closed { return closed }
        deadlineToken += 1
        let token = deadlineToken
        let timer = Self.deadlineTimer(continuation, token: token)
        defer { timer.cancel() }
        while let event = await events.next() {
            switch event {
            case .text(let text): return .text(text)
            case .binary: return .binary
            case .closed(let code):
                closed = .closed(code)
                return .closed(code)
            case .deadline(let fired):
                if fired == token { throw TestServerError("no frame within \(Self.deadline)") }
            }
        }
        closed = .closed(nil)
        return .closed(nil)
    }

    /// Puts `.deadline(token)` in the event stream after ``deadline``, unless cancelled first.
    private static func deadlineTimer(_ continuation: AsyncStream<Event>.Continuation, token: Int) -> Task<Void, Never> {
        Task {
            try? await Task.sleep(for: deadline)
            if !Task.isCancelled { continuation.yield(.deadline(token)) }
        }
    }

    /// The next whole message (a chunked one joined, its frame count kept); throws when the
    /// socket closes first.
    func nextMessage() async throws -> RealtimeMessage {
        if !pending.isEmpty { return pending.removeFirst() }
        guard case .text(let first) = try await nextFrame() else {
            throw TestServerError("expected a message, the socket gave \(closed.map { "\($0)" } ?? "a binary frame")")
        }
        guard first.utf8.count <= 6, let count = Int(first), count > 0 else {
            return try RealtimeMessage(first, frames: 1)
        }
        var whole = ""
        for _ in 0..<count {
            guard case .text(let chunk) = try await nextFrame() else { throw TestServerError("a chunked message was cut short") }
            #expect(chunk.utf16.count <= Self.maxFrameLength, "a chunk of \(chunk.utf16.count) characters")
            whole += chunk
        }
        return try RealtimeMessage(whole, frames: count + 1)
    }

    /// The next data push (`{"t":"d","d":{"a":…,"b":…}}`), failing on anything else.
    func nextPush(sourceLocation: SourceLocation = #_sourceLocation) async throws -> RealtimeMessage {
        let message = try await nextMessage()
        #expect(message.action != nil, "expected a push, got \(message.text)", sourceLocation: sourceLocation)
        return message
    }

    /// Reads until the socket closes; returns the messages that came first.
    func messagesUntilClosed() async throws -> [RealtimeMessage] {
        var messages = pending
        pending = []
        while true {
            switch try await nextFrame() {
            case .text(let text): messages.append(try RealtimeMessage(text, frames: 1))
            case .binary: continue
            case .closed: return messages
            }
        }
    }
}

/// One message from the server, parsed.
struct RealtimeMessage {
    let text: String
    /// How many frames carried it (1, or a count and its chunks).
    let frames: Int
    private let envelope: [String: Any]

    init(_ text: String, frames: Int) throws {
        self.text = text
        self.frames = frames
        guard let envelope = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw TestServerError("not a JSON object: \(text.prefix(200))")
        }
        self.envelope = envelope
    }

    private var inner: [String: Any]? { envelope["d"] as? [String: Any] }

    /// `h`, `o`, `e`, `s`, … for a control message; nil for a data message.
    var controlType: String? { envelope["t"] as? String == "c" ? inner?["t"] as? String : nil }
    /// A control message's payload.
    var controlData: Any? { envelope["t"] as? String == "c" ? inner?["d"] : nil }

    private var data: [String: Any]? { envelope["t"] as? String == "d" ? inner : nil }
    /// The request id a response answers.
    var requestID: Int? { data?["r"] as? Int }
    /// A push's action (`d`, `m`, `c`, `ac`).
    var action: String? { data?["a"] as? String }
    var body: [String: Any]? { data?["b"] as? [String: Any] }
    /// A response's status (`ok`, `permission_denied`, …).
    var status: String? { requestID == nil ? nil : body?["s"] as? String }
    /// A response's `d`, or a push's `d`, as canonical JSON text.
    var json: String { canonicalJSON(body?["d"] ?? NSNull()) }
    /// A response's `d` when it is a message.
    var message: String? { body?["d"] as? String }
    /// A push's path.
    var path: String? { body?["p"] as? String }
    /// A push's tag.
    var tag: Int? { body?["t"] as? Int }
}

/// JSON text with sorted keys, for comparing values whatever their key order.
func canonicalJSON(_ value: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed]) else {
        return "<not JSON>"
    }
    return String(decoding: data, as: UTF8.self)
}

/// `text`'s JSON in canonical form.
func canonicalJSON(text: String) -> String {
    guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
        return "<not JSON: \(text)>"
    }
    return canonicalJSON(value)
}

/// A WebSocket opened over a plain socket and read to its end, for exchanges too short for
/// ``RealtimeTestClient`` (whose library may miss frames a server sends and closes at once).
enum RawWebSocketExchange {
    /// The text of each text frame the server sent after its `101` answer, until it closed,
    /// and whether a close frame came; waits at most `seconds`.
    static func serverFrames(port: Int, query: String, seconds: Int = 10) throws -> (texts: [String], closeFrame: Bool) {
        let descriptor = try upgradedSocket(port: port, query: query) { descriptor in
            var timeout = timeval(tv_sec: seconds, tv_usec: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        defer { Glibc.close(descriptor) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            if count <= 0 { break }
            received += chunk[0..<count]
            // A close frame ends the exchange from the server's side.
            if frames(afterHeadersOf: received).closeFrame { break }
        }
        return frames(afterHeadersOf: received)
    }

    /// A socket connected to `/.ws?<query>` with the upgrade request sent; `prepare` sets its
    /// options before it connects.
    static func upgradedSocket(port: Int, query: String, prepare: (Int32) -> Void) throws -> Int32 {
        let descriptor = try RawHTTPConnection.connectedSocket(port: port, prepare: prepare)
        let request = "GET /.ws?\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        _ = request.withCString { send(descriptor, $0, strlen($0), 0) }
        return descriptor
    }

    /// Unmasked server frames (payloads under 64 KB) after the HTTP headers.
    private static func frames(afterHeadersOf bytes: [UInt8]) -> (texts: [String], closeFrame: Bool) {
        let end = Array("\r\n\r\n".utf8)
        guard let headerEnd = (0...(max(0, bytes.count - 4))).first(where: { bytes.count >= $0 + 4 && Array(bytes[$0..<$0 + 4]) == end })
        else { return ([], false) }
        var index = headerEnd + 4
        var texts: [String] = []
        while index + 2 <= bytes.count {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            var start = index + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            }
            guard start + length <= bytes.count else { break }
            if opcode == 0x1 { texts.append(String(decoding: bytes[start..<start + length], as: UTF8.self)) }
            if opcode == 0x8 { return (texts, true) }
            index = start + length
        }
        return (texts, false)
    }

    /// A client on a plain socket with a tiny receive buffer that never reads after the
    /// handshake: it sends masked text frames (with a zero mask) and lets the server's data pile up.
    final class StalledClient {
        private let descriptor: Int32

        init(port: Int, query: String) throws {
            descriptor = try RawWebSocketExchange.upgradedSocket(port: port, query: query) { descriptor in
                var small: Int32 = 4096
                setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            }
            // The 101 answer (and perhaps the handshake): read once, then never again.
            var chunk = [UInt8](repeating: 0, count: 1024)
            _ = recv(descriptor, &chunk, chunk.count, 0)
        }

        deinit { Glibc.close(descriptor) }

        /// One masked text frame (payload under 64 KB).
        func send(_ text: String) throws {
            let payload = Array(text.utf8)
            var frame: [UInt8] = [0x81]
            if payload.count < 126 {
                frame.append(0x80 | UInt8(payload.count))
            } else {
                frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            }
            frame += [0, 0, 0, 0] + payload
            guard Glibc.send(descriptor, frame, frame.count, 0) == frame.count else { throw TestServerError("send failed") }
        }
    }
}

