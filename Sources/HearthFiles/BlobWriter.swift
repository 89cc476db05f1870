import Crypto
import Foundation
import NIOCore
import NIOFileSystem

/// Streams bytes into a new file, counting them and taking their MD5 and CRC-32C as they pass, and refuses
/// to go past a size limit: content is never held whole in memory.
struct BlobWriter {
    let path: FilePath
    private let handle: WriteFileHandle
    private var md5 = Insecure.MD5()
    private var crc32c = CRC32C()
    private(set) var size: Int64
    let limit: Int64
    /// What passing the limit throws.
    let overflow: FilesError
    /// Where each piece is counted before it is written; the caller gives the count back
    /// when the bytes leave (``written`` says how many this writer added).
    let pending: PendingBytes?
    /// Bytes this writer added to the file (and to ``pending``).
    private(set) var written: Int64 = 0

    /// Opens `path` for writing: a new file (which must not exist) when `offset` is nil, else
    /// the existing file at `offset`.
    /// - Parameter overflow: what passing `limit` throws (by default, that the object is too large).
    static func open(
        _ path: FilePath, at offset: Int64? = nil, limit: Int64, overflow: FilesError? = nil, pending: PendingBytes? = nil
    ) async throws -> BlobWriter {
        let options: OpenOptions.Write = offset == nil ? .newFile(replaceExisting: false) : .modifyFile(createIfNecessary: false)
        let handle = try await FileSystem.shared.openFile(forWritingAt: path, options: options)
        return BlobWriter(
            path: path, handle: handle, size: offset ?? 0, limit: limit, overflow: overflow ?? .tooLarge(limit: limit),
            pending: pending)
    }

    private init(path: FilePath, handle: WriteFileHandle, size: Int64, limit: Int64, overflow: FilesError, pending: PendingBytes?) {
        self.path = path
        self.handle = handle
        self.size = size
        self.limit = limit
        self.overflow = overflow
        self.pending = pending
    }

    /// Appends `buffer`; a buffer that would pass a limit is refused whole, before any of it
    /// is written.
    /// - Throws: ``overflow`` when the file would pass the limit; ``FilesError/uploadsFull``
    ///   when unfinished uploads would hold more than they may.
    mutating func append(_ buffer: ByteBuffer) async throws {
        guard buffer.readableBytes > 0 else { return }
        let count = Int64(buffer.readableBytes)
        guard size + count <= limit else { throw overflow }
        try pending?.reserve(count)
        do {
            try await handle.write(contentsOf: buffer, toAbsoluteOffset: size)
        } catch {
            // Not knowing how much of it reached the file, count none of it; the next
            // measure of the folder corrects the count.
            pending?.release(count)
            throw error
        }
        buffer.withUnsafeReadableBytes { bytes in
            md5.update(bufferPointer: bytes)
            crc32c.update(bytes)
        }
        size += count
        written += count
    }

    /// Writes everything out to the disk and closes the file.
    /// - Returns: the digests of the bytes appended through this writer.
    func finish() async throws -> ContentDigests {
        try await handle.synchronize()
        try await handle.close()
        return ContentDigests(md5: Data(md5.finalize()).base64EncodedString(), crc32c: crc32c.base64)
    }

    /// Closes the file and deletes it, counting its bytes out of ``pending``.
    func discard() async {
        try? await handle.close()
        _ = try? await FileSystem.shared.removeItem(at: path)
        pending?.release(written)
    }

    /// Closes the file, keeping what was written (a resumable upload's chunk).
    func close() async throws {
        try await handle.synchronize()
        try await handle.close()
    }
}
