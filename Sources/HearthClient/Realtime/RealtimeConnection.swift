import Foundation
import Synchronization

/// What a ``RealtimeConnection`` tells the code that owns the sync state, and asks it.
protocol RealtimeConnectionDelegate: AnyObject, Sendable {
    /// A socket is about to open, with `outbound` as what it sends. Returns the URL to open
    /// (naming the last session), or nil to stay offline until ``RealtimeConnection/wake()``.
    func connectionWillOpen(outbound: AsyncStream<String>.Continuation) -> String?
    /// One whole message from the server.
    func connectionReceived(_ text: String)
    /// The socket closed. Returns whether it had opened (its handshake came), which resets the backoff.
    func connectionClosed() -> Bool
}

/// The socket side of a database's sync: opens the realtime WebSocket (``RealtimeSocket``),
/// passes messages both ways, and opens it again after it closes, waiting longer each time it
/// fails (1 s doubling to 30 s, with jitter), until stopped. It also fetches the credential
/// that the sync logic decides to send. What to say is not decided here.
final class RealtimeConnection: Sendable {
    /// The credential to authenticate with (nil: signed out); a fresh one when asked.
    let token: @Sendable (_ forceRefresh: Bool) async -> String?
    private let wakeup = Wakeup()
    private let state = Mutex<(started: Bool, stopped: Bool)>((false, false))

    static let initialBackoff: Duration = .seconds(1)
    static let maxBackoff: Duration = .seconds(30)

    init(token: @escaping @Sendable (Bool) async -> String?) {
        self.token = token
    }

    /// Starts connecting (once), reporting to `delegate` (held weakly).
    func start(delegate: some RealtimeConnectionDelegate) {
        guard state.withLock({ state in defer { state.started = true }; return !state.started }) else { return }
        Task.detached { [weak delegate, self] in
            guard let delegate else { return }
            await self.run(delegate: delegate)
        }
    }

    /// Cuts a wait short: after going online or offline, a socket opens (or does not) now.
    func wake() {
        wakeup.signal()
    }

    /// Ends the connection loop for good (the owner has closed the socket).
    func stop() {
        state.withLock { $0.stopped = true }
        wakeup.signal()
    }

    /// The credential now.
    func credential(forceRefresh: Bool) async -> String? {
        await token(forceRefresh)
    }

    private func run(delegate owner: some RealtimeConnectionDelegate) async {
        var backoff = Self.initialBackoff
        while !Task.isCancelled {
            let (outbound, continuation) = AsyncStream<String>.makeStream()
            guard let url = owner.connectionWillOpen(outbound: continuation) else {
                if state.withLock({ $0.stopped }) { return }
                // Offline by request: wait for goOnline.
                await wakeup.wait()
                continue
            }
            await RealtimeSocket.run(url: url, outbound: outbound) { [weak owner] event in
                if case .message(let text) = event { owner?.connectionReceived(text) }
            }
            continuation.finish()
            if owner.connectionClosed() { backoff = Self.initialBackoff }
            // Wait before trying again (goOnline and goOffline cut it short).
            await wakeup.wait(timeout: backoff + .milliseconds(Int.random(in: 0...250)))
            backoff = min(backoff * 2, Self.maxBackoff)
        }
    }
}
