import AsyncHTTPClient
import Foundation
import HearthFunctions
import NIOCore
import NIOHTTP1

/// Sends one push message to one browser's push service (RFC 8030 §5): a POST to the
/// subscription's endpoint of the message encrypted for that browser (RFC 8291, ``WebPushEncryption``),
/// with its `TTL`, `Urgency` and `Topic`, and the server's VAPID `Authorization` (RFC 8292,
/// ``VAPIDKey``). The push service's answer becomes an ``Outcome`` that tells the caller what to
/// do next: nothing, remove the subscription, give up on the message, or try again later.
///
/// ```swift
/// let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: WebPushSender.clientConfiguration)
/// let sender = try WebPushSender(client: client, key: key, subject: "mailto:ops@example.com", now: { Date() })
/// switch try await sender.send(Array("Ann liked your photo".utf8), to: subscription, ttl: 3600) {
/// case .gone: remove(subscription.id)
/// …
/// }
/// ```
public struct WebPushSender: Sendable {
    /// How soon the push service should deliver (RFC 8030 §5.3): a browser on battery may wait
    /// for `normal` and below.
    public enum Urgency: String, Sendable, CaseIterable {
        case veryLow = "very-low"
        case low
        case normal
        case high
    }

    /// What the push service made of a message.
    public enum Outcome: Sendable, Hashable {
        /// Accepted (201 Created, or any 2xx): the push service will deliver it.
        case delivered
        /// The subscription no longer exists (404, 410): remove it; it will not come back.
        case gone
        /// Refused for good (400, 401, 403, 413, a redirect, any other answer): do not send it
        /// again as it is. `reason` says why, with the start of the push service's own answer.
        case rejected(status: Int, reason: String)
        /// Not taken now (429, 5xx, no answer, no connection): try again, after `after` when
        /// the push service said (`Retry-After`).
        case retryLater(after: Duration?, reason: String)
    }

    /// Why a message was not sent at all (nothing was sent to the push service).
    public enum Problem: Error, Hashable, CustomStringConvertible {
        /// The payload (byte count given) does not fit one 4,096-byte record.
        case payloadTooLarge(Int)
        /// The TTL (given) is negative.
        case badTTL(Int)
        /// The topic (given) is not 1 to 32 characters of the base64url alphabet (RFC 8030 §5.4).
        case badTopic(String)
        /// The VAPID subject (given) is not a `mailto:` or `https:` URI (RFC 8292 §2.1).
        case badSubject(String)
        /// The message could not be encrypted or the VAPID token not signed (what went wrong).
        case cannotPrepare(String)

        public var description: String {
            switch self {
            case .payloadTooLarge(let count):
                "a push message holds at most \(WebPushSender.maxPayloadBytes) bytes, not \(count)"
            case .badTTL(let ttl): "the TTL is seconds, 0 or more, not \(ttl)"
            case .badTopic(let topic):
                "a push message's topic is 1 to 32 characters of A-Z, a-z, 0-9, - and _, not \"\(topic.prefix(40))\""
            case .badSubject(let subject): "the VAPID subject must be a mailto: or https: URI, not \"\(subject.prefix(80))\""
            case .cannotPrepare(let detail): "the push message could not be prepared: \(detail)"
            }
        }
    }

    /// The largest payload: what one 4,096-byte `aes128gcm` record holds (RFC 8291 §4).
    public static let maxPayloadBytes = WebPushEncryption.maxPlaintextBytes
    /// How long each VAPID token is good for: RFC 8292 §2 allows at most a day; half of it
    /// leaves room for a push service whose clock runs ahead or behind.
    public static let tokenLifetime: TimeInterval = 12 * 3600

    /// How the HTTP client given to a sender should be made: redirects are not followed (a push
    /// endpoint that redirects is wrong, and following it would send the VAPID token and the
    /// message elsewhere), connections give up after 10 seconds, and answers are not decompressed.
    public static var clientConfiguration: HTTPClient.Configuration {
        HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10)), decompression: .disabled)
    }

    let client: HTTPClient
    let key: VAPIDKey
    let subject: String
    let timeout: Duration
    let now: @Sendable () -> Date

    /// - Parameters:
    ///   - client: made with ``clientConfiguration`` (it must not follow redirects); not shut
    ///     down here.
    ///   - key: the server's VAPID key, the one browsers subscribed with.
    ///   - subject: the operator's contact for push services, `mailto:…` or `https://…`.
    ///   - timeout: how long one push may take, from connecting to the answer.
    ///   - now: the time, for the VAPID token's expiry.
    /// - Throws: ``Problem/badSubject(_:)``.
    public init(
        client: HTTPClient, key: VAPIDKey, subject: String, timeout: Duration = .seconds(30), now: @escaping @Sendable () -> Date
    ) throws(Problem) {
        guard ["mailto:", "https://"].contains(where: { subject.hasPrefix($0) && subject.count > $0.count })
        else { throw Problem.badSubject(subject) }
        self.client = client
        self.key = key
        self.subject = subject
        self.timeout = timeout
        self.now = now
    }

    /// Encrypts `payload` for `subscription` and POSTs it to its endpoint.
    ///
    /// - Parameters:
    ///   - ttl: how many seconds the push service keeps the message for a browser that is not
    ///     connected (0: deliver now or drop it).
    ///   - urgency: how soon it must reach the browser.
    ///   - topic: a message with the same topic replaces one the push service still holds
    ///     (1 to 32 base64url characters).
    /// - Returns: what the push service made of it; errors of the network are an outcome too
    ///   (``Outcome/retryLater(after:reason:)``).
    /// - Throws: ``Problem`` when nothing could be sent: checked before connecting.
    public func send(
        _ payload: [UInt8], to subscription: WebPushSubscription, ttl: Int = 86_400, urgency: Urgency = .normal,
        topic: String? = nil
    ) async throws(Problem) -> Outcome {
        guard payload.count <= Self.maxPayloadBytes else { throw Problem.payloadTooLarge(payload.count) }
        guard ttl >= 0 else { throw Problem.badTTL(ttl) }
        if let topic, !Self.isValidTopic(topic) { throw Problem.badTopic(topic) }

        let body: [UInt8]
        let authorization: String
        do {
            body = try WebPushEncryption.encrypt(payload, p256dh: subscription.p256dh, auth: subscription.auth)
            // Whole seconds: some push services refuse a fractional `exp`.
            let expires = Date(timeIntervalSince1970: (now().timeIntervalSince1970 + Self.tokenLifetime).rounded(.down))
            authorization = try await key.authorization(for: subscription.endpoint, subject: subject, expires: expires)
        } catch {
            throw Problem.cannotPrepare("\(error)")
        }

        var request = HTTPClientRequest(url: subscription.endpoint.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.headers.add(name: "Content-Encoding", value: "aes128gcm")
        request.headers.add(name: "TTL", value: String(ttl))
        request.headers.add(name: "Urgency", value: urgency.rawValue)
        if let topic { request.headers.add(name: "Topic", value: topic) }
        request.headers.add(name: "Authorization", value: authorization)
        request.body = .bytes(body)

        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: .now() + TimeAmount(timeout))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return .retryLater(after: nil, reason: "no answer from the push service within \(timeout)")
        } catch {
            return .retryLater(after: nil, reason: "the push service could not be reached: \(error)")
        }
        // Read (the start of) the answer, so the connection can be used again and a refusal
        // can say what the push service said.
        let answer = await Self.beginning(of: response.body, upTo: 1024)
        return outcome(status: Int(response.status.code), headers: response.headers, answer: answer, redirected: response.history.count > 1)
    }

    /// The outcome of an answer with `status`.
    func outcome(status: Int, headers: HTTPHeaders, answer: String, redirected: Bool) -> Outcome {
        let said = answer.isEmpty ? "" : " (the push service said: \(answer))"
        if redirected {
            return .rejected(status: status, reason: "the HTTP client followed a redirect; make it with WebPushSender.clientConfiguration")
        }
        switch status {
        case 200..<300:
            return .delivered
        case 404, 410:
            return .gone
        case 429, 500..<600:
            let what = status == 429 ? "too many messages" : "the push service failed"
            return .retryLater(after: retryAfter(headers), reason: "HTTP \(status): \(what)\(said)")
        case 300..<400:
            let target = headers.first(name: "Location").map { " to \($0.prefix(200))" } ?? ""
            return .rejected(status: status, reason: "HTTP \(status): the push service redirects\(target); redirects are not followed")
        case 400:
            return .rejected(status: status, reason: "HTTP 400: the push service found the message malformed\(said)")
        case 401:
            return .rejected(status: status, reason: "HTTP 401: the push service wants VAPID authorization it could use\(said)")
        case 403:
            return .rejected(
                status: status,
                reason: "HTTP 403: the push service refused the VAPID authorization "
                    + "(not the key the browser subscribed with, or a token it does not accept)\(said)")
        case 413:
            return .rejected(status: status, reason: "HTTP 413: the message is larger than the push service takes\(said)")
        default:
            return .rejected(status: status, reason: "HTTP \(status)\(said)")
        }
    }

    /// `Retry-After` (RFC 9110 §10.2.3): seconds, or a date (counted from ``now``).
    func retryAfter(_ headers: HTTPHeaders) -> Duration? {
        guard let value = headers.first(name: "Retry-After")?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber) { return Int(value).map { .seconds($0) } }
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "GMT")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = format.date(from: value) else { return nil }
        return .seconds(max(0, Int(date.timeIntervalSince(now()).rounded(.up))))
    }

    /// RFC 8030 §5.4: at most 32 characters of the URL- and filename-safe base64 alphabet.
    static func isValidTopic(_ topic: String) -> Bool {
        (1...32).contains(topic.utf8.count)
            && topic.utf8.allSatisfy { byte in
                (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
            }
    }

    /// The first `limit` bytes or so of an answer, as printable text on one line; reads no further.
    static func beginning(of body: HTTPClientResponse.Body, upTo limit: Int) async -> String {
        let collected = await HTTPEventInvoker.beginning(of: body, upTo: limit)
        let text = String(decoding: collected.readableBytesView.prefix(limit), as: UTF8.self)
        return String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
            .trimmingCharacters(in: .whitespaces)
    }
}
