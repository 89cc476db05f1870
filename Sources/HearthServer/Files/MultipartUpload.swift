import Foundation
import HearthEngine
import HearthFiles
import Hummingbird
import NIOCore

/// A `multipart/related` upload as the Firebase SDKs send it: a JSON metadata part, then the
/// content part. The metadata is read first; the content then streams out of ``content`` as
/// the request body arrives, never held whole in memory.
///
/// Used by one task at a time (the request's).
final class MultipartUpload {
    private var body: RequestBody.AsyncIterator
    private var reader: MultipartReader
    private let maxMetadataBytes: Int
    private var part = 0
    private var metadata: [UInt8] = []
    private var contentType: String?
    private var contentStarted = false
    private var pending: [ByteBuffer] = []
    private var bodyEnded = false
    /// Content-part bytes the reader has handed out so far.
    private var contentSeen: Int64 = 0

    init(boundary: String, body: RequestBody, maxMetadataBytes: Int) {
        self.body = body.makeAsyncIterator()
        self.reader = MultipartReader(boundary: boundary)
        self.maxMetadataBytes = maxMetadataBytes
    }

    /// The boundary of a `multipart/…; boundary=…` content type.
    static func boundary(in contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
            return value.isEmpty || value.utf8.count > 200 ? nil : value
        }
        return nil
    }

    /// Feeds the reader the next piece of the request body; false when the body has ended.
    private func feed() async throws -> Bool {
        guard !bodyEnded, let buffer = try await body.next() else {
            bodyEnded = true
            return false
        }
        let events: [MultipartReader.Event]
        do {
            events = try reader.read(buffer)
        } catch {
            throw FilesError.badRequest("Malformed multipart body.")
        }
        for event in events {
            switch event {
            case .header(let name, let value):
                if part == 1 && name.lowercased() == "content-type" { contentType = value }
            case .content(let bytes):
                switch part {
                case 0:
                    guard metadata.count + bytes.readableBytes <= maxMetadataBytes else {
                        throw FilesError.badRequest("The metadata is too large.")
                    }
                    metadata += bytes.readableBytesView
                case 1:
                    contentStarted = true
                    contentSeen += Int64(bytes.readableBytes)
                    pending.append(bytes)
                default:
                    break
                }
            case .partEnd:
                part += 1
            }
        }
        return true
    }

    /// The metadata part's bytes and the content part's content type (if it has one).
    func readMetadata() async throws -> (metadata: [UInt8], contentType: String?) {
        // Read until the content part's headers are through (its body has begun or it ended).
        while part == 0 || (part == 1 && !contentStarted) {
            guard try await feed() else {
                throw FilesError.badRequest("The multipart body ended before its content part.")
            }
        }
        return (metadata, contentType?.trimmingCharacters(in: .whitespaces))
    }

    /// The most the content part can hold, known once ``readMetadata()`` has returned: its
    /// size when it has ended already, else what is left of the body's `contentLength` after
    /// the part's start, less the closing delimiter (exact unless an epilogue follows); nil
    /// when neither is known. Uploads are judged by it before the content is read.
    func contentSizeBound(contentLength: Int64?) -> Int64? {
        if part >= 2 { return contentSeen }
        guard let contentLength else { return nil }
        let contentStart = reader.position - contentSeen
        return max(0, contentLength - contentStart - Int64(reader.closingDelimiterLength))
    }

    /// The content part's bytes, as they arrive.
    var content: Content { Content(upload: self) }

    struct Content: AsyncSequence {
        typealias Element = ByteBuffer
        let upload: MultipartUpload

        func makeAsyncIterator() -> Iterator { Iterator(upload: upload) }

        struct Iterator: AsyncIteratorProtocol {
            let upload: MultipartUpload

            mutating func next() async throws -> ByteBuffer? {
                while true {
                    if !upload.pending.isEmpty { return upload.pending.removeFirst() }
                    if upload.part >= 2 { return nil }
                    guard try await upload.feed() else {
                        throw FilesError.badRequest("The multipart body ended before its closing boundary.")
                    }
                }
            }
        }
    }
}
