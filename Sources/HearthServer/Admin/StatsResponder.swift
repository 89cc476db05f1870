import Foundation
import HearthCore
import HearthEngine
import HearthStore
import Hummingbird

/// `GET /.hearth/stats`, for admins: the server's figures for the console — uptime, resident
/// memory, open listens (Server-Sent Events streams and realtime listens) and realtime
/// connections, and for each database its total writes (the console turns two readings into
/// writes per second) and listens.
struct StatsResponder: Sendable {
    static let path = "/.hearth/stats"

    let databases: any DatabaseProvider
    let hub: ListenerHub
    let realtime: RealtimeService
    let admin: AdminCredential
    /// What non-admin write bodies hold.
    let bodyBudget: ByteBudget
    /// Server time in milliseconds.
    let clock: @Sendable () -> Int64
    /// When the server started, in the clock's milliseconds.
    let started: Int64

    struct Figures: Encodable {
        struct DatabaseFigures: Encodable {
            var name: String
            /// Whether the database has been opened since the server started.
            var open: Bool
            /// Writes committed to the database over its whole life (its log sequence number).
            var writes: Int64?
            var streams: Int
        }

        struct Connections: Encodable {
            /// Open listens: Server-Sent Events streams and realtime protocol listens.
            var streams: Int
            /// Open realtime protocol sessions (WebSocket or long-polling).
            var realtime: Int
        }

        var uptimeSeconds: Double
        var memoryBytes: Int?
        var connections: Connections
        var databases: [DatabaseFigures]
        /// Bytes the bodies of non-admin writes hold now, as they are read and parsed (see
        /// ``ByteBudget``), and the most they may.
        var bufferedBodyBytes: Int
        var bufferedBodyLimit: Int
    }

    func respond(to request: Request) async throws -> Response {
        _ = try await admin.admit(request)
        let figures = await self.figures()
        return JSONResponse.encoding(figures)
    }

    func figures() async -> Figures {
        let open = databases.openDatabases()
        let streams = hub.countsByDatabase()
        let stored = (try? await databases.databaseNames()) ?? []
        let names = Set(stored).union(open.keys).sorted()
        let databases = names.map { name in
            Figures.DatabaseFigures(
                name: name, open: open[name] != nil, writes: open[name]?.current.sequence, streams: streams[name] ?? 0)
        }
        return Figures(
            uptimeSeconds: Double(clock() - started) / 1000,
            memoryBytes: Self.residentMemoryBytes(),
            connections: .init(streams: streams.values.reduce(0, +), realtime: realtime.count),
            databases: databases, bufferedBodyBytes: bodyBudget.inUse, bufferedBodyLimit: bodyBudget.limit)
    }

    /// The process's resident set size, from `/proc/self/statm` (nil where there is none).
    static func residentMemoryBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
