import Hummingbird
import NIOCore

/// The context of every request: Hummingbird's core context plus the client's address, which
/// sign-in rate limiting counts by.
struct HearthRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The connection, whose event loop runs its stream and whose closing ends it.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }

    /// The client's IP address as text (`unknown` when the transport has none).
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}
