import HTTPTypes
import HearthCore
import HearthEngine
import HearthProtocol
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The realtime protocol over long-polling at `/.lp`, the browser SDK's fallback (docs/protocol.md
/// §2.3): `start=t` opens a session and answers with its handshake; polls (`id`, `pw`) carry
/// the client's messages in base64 segments and get the server's as numbered packets
/// (``LongPollTransport``); `dframe=t` is the page the SDK frames (blank here). Every answer is
/// JavaScript with status 200: a script that fails to load ends the SDK's transport.
///
/// A long-polling client is gone when the browser drops a waiting poll (a closed tab, the SDK's
/// `goOffline`), or when it stops polling for ``abandonedAfter`` milliseconds: its session ends
/// and its onDisconnect operations run.
///
/// Threading: `transports` guards the open transports; each transport guards its own state.
final class RealtimeLongPolling: Sendable {
    static let path = "/.lp"
    /// The SDK opens another poll after 25 seconds; a poll is answered before that.
    static let pollTimeout = Duration.seconds(20)

    let service: RealtimeService
    let defaultDatabase: String
    let abandonedAfter: Int64
    private let transports = Mutex<(byID: [String: LongPollTransport], bySession: [String: LongPollTransport])>(([:], [:]))

    /// Who the client is behind a trusted proxy (for the cap on sessions per address).
    let proxies: ProxyTrust

    init(service: RealtimeService, defaultDatabase: String, proxies: ProxyTrust = ProxyTrust(addresses: []), abandonedAfter: Int64 = 45_000) {
        self.service = service
        self.defaultDatabase = defaultDatabase
        self.proxies = proxies
        self.abandonedAfter = abandonedAfter
    }

    func respond(to request: Request, connection: any Channel) async -> Response {
        let parameters = request.uri.firstQueryParameters
        if parameters["start"] == "t" { return await connect(request, parameters: parameters, connection: connection) }
        if parameters["dframe"] == "t" { return disconnectFrame(parameters) }
        if parameters["dscript"] == "t" { return Self.script(Self.disconnectScript) }
        guard let id = parameters["id"], let transport = transports.withLock({ $0.byID[id] }),
            transport.password == parameters["pw"]
        else {
            // An unknown or ended session (the server restarted): the SDK closes and reconnects.
            return Self.script("pLPCommand('close');")
        }
        if parameters["disconn"] == "t" {
            transport.markClosed()
            await close(transport)
            return Self.script("")
        }
        do {
            try transport.receiveSegments(parameters, now: service.operations.clock())
        } catch {
            transport.session.outbound.close(with: [ByteBuffer(bytes: RealtimeServerMessage.error(error.description))])
        }
        // A poll the browser gives up on (a closed tab, `goOffline` removing the SDK's frame)
        // closes its connection: the client is gone, as a closed WebSocket would say.
        let clientGone = ClientGoneHandler { [transport] in transport.pollAbandoned() }
        try? await connection.pipeline.addHandler(clientGone, position: .first).get()
        // The server's graceful stop waits for requests: a waiting poll is told to close at once.
        let answer = await withGracefulShutdownHandler {
            await transport.answerPoll(timeout: Self.pollTimeout)
        } onGracefulShutdown: {
            transport.markClosed()
            transport.session.outbound.wake()
        }
        connection.pipeline.removeHandler(clientGone).whenFailure { _ in }
        if transport.isClosed { await close(transport) }
        return Self.script(answer)
    }

    /// True for a query parameter that carries the client's messages (`d0`, `d1`, …: base64
    /// segments of its frames, `auth` requests with ID tokens among them): logs hide its value.
    static func isMessageParameter(_ name: String) -> Bool {
        name.count > 1 && name.first == "d" && name.dropFirst().allSatisfy(\.isASCIIDigit)
    }

    /// True for the SDK's disconnect frame, a document of its own (``SecurityHeaders/Kind/longPollFrame``).
    static func isDisconnectFrame(_ request: Request) -> Bool {
        request.uri.queryParameters["dframe"] == "t"
    }

    /// The page the SDK frames for the life of a long-polling transport: when the app's page
    /// goes (a navigation, a closed tab), its script tells the server at once (`disconn`),
    /// which a held poll alone does not reliably say. Names only a live transport's credentials.
    private func disconnectFrame(_ parameters: [String: String]) -> Response {
        var body = "<!doctype html><meta charset=\"utf-8\"><title></title>"
        if let id = parameters["id"], let transport = transports.withLock({ $0.byID[id] }), transport.password == parameters["pw"] {
            // Both are letters and digits of this server's making.
            body += #"<script src="/.lp?dscript=t" data-id="\#(transport.id)" data-pw="\#(transport.password)"></script>"#
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// The disconnect frame's script: a beacon to `disconn` when the frame goes away.
    static let disconnectScript = """
        (() => {
          const { id, pw } = document.currentScript.dataset;
          addEventListener('pagehide', () => navigator.sendBeacon(`/.lp?disconn=t&id=${encodeURIComponent(id)}&pw=${encodeURIComponent(pw)}`));
        })();
        """

    private func connect(_ request: Request, parameters: [String: String], connection: any Channel) async -> Response {
        // The callback number becomes part of a script: digits only.
        guard let callback = parameters["cb"], !callback.isEmpty, callback.count <= 10, callback.allSatisfy(\.isASCIIDigit) else {
            return Self.script("")
        }
        let address = proxies.clientAddress(of: request, peer: connection.remoteAddress)
        let limit = service.limits.maxLongPollSessionsPerAddress
        guard transports.withLock({ $0.byID.values.lazy.filter { $0.address == address }.count < limit }) else {
            service.logger.info("refused a long-polling session: too many from one address", metadata: ["address": "\(address)"])
            return Self.script("")
        }
        let name = parameters["ns"] ?? DatabaseResponder.databaseName(host: request.head.authority) ?? defaultDatabase
        let session: RealtimeSession
        do {
            let database = try await service.operations.database(named: name, creating: false)
            session = service.openSession(on: database, host: request.head.authority ?? "localhost")
        } catch {
            return Self.script("")
        }
        // The handshake is packet 0 of this answer, not a queued message.
        guard case .events(let queued) = session.outbound.takeNow(), let handshake = queued.first else { return Self.script("") }
        let transport = LongPollTransport(
            id: RealtimeService.randomID(), password: String(RealtimeService.randomID().prefix(10)), callback: callback,
            session: session, now: service.operations.clock(), address: address,
            maxHeldBytes: service.limits.maxMessageBytes * 4 / 3 + 4096)
        transports.withLock { transports in
            transports.byID[transport.id] = transport
            transports.bySession[session.id] = transport
        }
        return Self.script(transport.connectScript(handshake: Array(buffer: handshake.bytes)))
    }

    /// The long-polling transport of a session, for the WebSocket that upgrades it (`s=`).
    func transport(forSession id: String) -> LongPollTransport? {
        transports.withLock { $0.bySession[id] }
    }

    /// Forgets a transport; unless its session moved to a WebSocket, the session ends.
    func close(_ transport: LongPollTransport) async {
        transports.withLock { transports in
            transports.byID[transport.id] = nil
            transports.bySession[transport.session.id] = nil
        }
        if !transport.isUpgraded { await service.close(transport.session) }
    }

    /// Forgets a transport whose session a WebSocket now carries.
    func retire(_ transport: LongPollTransport) {
        transports.withLock { transports in
            transports.byID[transport.id] = nil
            transports.bySession[transport.session.id] = nil
        }
    }

    /// Ends the sessions of clients that stopped polling.
    func closeAbandoned(now: Int64) async {
        let abandoned = transports.withLock { transports in
            transports.byID.values.filter { $0.isAbandoned(now: now, idle: abandonedAfter) }
        }
        for transport in abandoned {
            transport.markClosed()
            await close(transport)
        }
    }

    private static func script(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/javascript; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
