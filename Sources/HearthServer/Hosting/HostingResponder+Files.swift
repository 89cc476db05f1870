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
