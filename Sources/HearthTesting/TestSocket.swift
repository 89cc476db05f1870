import Foundation

/// A plain TCP connection to a test server from a chosen loopback address, for tests of how
/// the server treats connections: it sends bytes as told and waits for the server to answer or
/// close. Waits block a thread of Dispatch's (not the cooperative pool the in-process server
/// shares) in `recv` until bytes or the end arrive; a receive timeout bounds them.
public final class TestSocket: @unchecked Sendable {
    /// The longest wait for the server: far past any timeout a test sets, and past the stalls
    /// of a whole suite running on two shared cores.
    public static let limit = Duration.seconds(30)

    private let descriptor: Int32

    /// Connects to `127.0.0.1:port` from `source` (any port).
    public init(port: Int, from source: String = "127.0.0.1") throws {
        var bound = true
        descriptor = try RawHTTPConnection.connectedSocket(port: port) { bound = Self.bindSource($0, to: source) }
        guard bound else {
            close(descriptor)
            throw TestServerError("cannot bind to \(source)")
        }
    }

    deinit { close(descriptor) }

    /// True when this machine lets a socket bind to `address` (Linux routes all of
    /// 127.0.0.0/8 to loopback; macOS has only 127.0.0.1 unless told otherwise).
    public static func canBind(_ address: String) -> Bool {
        #if canImport(Glibc)
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let probe = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        defer { close(probe) }
        return bindSource(probe, to: address)
    }

    /// Sends `text` whole.
    public func write(_ text: String) throws {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)  // a closed connection is an error here, not a signal
        #else
        let flags: Int32 = 0
        #endif
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, flags) }
            guard sent > 0 else { throw TestServerError("send() failed: \(errno)") }
            offset += sent
        }
    }

    /// Sends `pieces` one by one, `interval` apart, from a thread of its own: the pace stays
    /// even while the cooperative pool (shared with the in-process server) is busy. Ends at the
    /// first failed send, with its error.
    public func trickle(_ pieces: [String], every interval: Duration) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { [self] in
                do {
                    for piece in pieces {
                        Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
                        try write(piece)
                    }
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }

    /// What the server sent until it closed the connection (an end or a reset), and whether it
    /// did within `limit`.
    public func readUntilClosed(limit: Duration = TestSocket.limit) async -> (text: String, closed: Bool) {
        await read(limit: limit) { _ in false }
    }

    /// What the server sent until `text` arrived, it closed the connection, or `limit` passed.
    public func read(untilContaining text: String, limit: Duration = TestSocket.limit) async -> String {
        await read(limit: limit) { $0.contains(text) }.text
    }

    private func read(limit: Duration, until done: @escaping @Sendable (String) -> Bool) async -> (text: String, closed: Bool) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { [descriptor] in
                let deadline = ContinuousClock.now + limit
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65_536)
                var lastTry = false
                while !lastTry {
                    // Past the limit, one more short try: a stalled process may have left the
                    // answer waiting in the socket.
                    var remaining = deadline - ContinuousClock.now
                    if remaining <= .zero { remaining = .milliseconds(1); lastTry = true }
                    let (seconds, attoseconds) = remaining.components
                    var timeout = timeval(tv_sec: .init(seconds), tv_usec: .init(max(1, attoseconds / 1_000_000_000_000)))
                    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                    if count == 0 || (count < 0 && errno == ECONNRESET) {
                        continuation.resume(returning: (String(decoding: received, as: UTF8.self), true))
                        return
                    }
                    if count < 0 {
                        if errno == EINTR { continue }
                        break  // the receive timeout: the limit passed
                    }
                    received += buffer[0..<count]
                    if done(String(decoding: received, as: UTF8.self)) { break }
                }
                continuation.resume(returning: (String(decoding: received, as: UTF8.self), false))
            }
        }
    }

    private static func address(_ text: String, port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(text)
        return address
    }

    private static func bindSource(_ descriptor: Int32, to source: String) -> Bool {
        #if canImport(Darwin)
        var on: Int32 = 1  // a closed connection is an error here, not a signal
        setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = address(source, port: 0)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
