import Foundation
import HearthCore
import Synchronization

extension SyncEngine: RealtimeConnectionDelegate {
    func connectionWillOpen(outbound: AsyncStream<String>.Continuation) -> String? {
        state.withLock { state -> String? in
            guard state.core.connecting() else { return nil }
            state.outbound = outbound
            return socketURL(state.core.sessionID)
        }
    }

    func connectionReceived(_ text: String) {
        guard let message = try? RealtimeMessage.parse(text) else { return }
        perform { state in ((), state.core.receive(message, now: clock())) }
    }

    func connectionClosed() -> Bool {
        perform { state in
            state.outbound = nil
            let (opened, actions) = state.core.disconnected()
            return (opened, actions)
        }
    }
}
