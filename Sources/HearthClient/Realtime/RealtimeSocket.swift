import HearthCore
import HearthProtocol
import Logging
import NIOCore
import NIOPosix
import NIOWebSocket
import WSClient

/// One WebSocket to a server's `/.ws` (docs/protocol.md §2.2, §3): frames out of messages and
/// messages out of frames, a keep-alive while idle, nothing else. ``RealtimeConnection`` decides
/// when to reconnect, the ``SyncCore`` what to say.
enum RealtimeSocket {
    /// What the connection hears from a socket.
    enum Event: Sendable {
        /// One whole message (chunks already joined).
        case message(String)
        /// The socket closed or failed to open; the session is over.
        case closed((any Error)?)
    }

    /// The longest message the client accepts (the server's limit is smaller).
    static let maxMessageBytes = 256 << 20
    /// Firebase's client keep-alive: a `0` frame after 45 s without sending.
    static let keepAlive: Duration = .seconds(45)

    /// Connects to `url` and runs until the socket closes or `outbound` finishes: every string
    /// `outbound` yields is sent as a message, every message received goes to `receive`.
    static func run(url: String, outbound: AsyncStream<String>, receive: @escaping @Sendable (Event) -> Void) async {
        var logger = Logger(label: "hearth.client.realtime")
        logger.logLevel = .critical
        do {
            let client = WebSocketClient(
                url: url, configuration: .init(maxFrameSize: 1 << 20), logger: logger
            ) { inbound, writer, _ in
                let sender = Task {
                    await withTaskGroup(of: Void.self) { group in
                        let (ticks, tick) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
                        group.addTask {
                            // A keep-alive frame when nothing else was sent for a while.
                            while !Task.isCancelled {
                                try? await Task.sleep(for: keepAlive)
                                tick.yield()
                            }
                        }
                        group.addTask {
                            for await _ in ticks { try? await writer.write(.text("0")) }
                        }
                        for await message in outbound {
                            do {
                                for frame in RealtimeFrames.frames(for: message) { try await writer.write(.text(frame)) }
                            } catch {
                                break
                            }
                        }
                        group.cancelAll()
                        tick.finish()
                    }
                    try? await writer.close(.normalClosure, reason: nil)
                }
                defer { sender.cancel() }
                var assembler = RealtimeFrameAssembler(maxMessageBytes: maxMessageBytes)
                for try await message in inbound.messages(maxSize: maxMessageBytes) {
                    guard case .text(let text) = message else { continue }
                    if case .message(let whole) = try assembler.receive(text) { receive(.message(whole)) }
                }
            }
            try await client.run()
            receive(.closed(nil))
        } catch {
            receive(.closed(error))
        }
    }
}
