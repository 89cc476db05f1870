import HearthEngine
import NIOCore
import Synchronization

/// The sockets of one event loop whose session queues have something to write, drained
/// together: a write that reaches 10,000 sockets wakes each event loop once, not once per
/// socket.
///
/// Threading: `pending` is taken from any thread (the hub's fan-out); ``run()`` runs on the
/// event loop, which is the only place the handlers are touched.
final class SocketDrainQueue: Sendable {
    let eventLoop: any EventLoop
    private let pending = Mutex<(sockets: [NIOLoopBound<RealtimeSocketHandler>], scheduled: Bool)>(([], false))

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Asks for `socket` to be drained on its loop soon.
    func schedule(_ socket: NIOLoopBound<RealtimeSocketHandler>) {
        let wake = pending.withLock { pending -> Bool in
            pending.sockets.append(socket)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        if wake { eventLoop.execute { self.run() } }
    }

    private func run() {
        let sockets = pending.withLock { pending -> [NIOLoopBound<RealtimeSocketHandler>] in
            defer {
                pending.sockets = []
                pending.scheduled = false
            }
            return pending.sockets
        }
        for socket in sockets { socket.value.drain() }
    }
}

/// One ``SocketDrainQueue`` per event loop.
final class SocketDrainQueues: Sendable {
    private let queues = Mutex<[ObjectIdentifier: SocketDrainQueue]>([:])

    func queue(for eventLoop: any EventLoop) -> SocketDrainQueue {
        queues.withLock { queues in
            let key = ObjectIdentifier(eventLoop)
            if let queue = queues[key] { return queue }
            let queue = SocketDrainQueue(eventLoop: eventLoop)
            queues[key] = queue
            return queue
        }
    }
}
