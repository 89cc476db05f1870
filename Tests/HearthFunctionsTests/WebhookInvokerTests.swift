import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
@testable import HearthFunctions
import HearthOutbox
import Hummingbird
import NIOCore
import Testing

/// Events POSTed over HTTP (``HTTPEventInvoker``) to a real server on loopback: what each kind
/// of answer (or its absence) comes to, and the request itself: the structured CloudEvent with
/// its content type and Standard Webhooks signature headers that verify. Also the functions'
/// HTTP client: no read timeout, redirects and compressed answers passed on as they came.
@Suite(.timeLimit(.minutes(10)))
struct WebhookInvokerTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let now: Int64 = 1_700_000_123_456
    /// The functions' client, as the server makes it (kept for the whole test process).
    static let client = HTTPClient.makeForFunctions()
    /// "hello", gzipped.
    static let gzippedHello: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00, 0x86, 0xa6, 0x10,
        0x36, 0x05, 0x00, 0x00, 0x00,
    ]

    /// What the server received at `/ok`.
    struct Received: Sendable {
        var headers: HTTPFields
        var body: [UInt8]
    }

    /// A Hummingbird server on 127.0.0.1 with a route for each kind of answer.
    final class LoopbackServer: Sendable {
        let received: Collected<Received>
        /// Requests `/hang` got (it never answers until the server stops).
        let hanging: Collected<Void>
        private let release: AsyncStream<Void>.Continuation
        private let task: Task<Void, any Error>
        let port: Int

        init() async throws {
            let received = Collected<Received>()
            let hanging = Collected<Void>()
            self.received = received
            self.hanging = hanging
            let (never, release) = AsyncStream.makeStream(of: Void.self)
            self.release = release
            let router = Router()
            router.post("ok") { request, _ -> Response in
                let body = try await request.body.collect(upTo: 1 << 20)
                received.append(Received(headers: request.headers, body: Array(buffer: body)))
                return Response(status: .noContent)
            }
            router.post("fail") { _, _ -> Response in
                Response(status: .internalServerError, body: ResponseBody(byteBuffer: ByteBuffer(string: "database on fire")))
            }
            router.post("big-fail") { _, _ -> Response in
                let page = "<html>" + String(repeating: "sorry ", count: 2000) + "</html>"
                return Response(status: .badGateway, body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
            }
            router.post("moved") { _, _ -> Response in
                Response(status: .temporaryRedirect, headers: [.location: "/ok"])
            }
            router.get("gzipped") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentEncoding: "gzip", .contentType: "text/plain"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: WebhookInvokerTests.gzippedHello)))
            }
            router.post("hang") { _, _ -> Response in
                hanging.append(())
                for await _ in never {}
                return Response(status: .ok)
            }
            let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
            let app = Application(
                router: router, configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: quietLogger)
            task = Task { try await app.runService(gracefulShutdownSignals: []) }
            var iterator = ports.makeAsyncIterator()
            port = await iterator.next() ?? 0
        }

        func url(_ route: String) -> String { "http://127.0.0.1:\(port)/\(route)" }

        func stop() async {
            release.finish()
            task.cancel()
            _ = try? await task.value
        }
    }

    static func event(id: String = "evt-1") -> StoredEvent {
        let cloudEvent = CloudEvent(
            id: id, source: "//firebasedatabase.googleapis.com/projects/_/locations/us-central1/instances/default",
            type: DatabaseTrigger.Change.written.eventType, subject: "refs/posts/p1", time: now - 5,
            extensions: ["ref": "posts/p1", "instance": "default"], data: Array(#"{"data":null,"delta":{"text":"héllo"}}"#.utf8))
        return StoredEvent(sequence: 1, event: OutboxEvent(subscriber: "hook", id: id, body: cloudEvent.structured(), time: now - 5), attempts: 0)
    }

    static func invoker(_ url: String, signed: Bool = true) throws -> HTTPEventInvoker {
        HTTPEventInvoker(
            url: url, signer: signed ? try WebhookSigner(secrets: [secret], function: "hook") : nil, client: client,
            now: { now })
    }

    @Test func a2xxAnswerIsDeliveredAndTheRequestIsASignedCloudEvent() async throws {
        let server = try await LoopbackServer()
        let event = Self.event()
        let result = try await Self.invoker(server.url("ok")).deliver(event, timeout: .seconds(10))
        await server.stop()
        #expect(result == .delivered)
        let received = try #require(server.received.all.first)
        #expect(received.body == event.event.body)
        #expect(received.headers[.contentType]?.hasPrefix("application/cloudevents+json") == true)
        let id = try #require(received.headers[HTTPField.Name("webhook-id")!])
        let timestamp = try #require(received.headers[HTTPField.Name("webhook-timestamp")!])
        let signature = try #require(received.headers[HTTPField.Name("webhook-signature")!])
        #expect(id == "evt-1")
        #expect(timestamp == "1700000123")
        let key = SymmetricKey(data: try #require(Data(base64Encoded: String(Self.secret.dropFirst(6)))))
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(id).\(timestamp).".utf8) + received.body, using: key)
        #expect(signature == "v1," + Data(mac).base64EncodedString())
        // And it reads back as the event that was sent.
        let sent = try CloudEvent(structured: received.body)
        #expect(sent.id == "evt-1" && sent.subject == "refs/posts/p1")
    }

    @Test func anUnsignedInvokerSendsNoSignatureHeaders() async throws {
        let server = try await LoopbackServer()
        let result = try await Self.invoker(server.url("ok"), signed: false).deliver(Self.event(), timeout: .seconds(10))
        await server.stop()
        #expect(result == .delivered)
        let received = try #require(server.received.all.first)
        #expect(received.headers[HTTPField.Name("webhook-signature")!] == nil)
        #expect(received.headers[HTTPField.Name("webhook-id")!] == nil)
    }

    @Test func a500IsAFailureNamingTheStatusAndTheAnswer() async throws {
        let server = try await LoopbackServer()
        let result = try await Self.invoker(server.url("fail")).deliver(Self.event(), timeout: .seconds(10))
        await server.stop()
        #expect(result == .failed("HTTP 500: database on fire"))
    }

    @Test func aLongErrorPageIsAFailureWithItsBeginning() async throws {
        let server = try await LoopbackServer()
        let result = try await Self.invoker(server.url("big-fail")).deliver(Self.event(), timeout: .seconds(10))
        await server.stop()
        guard case .failed(let reason) = result else {
            Issue.record("not a failure: \(result)")
            return
        }
        #expect(reason.hasPrefix("HTTP 502: <html>sorry sorry"))
        #expect(reason.count <= 220)
    }

    @Test func aMissingRouteIsAFailure() async throws {
        let server = try await LoopbackServer()
        let result = try await Self.invoker(server.url("nowhere")).deliver(Self.event(), timeout: .seconds(10))
        await server.stop()
        guard case .failed(let reason) = result else {
            Issue.record("not a failure: \(result)")
            return
        }
        #expect(reason.hasPrefix("HTTP 404"))
    }

    @Test func aRefusedConnectionIsUnreachable() async throws {
        // Bound and released at once: nothing listens there. (The client keeps trying to
        // connect until the timeout, then reports the refusal: a short timeout keeps the test
        // short.)
        let port = try LoopbackPort.free()
        let result = try await Self.invoker("http://127.0.0.1:\(port)/ok").deliver(Self.event(), timeout: .milliseconds(500))
        guard case .unreachable(let reason) = result else {
            Issue.record("not unreachable: \(result)")
            return
        }
        #expect(reason.localizedCaseInsensitiveContains("refused"))
    }

    @Test func aServerThatNeverAnswersIsAFailureAfterTheTimeout() async throws {
        let server = try await LoopbackServer()
        // Long enough for the request to reach the server on a loaded machine (CI builds the
        // fuzzers beside this stage), so the answer is what times out, not the connection.
        let result = try await Self.invoker(server.url("hang")).deliver(Self.event(), timeout: .seconds(3))
        #expect(server.hanging.all.count == 1)
        await server.stop()
        guard case .failed(let reason) = result else {
            Issue.record("not a failure: \(result)")
            return
        }
        #expect(reason.hasPrefix("no answer within"))
    }

    @Test func aConnectionClosedInTheMiddleOfTheRequestIsAFailure() async throws {
        // A worker that dies handling the event: it may have seen it, and an event that kills
        // it every time must use up its retries, not hold its queue forever.
        let listener = try ClosingListener()
        defer { listener.stop() }
        let result = try await Self.invoker("http://127.0.0.1:\(listener.port)/ok").deliver(Self.event(), timeout: .seconds(10))
        guard case .failed = result else {
            Issue.record("not a failure: \(result)")
            return
        }
        // Sent once more on a new connection first (a kept connection may just have gone stale),
        // and no more.
        #expect(listener.accepted.all.count == 2)
    }

    @Test func onlyErrorsOfARequestNeverSentAreUnreachable() {
        #expect(HTTPEventInvoker.neverSent(HTTPClientError.connectTimeout))
        #expect(HTTPEventInvoker.neverSent(HTTPClientError.getConnectionFromPoolTimeout))
        #expect(HTTPEventInvoker.neverSent(IOError(errnoCode: ECONNREFUSED, reason: "connect")))
        #expect(HTTPEventInvoker.neverSent(ChannelError.connectTimeout(.seconds(10))))
        #expect(!HTTPEventInvoker.neverSent(HTTPClientError.remoteConnectionClosed))
        #expect(!HTTPEventInvoker.neverSent(IOError(errnoCode: ECONNRESET, reason: "read")))
        #expect(!HTTPEventInvoker.neverSent(HTTPClientError.invalidURL))
        #expect(!HTTPEventInvoker.neverSent(ChannelError.ioOnClosedChannel))
    }

    @Test func aRedirectIsAFailureAndIsNotFollowed() async throws {
        let server = try await LoopbackServer()
        let result = try await Self.invoker(server.url("moved")).deliver(Self.event(), timeout: .seconds(10))
        await server.stop()
        #expect(result == .failed("HTTP 307"))
        #expect(server.received.all.isEmpty)
    }

    @Test func theFunctionsClientWaitsAsLongAsTheDeadlineAndPassesAnswersOnAsTheyCame() async throws {
        // No read timeout of its own: a function silent for longer than any such limit (the
        // shared client's is 90 s) is cut at its own deadline only.
        #expect(HTTPClient.Configuration.functions.timeout.read == nil)
        let server = try await LoopbackServer()
        let response = try await Self.client.execute(HTTPClientRequest(url: server.url("gzipped")), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        await server.stop()
        // Still compressed, as its Content-Encoding says (the shared client would inflate it).
        #expect(Array(buffer: body) == Self.gzippedHello)
    }
}

/// A TCP listener on 127.0.0.1 that reads the start of each request and closes the connection
/// without answering. Accepts on a thread of its own (blocking calls, off the cooperative pool).
final class ClosingListener: @unchecked Sendable {
    let port: Int
    /// One entry per connection accepted.
    let accepted = Collected<Void>()
    private let descriptor: Int32

    init() throws {
        #if canImport(Glibc)
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listening = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listening, 8) == 0 else {
            close(listening)
            throw TestError("cannot listen on 127.0.0.1")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) }
        }
        descriptor = listening
        port = Int(UInt16(bigEndian: address.sin_port))
        let accepted = accepted
        Thread {
            while true {
                let connection = accept(listening, nil, nil)
                guard connection >= 0 else { return }
                accepted.append(())
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = recv(connection, &buffer, buffer.count, 0)
                close(connection)
            }
        }.start()
    }

    /// Stops accepting (the thread's `accept` fails and it ends).
    func stop() {
        shutdown(descriptor, Int32(SHUT_RDWR))
        close(descriptor)
    }

    struct TestError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

