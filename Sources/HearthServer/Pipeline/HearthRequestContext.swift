import HearthEngine
import Hummingbird
import NIOCore

/// The context of every request: Hummingbird's core context plus the connection and its peer's
/// address (the client's, or a proxy's: see ``ProxyTrust``).
struct HearthRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    /// The connection, whose event loop runs its stream and whose closing ends it.
    let channel: any Channel
    /// What the request's handling records for the middleware around it.
    let note = RequestNote()

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
    }
}
