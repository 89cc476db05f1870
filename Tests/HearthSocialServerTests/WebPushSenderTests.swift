import AsyncHTTPClient
import Foundation
import HearthSpawn
import HearthSocialServer
import NIOCore
import NIOHTTP1
import Testing

/// The sender against a real push service on loopback (`Tests/Support/push_service.py`): it
/// checks the VAPID token as push services do, decrypts each message with the subscription's
/// private key (`http_ece`), and answers as RFC 8030 says, so these tests see what a browser would.
@Suite("Web Push delivery to a push service (RFC 8030)", .timeLimit(.minutes(10)))
struct WebPushSenderTests {
    static let subject = "mailto:ops@example.com"

    /// A clock an hour ahead of the machine's, in whole seconds: the token's expiry must come
    /// from it, and the push service still takes it (less than a day ahead).
    static let clock = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 3600).rounded(.down))

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func bytes(_ base64URL: String) -> [UInt8] {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Array(Data(base64Encoded: text)!)
    }

    /// Runs `body` with a push service of its own and an HTTP client made as the sender wants,
    /// stopping both afterwards, also when `body` fails.
    static func withPushService(_ body: (PushService, HTTPClient) async throws -> Void) async throws {
        let service = try await PushService.start()
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: WebPushSender.clientConfiguration)
        do {
            try await body(service, client)
        } catch {
            try? await client.shutdown()
            await service.stop()
            throw error
        }
        try await client.shutdown()
        await service.stop()
    }

    static func sender(_ client: HTTPClient, key: VAPIDKey, timeout: Duration = .seconds(30)) throws -> WebPushSender {
        try WebPushSender(client: client, key: key, subject: subject, timeout: timeout, now: { clock })
    }

    @Test("Messages arrive decrypted byte for byte, with their TTL, urgency, topic and a 12-hour VAPID token")
    func delivered() async throws {
        try await Self.withPushService { service, client in
            let key = VAPIDKey()
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: key)
            let sender = try Self.sender(client, key: key)

            let payloads: [[UInt8]] = [
                Array(#"{"title":"Ann liked your photo","url":"/p/-Nabc"}"#.utf8),
                Array(0...255),
                [],
                Array(repeating: 0x7A, count: WebPushSender.maxPayloadBytes),
            ]
            #expect(try await sender.send(payloads[0], to: subscription, ttl: 60, urgency: .high, topic: "likes-Nabc") == .delivered)
            #expect(try await sender.send(payloads[1], to: subscription, ttl: 0, urgency: .veryLow) == .delivered)
            #expect(try await sender.send(payloads[2], to: subscription) == .delivered)
            #expect(try await sender.send(payloads[3], to: subscription, ttl: 2_419_200, urgency: .low) == .delivered)

            let messages = try await service.messages(client, id: id)
            try #require(messages.count == 4)
            #expect(messages.map { Self.bytes($0.payload) } == payloads)
            #expect(messages.map(\.ttl) == [60, 0, 86_400, 2_419_200])
            #expect(messages.map(\.urgency) == ["high", "very-low", "normal", "low"])
            #expect(messages.map(\.topic) == ["likes-Nabc", nil, nil, nil])
            for message in messages {
                #expect(message.vapid.aud == "http://127.0.0.1:\(service.port)")
                #expect(message.vapid.sub == Self.subject)
                #expect(message.vapid.exp == Self.clock.timeIntervalSince1970 + 12 * 3600)
            }
        }
    }

    @Test("A subscription the browser dropped is gone (410), and so is one the service does not know (404)")
    func gone() async throws {
        try await Self.withPushService { service, client in
            let key = VAPIDKey()
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: key)
            let sender = try Self.sender(client, key: key)
            #expect(try await sender.send(Array("first".utf8), to: subscription) == .delivered)
            try await service.unsubscribe(client, id: id)
            #expect(try await sender.send(Array("second".utf8), to: subscription) == .gone)

            let unknown = try WebPushSubscription(
                endpoint: "http://127.0.0.1:\(service.port)/push/never-made", p256dh: Self.base64URL(subscription.p256dh),
                auth: Self.base64URL(subscription.auth), allowsLoopbackHTTP: true)
            #expect(try await sender.send(Array("third".utf8), to: unknown) == .gone)
            #expect(try await service.messages(client, id: id).map { Self.bytes($0.payload) } == [Array("first".utf8)])
        }
    }

    @Test("Another server's VAPID key is refused for a subscription made for ours (403), and not retried")
    func wrongKey() async throws {
        try await Self.withPushService { service, client in
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: VAPIDKey())
            let outcome = try await Self.sender(client, key: VAPIDKey()).send(Array("hi".utf8), to: subscription)
            guard case .rejected(let status, let reason) = outcome else {
                Issue.record("expected a refusal, got \(outcome)")
                return
            }
            #expect(status == 403)
            #expect(reason.contains("VAPID"))
            #expect(reason.contains("applicationServerKey"))  // the push service's own words
            #expect(try await service.messages(client, id: id).isEmpty)
        }
    }

    @Test("A message the subscription's keys cannot decrypt is refused (400)")
    func undecryptable() async throws {
        try await Self.withPushService { service, client in
            let key = VAPIDKey()
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: key)
            // The right endpoint, another browser's keys: encrypted for someone else.
            let (other, _) = try await service.subscribe(client, applicationServerKey: key)
            let mixed = try WebPushSubscription(
                endpoint: subscription.endpoint.absoluteString, p256dh: Self.base64URL(other.p256dh), auth: Self.base64URL(other.auth),
                allowsLoopbackHTTP: true)
            let outcome = try await Self.sender(client, key: key).send(Array("hi".utf8), to: mixed)
            guard case .rejected(400, let reason) = outcome else {
                Issue.record("expected a 400 refusal, got \(outcome)")
                return
            }
            #expect(reason.contains("does not decrypt"))
            #expect(try await service.messages(client, id: id).isEmpty)
        }
    }

    @Test("A payload over one record, a bad topic or a negative TTL is refused before anything is sent")
    func refusedBeforeSending() async throws {
        try await Self.withPushService { service, client in
            let key = VAPIDKey()
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: key)
            // Were anything sent, this answer would be used up; it is still there at the end.
            try await service.script(client, id: id, answers: [.init(status: 500)])
            let sender = try Self.sender(client, key: key)
            let oversize = [UInt8](repeating: 0x61, count: WebPushSender.maxPayloadBytes + 1)
            #expect(WebPushSender.maxPayloadBytes == 3993)
            await #expect(throws: WebPushSender.Problem.payloadTooLarge(3994)) { try await sender.send(oversize, to: subscription) }
            await #expect(throws: WebPushSender.Problem.badTopic("no spaces")) {
                try await sender.send(Array("x".utf8), to: subscription, topic: "no spaces")
            }
            await #expect(throws: WebPushSender.Problem.badTopic(String(repeating: "a", count: 33))) {
                try await sender.send(Array("x".utf8), to: subscription, topic: String(repeating: "a", count: 33))
            }
            await #expect(throws: WebPushSender.Problem.badTTL(-1)) { try await sender.send(Array("x".utf8), to: subscription, ttl: -1) }

            #expect(
                try await sender.send(Array("x".utf8), to: subscription)
                    == .retryLater(after: nil, reason: #"HTTP 500: the push service failed (the push service said: {"error": "scripted"})"#))
            #expect(try await service.messages(client, id: id).isEmpty)
        }
    }

    @Test("Throttled or failing: try again later, after Retry-After (seconds or a date) when given")
    func retryLater() async throws {
        try await Self.withPushService { service, client in
            let key = VAPIDKey()
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: key)
            let format = DateFormatter()
            format.locale = Locale(identifier: "en_US_POSIX")
            format.timeZone = TimeZone(identifier: "GMT")
            format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            try await service.script(client, id: id, answers: [
                .init(status: 429, headers: ["Retry-After": "7"]),
                .init(status: 503),
                .init(status: 502, headers: ["Retry-After": format.string(from: Self.clock.addingTimeInterval(120))]),
            ])
            let sender = try Self.sender(client, key: key)
            var outcomes: [WebPushSender.Outcome] = []
            for message in ["1", "2", "3"] {
                outcomes.append(try await sender.send(Array(message.utf8), to: subscription))
            }
            let delays = outcomes.map { outcome -> Duration?? in
                if case .retryLater(let after, _) = outcome { return .some(after) }
                return nil
            }
            #expect(delays == [.some(.seconds(7)), .some(nil), .some(.seconds(120))])
            // Once the push service is back, the message goes through.
            #expect(try await sender.send(Array("4".utf8), to: subscription) == .delivered)
        }
    }

    @Test("A redirect is not followed: the message does not go where it points")
    func redirect() async throws {
        try await Self.withPushService { service, client in
            let key = VAPIDKey()
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: key)
            let (_, elsewhere) = try await service.subscribe(client, applicationServerKey: key)
            try await service.script(client, id: id, answers: [
                .init(status: 307, headers: ["Location": "http://127.0.0.1:\(service.port)/push/\(elsewhere)"]),
                .init(status: 413),
            ])
            let sender = try Self.sender(client, key: key)
            let outcome = try await sender.send(Array("hi".utf8), to: subscription)
            guard case .rejected(307, let reason) = outcome else {
                Issue.record("expected the redirect refused, got \(outcome)")
                return
            }
            #expect(reason.contains("not followed"))
            #expect(try await service.messages(client, id: elsewhere).isEmpty)
            // And a 413 from the push service is a refusal too.
            guard case .rejected(413, _) = try await sender.send(Array("hi".utf8), to: subscription) else {
                Issue.record("expected 413 refused")
                return
            }
        }
    }

    @Test("No answer within the timeout, or no push service at all: try again later")
    func unreachable() async throws {
        try await Self.withPushService { service, client in
            let key = VAPIDKey()
            let (subscription, id) = try await service.subscribe(client, applicationServerKey: key)
            // Far longer than the sender waits, so even a starved machine sees the timeout first.
            try await service.script(client, id: id, answers: [.init(status: 201, delay: 60)])
            let hurried = try Self.sender(client, key: key, timeout: .milliseconds(500))
            let outcome = try await hurried.send(Array("slow".utf8), to: subscription)
            guard case .retryLater(nil, _) = outcome else {
                Issue.record("expected to retry later, got \(outcome)")
                return
            }

            // Port 1 on loopback: nothing listens there.
            let nowhere = try WebPushSubscription(
                endpoint: "http://127.0.0.1:1/push/x", p256dh: Self.base64URL(subscription.p256dh), auth: Self.base64URL(subscription.auth),
                allowsLoopbackHTTP: true)
            guard case .retryLater(nil, let reason) = try await hurried.send(Array("x".utf8), to: nowhere) else {
                Issue.record("expected to retry later")
                return
            }
            #expect(reason.contains("could not be reached"))
        }
    }

    @Test("The VAPID subject must be a mailto: or https: contact")
    func subject() async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: WebPushSender.clientConfiguration)
        #expect(throws: WebPushSender.Problem.badSubject("ops@example.com")) {
            try WebPushSender(client: client, key: VAPIDKey(), subject: "ops@example.com", now: { Date() })
        }
        #expect(throws: WebPushSender.Problem.badSubject("mailto:")) {
            try WebPushSender(client: client, key: VAPIDKey(), subject: "mailto:", now: { Date() })
        }
        #expect(throws: Never.self) { try WebPushSender(client: client, key: VAPIDKey(), subject: "https://example.com/contact", now: { Date() }) }
        try await client.shutdown()
    }
}

/// `Tests/Support/push_service.py` run as a child process, on a port of its own.
final class PushService: Sendable {
    /// Its standard input is kept open: the service stops by itself when this process ends and
    /// the pipe closes.
    let process: ChildProcess
    let port: Int

    struct Message: Decodable {
        struct Claims: Decodable {
            var aud: String
            var sub: String
            var exp: Double
        }

        var payload: String
        var ttl: Int
        var urgency: String
        var topic: String?
        var vapid: Claims
    }

    /// An answer the service gives the next push instead of handling it.
    struct Answer: Encodable {
        var status: Int
        var headers: [String: String] = [:]
        var delay: Double = 0
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Starts the service and waits for its `listening <port>` line.
    static func start() async throws -> PushService {
        let python = repository.appendingPathComponent(".venv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            throw PushServiceError("no \(python.path): make the venv (python3 -m venv .venv; .venv/bin/pip install http_ece cryptography)")
        }
        let process = try ChildProcess(
            python, arguments: [repository.appendingPathComponent("Tests/Support/push_service.py").path, "--port", "0"], input: .pipe,
            output: .pipe)
        // Give up on a service that never says it listens: stopping it ends the read below.
        let watchdog = DispatchWorkItem { process.terminate() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 60, execute: watchdog)
        // Read on a thread of its own: blocking one of the test pool's few threads would stall
        // other tests.
        let output = process.output!
        let line: String? = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var seen = ""
                while !seen.contains("\n") {
                    let chunk = output.availableData
                    if chunk.isEmpty { break }
                    seen += String(decoding: chunk, as: UTF8.self)
                }
                continuation.resume(returning: seen.split(separator: "\n").first.map(String.init))
            }
        }
        watchdog.cancel()
        guard let line, line.hasPrefix("listening "), let port = Int(line.dropFirst("listening ".count)) else {
            process.terminate()
            _ = await process.exit()
            throw PushServiceError("the push service did not start (it printed \(String(describing: line)))")
        }
        return PushService(process: process, port: port)
    }

    private init(process: ChildProcess, port: Int) {
        self.process = process
        self.port = port
    }

    /// Stops the service and waits for it to end.
    func stop() async {
        // The end of its input stops it; SIGTERM too, in case it is stuck.
        try? process.input?.close()
        process.terminate()
        _ = await process.exit()
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// A new subscription, as a browser's `pushManager.subscribe({applicationServerKey})` gives
    /// it, and its ID at the service.
    func subscribe(_ client: HTTPClient, applicationServerKey key: VAPIDKey) async throws -> (WebPushSubscription, String) {
        let options = Data(#"{"applicationServerKey": "\#(key.publicKeyBase64URL)"}"#.utf8)
        let body = try await call(client, .POST, "/subscribe", body: options, expect: 201)
        let subscription = try WebPushSubscription(json: body, allowsLoopbackHTTP: true)
        return (subscription, subscription.endpoint.lastPathComponent)
    }

    func unsubscribe(_ client: HTTPClient, id: String) async throws {
        _ = try await call(client, .DELETE, "/subscriptions/\(id)", expect: 204)
    }

    func messages(_ client: HTTPClient, id: String) async throws -> [Message] {
        try JSONDecoder().decode([Message].self, from: try await call(client, .GET, "/messages/\(id)", expect: 200))
    }

    func script(_ client: HTTPClient, id: String, answers: [Answer]) async throws {
        _ = try await call(client, .POST, "/subscriptions/\(id)/answers", body: try JSONEncoder().encode(answers), expect: 204)
    }

    private func call(_ client: HTTPClient, _ method: HTTPMethod, _ path: String, body: Data? = nil, expect: UInt) async throws -> Data {
        var request = HTTPClientRequest(url: url(path))
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let data = Data(try await response.body.collect(upTo: 1 << 20).readableBytesView)
        guard response.status.code == expect else {
            throw PushServiceError("\(method) \(path): HTTP \(response.status.code) \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }
}

struct PushServiceError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
