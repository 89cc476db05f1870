import HearthEngine
import Synchronization

/// Bytes the server lets requests hold at once (the bodies of non-admin writes, as they are
/// read and parsed): a request reserves what it reads, and gives it back when it is done.
/// Past the limit a request is refused at once rather than queued, so many large bodies at
/// the same time cost a bounded amount of memory.
///
/// Threading: one lock around the count.
final class ByteBudget: Sendable {
    let limit: Int
    private let reserved = Mutex(0)

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes `bytes` from the budget; false (and nothing taken) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        reserved.withLock { reserved in
            guard bytes <= limit - reserved else { return false }
            reserved += bytes
            return true
        }
    }

    /// Gives back bytes taken with ``reserve(_:)``.
    func release(_ bytes: Int) {
        reserved.withLock { $0 -= bytes }
    }

    /// The bytes taken now.
    var inUse: Int { reserved.withLock { $0 } }
}
