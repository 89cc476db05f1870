import FuzzSupport
import HearthFiles
import Hummingbird
import NIOCore

@testable import HearthEngine
@testable import HearthServer

/// A `multipart/related` upload as a Storage SDK sends it: the request's Content-Type (its
/// boundary), then the body, arriving in three pieces, read as the files responder reads it:
/// the metadata part (JSON: fields, custom metadata, the object's name), the content part's
/// type, then the content streamed to its end. Whatever the body, reading it ends in the
/// content or in a ``FilesError`` (a 400 in Firebase's shape), never another error.
///
/// The input is NUL-separated: the Content-Type, then the body (which may hold NULs).
@main
struct MultipartFuzz {
    static func main() {
        Fuzzer.run { bytes in
            let parts = Fuzzer.sections(bytes, count: 2)
            let contentType = Fuzzer.text(parts[0])
            _ = try? ObjectName.validatedContentType(contentType)
            guard let boundary = MultipartUpload.boundary(in: contentType) else { return }
            let body = parts[1]
            let third = body.count / 3
            let pieces = [body[..<third], body[third..<(2 * third)], body[(2 * third)...]].map { ByteBuffer(bytes: $0) }
            Fuzzer.wait {
                let upload = MultipartUpload(
                    boundary: boundary, body: RequestBody(asyncSequence: Pieces(buffers: pieces)),
                    maxMetadataBytes: FilesResponder.maxMetadataBytes)
                do {
                    let (metadata, partType) = try await upload.readMetadata()
                    _ = try? FilesResponder.fields(fromJSON: metadata)
                    if let name = FilesResponder.jsonName(metadata) { _ = try? ObjectName.validated(name) }
                    if let partType { _ = try? ObjectName.validatedContentType(partType) }
                    var received = 0
                    for try await buffer in upload.content { received += buffer.readableBytes }
                    Fuzzer.expect(received <= body.count, "\(received) bytes of content from a body of \(body.count)")
                } catch {
                    Fuzzer.expect(error is FilesError, "reading the upload failed with \(type(of: error)): \(error)")
                }
            }
        }
    }
}

/// A request body that arrives in the given pieces.
struct Pieces: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let buffers: [ByteBuffer]

    func makeAsyncIterator() -> Iterator { Iterator(buffers: buffers[...]) }

    struct Iterator: AsyncIteratorProtocol {
        var buffers: ArraySlice<ByteBuffer>
        mutating func next() async -> ByteBuffer? { buffers.popFirst() }
    }
}
