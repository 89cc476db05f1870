import AsyncHTTPClient
import HearthFunctions

/// The HTTP clients a server calls its functions with (``HTTPClient/Configuration/functions``:
/// no read timeout, no redirects): HTTPS, callable and blocking calls on the server's own event
/// loops, since someone waits for each; trigger events on the ``DeliveryThread``, at a lower
/// CPU priority, since they wait on disk.
struct FunctionsClients {
    let calls = HTTPClient.makeForFunctions()
    let deliveryThread = DeliveryThread()
    let deliveries: HTTPClient

    init() {
        deliveries = deliveryThread.makeClient()
    }

    /// Shuts the clients and the thread down, once the server has stopped.
    func shutdown() async {
        try? await calls.shutdown()
        try? await deliveries.shutdown()
        try? await deliveryThread.shutdown()
    }
}
