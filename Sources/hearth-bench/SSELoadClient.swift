import Foundation
import NIOCore
import NIOPosix
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Many raw Server-Sent-Events connections from one process, for fan-out and idle-connection
/// benchmarks. Each connection records, for every event carrying `"stamp":<ns>`, how long after
/// that moment (on this process's monotonic clock) the event arrived.
final class SSELoadClient: Sendable {
    let group: MultiThreadedEventLoopGroup
    let host: String
    let port: Int
    let latencies = Mutex<[UInt64]>([])
    let eventsSeen = Mutex<Int>(0)
    let connections = Mutex<[any Channel]>([])
    /// PocketBase realtime client IDs, from each connection's `PB_CONNECT` event.
    let clientIDs = Mutex<[String]>([])

    init(host: String, port: Int, threads: Int = 2) {
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        self.host = host
        self.port = port
    }

    /// Raises this process's open-file limit to its hard limit.
    static func raiseFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Opens `count` streams with the raw HTTP request `request`, `batch` at a time.
    func open(count: Int, request: String, batch: Int = 200) async throws {
        var opened = 0
        while opened < count {
            let size = min(batch, count - opened)
            try await withThrowingTaskGroup(of: (any Channel).self) { tasks in
                for _ in 0..<size {
                    tasks.addTask { try await self.connect(request: request) }
                }
                for try await channel in tasks {
                    connections.withLock { $0.append(channel) }
                }
            }
            opened += size
        }
    }

    private func connect(request: String) async throws -> any Channel {
        let client = self
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(StampHandler(client: client))
                }
            }
            .connect(host: host, port: port).get()
        try await channel.writeAndFlush(ByteBuffer(string: request)).get()
        return channel
    }

    /// Closes every connection.
    func closeAll() async {
        for channel in connections.withLock({ $0 }) { try? await channel.close().get() }
        connections.withLock { $0.removeAll() }
    }

    func shutdown() async {
        await closeAll()
        try? await group.shutdownGracefully()
    }

    /// Waits until `count` events (of any kind carrying data) have arrived, or the deadline.
    func waitForEvents(_ count: Int, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if eventsSeen.withLock({ $0 }) >= count { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return false
    }
}

/// Splits the byte stream into SSE events (blocks ending in a blank line) and records the
/// latency of each event whose data carries `"stamp":<nanoseconds>`.
private final class StampHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    let client: SSELoadClient
    private var pending: [UInt8] = []
    private static let separator = Array("\n\n".utf8)
    private static let stampMarker = Array("\"stamp\":".utf8)
    private static let keepAlive = Array("keep-alive".utf8)
    private static let clientIDMarker = Array("\"clientId\":\"".utf8)

    init(client: SSELoadClient) { self.client = client }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let arrival = SSELoadClient.now()
        var buffer = unwrapInboundIn(data)
        pending += buffer.readBytes(length: buffer.readableBytes) ?? []
        var events = 0
        var stamps: [UInt64] = []
        while let end = pending.firstRange(of: Self.separator) {
            let block = pending[..<end.lowerBound]
            pending.removeSubrange(..<end.upperBound)
            if block.firstRange(of: Self.keepAlive) != nil { continue }
            events += 1
            if let marker = block.firstRange(of: Self.clientIDMarker),
                let end = block[marker.upperBound...].firstIndex(of: UInt8(ascii: "\""))
            {
                let id = String(decoding: block[marker.upperBound..<end], as: UTF8.self)
                client.clientIDs.withLock { $0.append(id) }
            }
            if let marker = block.firstRange(of: Self.stampMarker) {
                var value: UInt64 = 0
                var cursor = marker.upperBound
                while cursor < block.endIndex, block[cursor] >= 48, block[cursor] <= 57 {
                    value = value * 10 + UInt64(block[cursor] - 48)
                    cursor += 1
                }
                if value > 0 && value <= arrival { stamps.append(arrival - value) }
            }
        }
        if !stamps.isEmpty { client.latencies.withLock { $0 += stamps } }
        if events > 0 { client.eventsSeen.withLock { $0 += events } }
    }
}
