import Synchronization

/// Counts what holds each database open beyond a single request (a realtime session), so an
/// idle database is never closed under it.
///
/// Threading: one lock around the counts.
final class DatabaseHolds: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Something holds `name` until the matching ``release(_:)``.
    func hold(_ name: String) {
        counts.withLock { $0[name, default: 0] += 1 }
    }

    func release(_ name: String) {
        counts.withLock { counts in
            guard let count = counts[name] else { return }
            counts[name] = count > 1 ? count - 1 : nil
        }
    }

    /// True while anything holds `name`.
    func isHeld(_ name: String) -> Bool {
        counts.withLock { $0[name] != nil }
    }
}
