import HearthFiles
import NIOCore

/// A resumable upload chunk's body as the store takes it: the first `skip` bytes (which the
/// upload already has: a client sending again a chunk whose answer it missed) left out, and no
/// more than `limit` bytes after them, as its `Content-Range` said.
struct ChunkBody<Base: AsyncSequence>: AsyncSequence where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let skip: Int64
    let limit: Int64

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), skip: skip, left: limit) }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        var skip: Int64
        var left: Int64

        mutating func next() async throws -> ByteBuffer? {
            while var buffer = try await base.next() {
                if skip > 0 {
                    let dropped = Int(Swift.min(skip, Int64(buffer.readableBytes)))
                    buffer.moveReaderIndex(forwardBy: dropped)
                    skip -= Int64(dropped)
                }
                guard buffer.readableBytes > 0 else { continue }
                guard Int64(buffer.readableBytes) <= left else {
                    throw FilesError.badRequest("The chunk is longer than its Content-Range says.")
                }
                left -= Int64(buffer.readableBytes)
                return buffer
            }
            return nil
        }
    }
}
