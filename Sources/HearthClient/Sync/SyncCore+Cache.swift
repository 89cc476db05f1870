import HearthCore

extension SyncCore {
    /// Queues server data for the device's cache; the first of a batch arms the flush timer.
    mutating func queueCache(_ update: LocalCache.CacheUpdate, _ actions: inout [SyncAction]) {
        guard hasCache else { return }
        cacheUpdates.append(update)
        guard !cacheFlushArmed else { return }
        cacheFlushArmed = true
        actions.append(.arm(.cacheFlush, after: Self.cacheFlushDelay))
    }

    /// The server data received since the last batch, to save in one transaction.
    mutating func takeCacheBatch() -> [LocalCache.CacheUpdate] {
        cacheFlushArmed = false
        defer { cacheUpdates = [] }
        return cacheUpdates
    }
}
