import HTTPTypes
import HearthHosting
import Hummingbird
import NIOCore

extension HostingResponder {
    /// `file` as `request` asks for it, with `status` (200, or 404 for the site's `404.html`):
    /// compressed when the client accepts it and the type is text; 304 when the client's
    /// `If-None-Match` names the form it would get; a single range (206, or 416) of the bytes
    /// as they are; no body for `HEAD`. `headers` (the owner's) come last and win.
    static func response(_ file: HostedFile, status: Int, to request: Request, headers ownerHeaders: [HostingHeader]) -> Response {
        let ranged = status == 200 && request.method == .get && request.headers[.range] != nil
        // A range is of the bytes as stored, so a ranged request gets them uncompressed.
        let coding = ranged ? nil : HostingCompression.preferred(request.headers[.acceptEncoding]).flatMap { file.encoded[$0] != nil ? $0 : nil }
        let body = coding.flatMap { file.encoded[$0] } ?? file.bytes
        let etag = file.etag(for: coding)
        var headers = HTTPFields()
        headers[.contentType] = file.contentType
        headers[.eTag] = etag
        if !file.encoded.isEmpty { headers[.vary] = "Accept-Encoding" }
        if let coding { headers[.contentEncoding] = coding.rawValue }
        if coding == nil { headers[.acceptRanges] = "bytes" }
        apply(ownerHeaders, to: &headers)
        if status == 200, let tags = request.headers[.ifNoneMatch], WebResponder.matches(tags, etag) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        let size = body.readableBytes
        headers[.contentLength] = "\(size)"
        if ranged, let part = WebResponder.rangeResponse(of: body, etag: etag, to: request, headers: headers) { return part }
        guard request.method != .head else { return Response(status: .init(code: status), headers: headers, body: .init()) }
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: body))
    }

    /// `content` as `request` asks for it, from memory or streamed from disk.
    static func response(_ content: HostedContent, status: Int, to request: Request, headers: [HostingHeader]) async throws -> Response {
        switch content {
        case .loaded(let file): response(file, status: status, to: request, headers: headers)
        case .onDisk(let file): try await response(file, status: status, to: request, headers: headers)
        }
    }

    /// `file` streamed from disk in chunks, opened now (a deploy that replaces it meanwhile
    /// leaves this answer whole): 304 for its ETag, a single range (206, or 416), no body for
    /// `HEAD`.
    static func response(_ file: HostedDiskFile, status: Int, to request: Request, headers ownerHeaders: [HostingHeader]) async throws -> Response {
        var headers = HTTPFields()
        headers[.contentType] = file.contentType
        headers[.eTag] = file.etag
        headers[.acceptRanges] = "bytes"
        apply(ownerHeaders, to: &headers)
        if status == 200, let tags = request.headers[.ifNoneMatch], WebResponder.matches(tags, file.etag) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        var bytes: Range<Int64> = 0..<file.size
        var answer = HTTPResponse.Status(code: status)
        if status == 200, request.method == .get, let range = request.headers[.range], request.headers[.ifRange].map({ $0 == file.etag }) ?? true {
            switch ObjectDownload.byteRange(range, size: file.size) {
            case .whole: break
            case .part(let part):
                bytes = part
                answer = .partialContent
                headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(file.size)"
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(file.size)"
                headers[.contentLength] = "0"
                return Response(status: .rangeNotSatisfiable, headers: headers, body: .init())
            }
        }
        headers[.contentLength] = "\(bytes.count)"
        guard request.method != .head else { return Response(status: answer, headers: headers, body: .init()) }
        let body = try await ObjectDownload.streamedBody(of: file.location, bytes: bytes)
        return Response(status: answer, headers: headers, body: body)
    }

    /// The owner's headers set on `headers`, each replacing what was there.
    static func apply(_ owner: [HostingHeader], to headers: inout HTTPFields) {
        for header in owner {
            guard let name = HTTPField.Name(header.name) else { continue }
            headers[name] = header.value
        }
    }

    /// The 404 page of a site with no `404.html`, like Firebase's own.
    static func notFound(headers owner: [HostingHeader]) -> Response {
        let page = """
            <!doctype html>
            <meta charset="utf-8">
            <title>Page Not Found</title>
            <h1>Page Not Found</h1>
            <p>This file does not exist and there was no index.html found in the current directory or 404.html in the root directory.</p>

            """
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8", .contentLength: "\(page.utf8.count)"]
        apply(owner, to: &headers)
        return Response(status: .notFound, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// A short plain-text answer.
    static func plain(_ status: HTTPResponse.Status, _ text: String, headers owner: [HostingHeader] = []) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8", .contentLength: "\(text.utf8.count + 1)"]
        apply(owner, to: &headers)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
