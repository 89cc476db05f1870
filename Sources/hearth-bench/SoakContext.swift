import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// What every client of a soak run shares: where the server is, the run's paths, the
/// recorder, and the ledgers the end-of-run checks read.
///
/// Everything a run writes is under `/soak/<run>/`: `rooms/r<n>/<writer>` (each writer's
/// latest `{"seq":n,"stamp":ns}`, replaced on every write, so the data does not grow),
/// `counters/c<n>` (the transactions' counters), `vanish/…` and `idle/…`.
final class SoakContext: Sendable {
    let group: MultiThreadedEventLoopGroup
    let host: String
    let port: Int
    /// The database (`ns`); nil: the server's default.
    let namespace: String?
    /// The run's own location, `/soak/<run>`.
    let base: String
    let rooms: Int
    let counters: Int
    /// A credential every client presents (REST `Authorization: Bearer`, realtime `gauth`);
    /// nil: clients are anonymous and the rules must let them in under /soak.
    let clientToken: String?
    let recorder: SoakRecorder
    /// A request unanswered this long counts as a timeout error.
    let timeoutNanoseconds: UInt64

    /// While set, clients send: set once every client is connected, cleared at the end so
    /// what is in flight can finish.
    let running = Atomic<Bool>(false)
    /// Requests sent and not yet answered, over all clients.
    let inFlight = Atomic<Int>(0)
    /// Clients whose connection is up and whose listens are acknowledged.
    let ready = Atomic<Int>(0)
    /// Acknowledged increments of each counter.
    let increments: [SharedCount]

    let writers = Mutex<[WriterLedger]>([])
    let listeners = Mutex<[ListenerLedger]>([])
    /// The mix's connections, closed at the end.
    let channels = Mutex<[any Channel]>([])

    init(
        host: String, port: Int, namespace: String?, run: String, rooms: Int, counters: Int, clientToken: String?,
        timeout: Double, threads: Int
    ) {
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        self.host = host
        self.port = port
        self.namespace = namespace
        self.base = "/soak/\(run)"
        self.rooms = rooms
        self.counters = counters
        self.clientToken = clientToken
        self.recorder = SoakRecorder()
        self.timeoutNanoseconds = UInt64(timeout * 1e9)
        self.increments = (0..<counters).map { _ in SharedCount() }
    }

    func roomPath(_ room: Int) -> String { "\(base)/rooms/r\(room)" }
    func counterPath(_ counter: Int) -> String { "\(base)/counters/c\(counter)" }
    /// The parent of every room: the busiest location, where slow consumers listen.
    var allRoomsPath: String { "\(base)/rooms" }

    /// The REST target for `path` (`<path>.json?ns=…`, plus `extra` query items).
    func restTarget(_ path: String, query extra: String? = nil) -> String {
        var items: [String] = []
        if let namespace { items.append("ns=\(namespace)") }
        if let extra { items.append(extra) }
        return path + ".json" + (items.isEmpty ? "" : "?" + items.joined(separator: "&"))
    }

    func requestHead(method: HTTPMethod, target: String, bodyLength: Int? = nil, stream: Bool = false) -> HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        if let clientToken { headers.add(name: "Authorization", value: "Bearer \(clientToken)") }
        if stream { headers.add(name: "Accept", value: "text/event-stream") }
        if let bodyLength {
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(bodyLength))
        }
        return HTTPRequestHead(version: .http1_1, method: method, uri: target, headers: headers)
    }

    func register(_ channel: any Channel) { channels.withLock { $0.append(channel) } }

    /// Opens `count` connections with `connect`, `batch` at a time (a burst of thousands of
    /// SYNs overflows the server's accept backlog).
    static func open(count: Int, batch: Int = 100, _ connect: @escaping @Sendable (Int) async throws -> Void) async throws {
        var opened = 0
        while opened < count {
            let size = min(batch, count - opened)
            let first = opened
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for index in first..<(first + size) { tasks.addTask { try await connect(index) } }
                try await tasks.waitForAll()
            }
            opened += size
        }
    }

    /// Closes the mix's connections (as the client: no error is counted for them).
    func closeAll() async {
        let channels = self.channels.withLock { $0 }
        for channel in channels { channel.pipeline.fireUserInboundEventTriggered(SoakClosing()) }
        for channel in channels { try? await channel.close().get() }
        self.channels.withLock { $0.removeAll() }
    }
}

/// Tells a connection's handler that the client itself is closing it (not the server).
struct SoakClosing {}

/// Aborts a connection the way a client that vanishes does: `SO_LINGER` 0 and close, so the
/// kernel sends a reset and no FIN handshake (the server learns of it only by the reset, or,
/// for a socket that is merely silent, by its own timeouts).
func abortConnection(_ channel: any Channel) async {
    channel.pipeline.fireUserInboundEventTriggered(SoakClosing())
    if let provider = channel as? any SocketOptionProvider {
        try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
    }
    try? await channel.close().get()
}
