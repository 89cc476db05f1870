import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP connection to a test server that sends one raw HTTP request and reads the raw
/// response as it arrives: for streams, which URLSession on Linux cannot read incrementally.
public final class RawHTTPConnection: @unchecked Sendable {
    private let descriptor: Int32

    /// Connects to `127.0.0.1:port` and sends `request` (a whole HTTP/1.1 request).
    public init(port: Int, request: String) throws {
        descriptor = try Self.connectedSocket(port: port)
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            close(descriptor)
            throw TestServerError("send() failed")
        }
    }

    deinit { close(descriptor) }

    /// A TCP socket connected to `127.0.0.1:port`; `prepare` sets its options before it
    /// connects. The caller owns (and closes) the descriptor.
    public static func connectedSocket(port: Int, prepare: (Int32) -> Void = { _ in }) throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw TestServerError("socket() failed") }
        prepare(descriptor)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw TestServerError("connect() failed")
        }
        return descriptor
    }

    /// Sends more bytes (a request body, in pieces).
    public func sendBody(_ data: some DataProtocol) throws {
        let bytes = Array(data)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard sent > 0 else { throw TestServerError("send() failed") }
            offset += sent
        }
    }

    /// Ends the connection in both directions, as a dropped network does for the server.
    public func disconnect() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Reads until `text` has arrived (or as ``read(until:)`` gives up).
    public func read(untilContaining text: String) async -> String {
        await read(until: { $0.contains(text) })
    }

    /// Reads until `predicate` holds for everything read so far, the server closes the
    /// connection, or 30 s pass without data; returns what was read.
    ///
    /// Reads never block a thread: an in-process server shares the cooperative pool with the
    /// test, so the socket is polled and the task sleeps between polls. The socket is always
    /// polled once more after the limit: when the whole process stalled (a busy machine), the
    /// answer may have arrived while this task was not running.
    public func read(until predicate: (String) -> Bool) async -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var idleSince = ContinuousClock.now
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 { break }
            if count < 0 {
                guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { break }
                if ContinuousClock.now - idleSince >= .seconds(30) { break }
                try? await Task.sleep(for: .milliseconds(2))
                continue
            }
            idleSince = ContinuousClock.now
            received += buffer[0..<count]
            if predicate(String(decoding: received, as: UTF8.self)) { break }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
