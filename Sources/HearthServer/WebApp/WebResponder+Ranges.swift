import HTTPTypes
import Hummingbird
import NIOCore

extension WebResponder {
    /// The answer to `request`'s `Range` for `body` (a file whose ETag is `etag`): 206 with the
    /// one range asked for, or 416; nil when the whole file goes (no `Range`, an `If-Range` naming
    /// another version, or a range covering it all). `headers` are the whole file's.
    static func rangeResponse(of body: ByteBuffer, etag: String, to request: Request, headers: HTTPFields) -> Response? {
        guard let range = request.headers[.range], request.headers[.ifRange].map({ $0 == etag }) ?? true else { return nil }
        let size = body.readableBytes
        var headers = headers
        switch ObjectDownload.byteRange(range, size: Int64(size)) {
        case .whole:
            return nil
        case .part(let part):
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(size)"
            headers[.contentLength] = "\(part.count)"
            let slice = body.getSlice(at: body.readerIndex + Int(part.lowerBound), length: Int(part.count))!
            return Response(status: .partialContent, headers: headers, body: .init(byteBuffer: slice))
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentLength] = "0"
            return Response(status: .rangeNotSatisfiable, headers: headers, body: .init())
        }
    }
}
