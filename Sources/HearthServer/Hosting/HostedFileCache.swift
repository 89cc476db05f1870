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
        let identity: Identity
        let file: HostedFile
        var used: UInt64
    }

    private struct Identity: Equatable {
        let size: Int64
        let modified: FileInfo.Timespec
        /// Changes when the file is replaced or renamed over, even with the same time and size.
        let changed: FileInfo.Timespec
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
    /// stream from disk, or nil when it is gone or not a regular file.
    func file(at location: String) async throws -> HostedContent? {
        let path = FilePath(location)
        let found: FileInfo?
        do {
            found = try await FileSystem.shared.info(forFileAt: path, infoAboutSymbolicLink: false)
        } catch let error as FileSystemError where error.code != .io && error.code != .resourceExhausted {
            return nil  // gone since it was looked up, or no longer readable
        }
        guard let info = found, info.type == .regular else { return nil }
        let identity = Identity(size: info.size, modified: info.lastDataModificationTime, changed: info.lastStatusChangeTime)
        let onDisk = HostedContent.onDisk(HostedDiskFile(location: location, info: info))
        guard info.size <= Self.maxLoadedBytes else { return onDisk }
        let cached: HostedFile? = state.withLock { state in
            guard var entry = state.entries[location], entry.identity == identity else { return nil }
            state.clock += 1
            entry.used = state.clock
            state.entries[location] = entry
            return entry.file
        }
        if let cached { return .loaded(cached) }
        // Reading it (and its compressed forms) holds about twice its size for a moment.
        let held = Int(info.size) * 2
        guard readBudget.reserve(held) else { return onDisk }
        defer { readBudget.release(held) }
        let bytes: ByteBuffer
        do {
            bytes = try await ByteBuffer(contentsOf: path, maximumSizeAllowed: .bytes(Int64(Self.maxLoadedBytes)))
        } catch let error as FileSystemError where error.code == .notFound {
            return nil
        } catch let error as FileSystemError where error.code == .resourceExhausted {
            return onDisk  // it grew past the limit since the stat
        }
        let file = HostedFile(path: location, bytes: Array(bytes.readableBytesView))
        store(file, identity: identity, at: location)
        return .loaded(file)
    }

    private func store(_ file: HostedFile, identity: Identity, at location: String) {
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
