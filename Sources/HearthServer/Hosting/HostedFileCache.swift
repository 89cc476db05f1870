import Foundation
import HearthHosting
import NIOCore
import Synchronization
import _NIOFileSystem

/// The files of hosted sites, read from disk and kept in memory up to a byte budget, so a file's
/// hash and compressed forms are made once. Each request checks the file on disk (one `stat`):
/// a file changed since (size, modification or status-change time) is read again, so a new deploy of
/// the folder shows on the next request.
///
/// What is read into memory is bounded twice: files up to ``maxLoadedBytes`` only, and at most
/// ``readBudget`` bytes being read at once. A larger file, or any file while the budget is
/// spent, is streamed from disk instead (``HostedDiskFile``), so no request makes the server
/// hold more than a read chunk of it.
final class HostedFileCache: Sendable {
    /// The largest file read into memory (and compressed); larger ones are streamed.
    static let maxLoadedBytes = HostedFile.maxCompressedBytes

    private struct Entry {
        /// The file as it was read: size, times (the status-change time changes when the file is
        /// replaced or renamed over, even with the same modification time and size) and inode.
        let identity: FileStatus
        let file: HostedFile
        var used: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var cost = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The bytes the cache may hold (files and their compressed forms).
    let capacity: Int

    /// Bytes of files being read into memory at once.
    private let readBudget: ByteBudget

    init(capacity: Int = 64 << 20, readBudget: Int = 64 << 20) {
        self.capacity = capacity
        self.readBudget = ByteBudget(limit: readBudget)
    }

    /// The file at `location` (absolute, its symbolic links already checked), from memory or to
    /// stream from disk, or nil when it is gone or not a regular file. `unchanging` (a deployed
    /// release's file, which is never edited) skips checking a file held in memory on disk.
    func file(at location: String, unchanging: Bool = false) async throws -> HostedContent? {
        if unchanging, let cached = use(location, ifStill: nil) { return .loaded(cached) }
        guard let info = FileStatus(path: location), info.isRegularFile else { return nil }
        let onDisk = HostedContent.onDisk(HostedDiskFile(location: location, status: info))
        guard info.size <= Self.maxLoadedBytes else { return onDisk }
        let cached = use(location, ifStill: info)
        if let cached { return .loaded(cached) }
        // Reading it (and its compressed forms) holds about twice its size for a moment.
        let held = Int(info.size) * 2
        guard readBudget.reserve(held) else { return onDisk }
        defer { readBudget.release(held) }
        let bytes: ByteBuffer
        do {
            bytes = try await ByteBuffer(contentsOf: FilePath(location), maximumSizeAllowed: .bytes(Int64(Self.maxLoadedBytes)))
        } catch let error as FileSystemError where error.code == .notFound {
            return nil
        } catch let error as FileSystemError where error.code == .resourceExhausted {
            return onDisk  // it grew past the limit since the stat
        }
        let file = HostedFile(path: location, bytes: Array(bytes.readableBytesView))
        store(file, identity: info, at: location)
        return .loaded(file)
    }

    /// The file kept for `location`, marked as just used, if it was read as `identity` is now
    /// (nil: whatever it was).
    private func use(_ location: String, ifStill identity: FileStatus?) -> HostedFile? {
        state.withLock { state in
            guard var entry = state.entries[location], identity == nil || entry.identity == identity else { return nil }
            state.clock += 1
            entry.used = state.clock
            state.entries[location] = entry
            return entry.file
        }
    }

    private func store(_ file: HostedFile, identity: FileStatus, at location: String) {
        let cost = file.cost
        guard cost <= capacity / 4 else { return }  // a few large files must not empty the cache
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: location) { state.cost -= old.file.cost }
            // Least recently used first, until the new file fits.
            while state.cost + cost > capacity, let oldest = state.entries.min(by: { $0.value.used < $1.value.used }) {
                state.entries.removeValue(forKey: oldest.key)
                state.cost -= oldest.value.file.cost
            }
            state.clock += 1
            state.entries[location] = Entry(identity: identity, file: file, used: state.clock)
            state.cost += cost
        }
    }
}
