import Crypto
import Foundation
import NIOCore
import NIOFileSystem

/// Streams bytes into a new file, counting them and taking their MD5 as they pass, and refuses
/// to go past a size limit: content is never held whole in memory.
struct BlobWriter {
    let path: FilePath
    private let handle: WriteFileHandle
    private var md5 = Insecure.MD5()
    private(set) var size: Int64
    let limit: Int64

    /// Opens `path` for writing: a new file (which must not exist) when `offset` is nil, else
    /// the existing file at `offset`.
    static func open(_ path: FilePath, at offset: Int64? = nil, limit: Int64) async throws -> BlobWriter {
        let options: OpenOptions.Write = offset == nil ? .newFile(replaceExisting: false) : .modifyFile(createIfNecessary: false)
        let handle = try await FileSystem.shared.openFile(forWritingAt: path, options: options)
        return BlobWriter(path: path, handle: handle, size: offset ?? 0, limit: limit)
    }

    private init(path: FilePath, handle: WriteFileHandle, size: Int64, limit: Int64) {
        self.path = path
        self.handle = handle
        self.size = size
        self.limit = limit
    }

    /// Appends `buffer`.
    /// - Throws: ``FilesError/tooLarge(limit:)`` when the file would pass the limit.
    mutating func append(_ buffer: ByteBuffer) async throws {
        guard buffer.readableBytes > 0 else { return }
        guard size + Int64(buffer.readableBytes) <= limit else { throw FilesError.tooLarge(limit: limit) }
        buffer.withUnsafeReadableBytes { md5.update(bufferPointer: $0) }
        try await handle.write(contentsOf: buffer, toAbsoluteOffset: size)
        size += Int64(buffer.readableBytes)
    }

    /// Writes everything out to the disk and closes the file.
    /// - Returns: the MD5 of the bytes appended through this writer, base64.
    func finish() async throws -> String {
        try await handle.synchronize()
        try await handle.close()
        return Data(md5.finalize()).base64EncodedString()
    }

    /// Closes the file and deletes it.
    func discard() async {
        try? await handle.close()
        _ = try? await FileSystem.shared.removeItem(at: path)
    }

    /// Closes the file, keeping what was written (a resumable upload's chunk).
    func close() async throws {
        try await handle.synchronize()
        try await handle.close()
    }
}
