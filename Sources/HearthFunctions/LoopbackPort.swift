import NIOCore
import NIOPosix

/// Ports on 127.0.0.1 for the processes Hearth starts.
public enum LoopbackPort {
    /// A port free now: bound and released at once, for a process to bind next. (Another
    /// process could take it in between; the process that fails to bind is restarted on it.)
    public static func free() throws -> Int {
        let channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).wait()
        defer { try? channel.close().wait() }
        guard let port = channel.localAddress?.port else { throw FunctionError.unloadable("no free port on 127.0.0.1") }
        return port
    }

    /// True when something accepts connections on `port`.
    public static func accepts(_ port: Int) async -> Bool {
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(.milliseconds(500))
                .connect(host: "127.0.0.1", port: port).get()
            try? await channel.close()
            return true
        } catch {
            return false
        }
    }
}
