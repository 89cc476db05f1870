import HearthEngine
import Synchronization

/// A forwarded request's place in its client's count (``ConnectionGate/lease(forwardedFor:)``):
/// given back once, when released or, failing that, when dropped, so a response that is never
/// written (its connection gone first) cannot hold the place for ever.
final class ForwardedLease: Sendable {
    private let giveBack: Mutex<(@Sendable () -> Void)?>

    init(giveBack: @escaping @Sendable () -> Void) {
        self.giveBack = Mutex(giveBack)
    }

    /// Gives the place back; later calls do nothing.
    func release() {
        let pending = giveBack.withLock { giveBack in
            defer { giveBack = nil }
            return giveBack
        }
        pending?()
    }

    deinit { release() }
}
