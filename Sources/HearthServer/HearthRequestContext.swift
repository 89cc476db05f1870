import Hummingbird
import NIOCore

/// The context of every request: Hummingbird's core context plus the client's address, which
/// sign-in rate limiting counts by.
struct HearthRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The connection's event loop, where its stream runs.
    let eventLoop: any EventLoop

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        eventLoop = source.channel.eventLoop
    }

    /// The client's IP address as text (`unknown` when the transport has none).
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
