import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import HearthFunctions
import HearthOutbox
import Hummingbird
import NIOCore
import Testing

/// Events POSTed over HTTP (``HTTPEventInvoker``) to a real server on loopback: what each kind
/// of answer (or its absence) comes to, and the request itself: the structured CloudEvent with
/// its content type and Standard Webhooks signature headers that verify.
@Suite(.timeLimit(.minutes(1)))
struct WebhookInvokerTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    static let now: Int64 = 1_700_000_123_456

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
            url: url, signer: signed ? try WebhookSigner(secrets: [secret], function: "hook") : nil, client: HTTPClient.shared,
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
        // Bound and released at once: nothing listens there. (The shared client keeps trying
        // to connect until the timeout, then reports the refusal: a short timeout keeps the
        // test short.)
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
        let result = try await Self.invoker(server.url("hang")).deliver(Self.event(), timeout: .milliseconds(300))
        #expect(server.hanging.all.count == 1)
        await server.stop()
        guard case .failed(let reason) = result else {
            Issue.record("not a failure: \(result)")
            return
        }
        #expect(reason.hasPrefix("no answer within"))
    }
}
