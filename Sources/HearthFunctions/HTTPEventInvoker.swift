import AsyncHTTPClient
import Foundation
import HearthOutbox
import NIOCore
import NIOHTTP1
import NIOPosix

/// Delivers events over HTTP: a POST of the structured CloudEvent, to a webhook (signed by
/// ``WebhookSigner``) or to a function's own process (unsigned: it is reached on loopback only).
/// A 2xx answer is delivered. When no connection could be made (refused, timed out, the name
/// did not resolve), the request was never sent: unreachable (waits). Anything else is a
/// failure (retried, then dead-lettered): another answer, none within the timeout, or the
/// connection lost once it was made (a worker that died handling the event, a reset, TLS),
/// since the function may have seen the event and an event that kills it must not hold its
/// queue forever.
public struct HTTPEventInvoker: EventInvoker {
    public let url: String
    let signer: WebhookSigner?
    let client: HTTPClient
    let now: @Sendable () -> Int64

    /// - Parameters:
    ///   - client: the functions' HTTP client (``HTTPClient/Configuration/functions``: its 3xx
    ///     answers are failures, not followed); not shut down here.
    ///   - now: milliseconds since the epoch, for the signature's timestamp.
    public init(url: String, signer: WebhookSigner?, client: HTTPClient, now: @escaping @Sendable () -> Int64) {
        self.url = url
        self.signer = signer
        self.client = client
        self.now = now
    }

    public func deliver(_ event: StoredEvent, timeout: Duration) async -> DeliveryResult {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/cloudevents+json; charset=utf-8")
        request.headers.add(name: "User-Agent", value: "Hearth-Webhooks")
        for (name, value) in signer?.headers(id: event.event.id, timestamp: now() / 1000, body: event.event.body) ?? [] {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: event.event.body))
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        // A connection kept from an earlier delivery may have been closed by the other side
        // since (a function's worker restarted, an idle timeout): that is no answer about this
        // event, so it is sent once more, on a new connection, before it counts as a failure.
        var tries = 0
        while true {
            tries += 1
            do {
                let response = try await client.execute(request, deadline: deadline)
                // Read (a bounded part of) the answer so the connection can be used again.
                let answer = await Self.beginning(of: response.body, upTo: 4096)
                if (200..<300).contains(response.status.code) { return .delivered }
                let text = String(buffer: answer)
                return .failed("HTTP \(response.status.code)\(text.isEmpty ? "" : ": \(text.prefix(200))")")
            } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
                return .failed("no answer within \(timeout)")
            } catch {
                if Self.neverSent(error) { return .unreachable("\(error)") }
                if tries == 1, Self.connectionDropped(error), !Task.isCancelled { continue }
                return .failed("\(error)")
            }
        }
    }

    /// True for a connection the other side closed or reset under the request.
    static func connectionDropped(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError:
            return error == .remoteConnectionClosed
        case let error as ChannelError:
            return error == .ioOnClosedChannel || error == .eof || error == .outputClosed
        case let error as IOError:
            return [ECONNRESET, EPIPE].contains(error.errnoCode)
        default:
            return false
        }
    }

    /// True for the errors of a request that never left: no connection could be made. (The
    /// connection pool reports its last connection failure, or a connect timeout, for a request
    /// still waiting for a connection at its deadline.)
    static func neverSent(_ error: any Error) -> Bool {
        switch error {
        case let error as HTTPClientError:
            return error == .connectTimeout || error == .getConnectionFromPoolTimeout
        case is NIOConnectionError, is SocketAddressError:
            return true
        case let error as ChannelError:
            if case .connectTimeout = error { return true }
            return false
        case let error as IOError:
            return [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL].contains(error.errnoCode)
        default:
            return false
        }
    }

    /// The first `limit` bytes or so of an answer's body (all of it when shorter), reading no
    /// further: a long error page still shows how it starts.
    public static func beginning(of body: HTTPClientResponse.Body, upTo limit: Int) async -> ByteBuffer {
        var collected = ByteBuffer()
        do {
            for try await chunk in body {
                collected.writeImmutableBuffer(chunk)
                if collected.readableBytes >= limit { break }
            }
        } catch {}
        return collected
    }
}
