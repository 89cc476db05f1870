import Foundation
import NIOCore
import NIOFileSystem

extension FileStore {
    /// The most objects one ``compose(_:bucket:name:fields:authorize:)`` joins, as in Cloud Storage.
    public static let maxComposeSources = 32

    /// Makes the object `name` in `bucket` a copy of `source`'s content with `fields` as its
    /// metadata: a new object with a generation of its own, written and judged by `authorize`
    /// as ``upload(bucket:name:fields:declaredSize:body:authorize:)`` writes and judges an
    /// upload (so the same size limits and the same bound on unfinished uploads hold).
    public func copy(
        _ source: StoredObject, bucket: String, name: String, fields: ObjectFields, authorize: Authorization = { _, _ in }
    ) async throws -> StoredObject {
        try await compose([source], bucket: bucket, name: name, fields: fields, authorize: authorize)
    }

    /// Makes the object `name` in `bucket` the content of `sources`, one after the other (Cloud
    /// Storage's compose), with `fields` as its metadata; see ``copy(_:bucket:name:fields:authorize:)``.
    /// - Throws: 400 for no sources or more than ``maxComposeSources``; ``FilesError/notFound``
    ///   when a source's content is gone (it was replaced or deleted since it was read).
    public func compose(
        _ sources: [StoredObject], bucket: String, name: String, fields: ObjectFields, authorize: Authorization = { _, _ in }
    ) async throws -> StoredObject {
        guard !sources.isEmpty, sources.count <= Self.maxComposeSources else {
            throw FilesError.badRequest("A compose takes 1 to \(Self.maxComposeSources) source objects.")
        }
        // Opened before anything is written: a source replaced meanwhile is still read whole.
        var handles: [ReadFileHandle] = []
        do {
            for source in sources {
                handles.append(try await FileSystem.shared.openFile(forReadingAt: FilePath(contentPath(of: source)), options: .init()))
            }
        } catch {
            for handle in handles { try? await handle.close() }
            throw FilesError.notFound
        }
        let size = sources.reduce(Int64(0)) { $0 + $1.size }
        do {
            let object = try await upload(
                bucket: bucket, name: name, fields: fields, declaredSize: size, body: JoinedContent(handles: handles),
                authorize: authorize)
            for handle in handles { try? await handle.close() }
            return object
        } catch {
            for handle in handles { try? await handle.close() }
            throw error
        }
    }
}

/// The content of several open files, one after the other, in chunks.
struct JoinedContent: AsyncSequence {
    typealias Element = ByteBuffer
    let handles: [ReadFileHandle]

    func makeAsyncIterator() -> Iterator { Iterator(remaining: handles[...]) }

    struct Iterator: AsyncIteratorProtocol {
        var remaining: ArraySlice<ReadFileHandle>
        var current: FileChunks.AsyncIterator?

        mutating func next() async throws -> ByteBuffer? {
            while true {
                if current == nil {
                    guard let handle = remaining.popFirst() else { return nil }
                    current = handle.readChunks(chunkLength: .kibibytes(512)).makeAsyncIterator()
                }
                if let chunk = try await current?.next() { return chunk }
                current = nil
            }
        }
    }
}
