import Foundation
import HearthFiles
import HTTPTypes
import Hummingbird
import NIOCore
import NIOFileSystem

/// An object's content as a response, the same for every storage API (Firebase Storage's
/// `alt=media`, Cloud Storage's JSON API downloads): presented by ``FileContentPolicy`` (never
/// the stored type and disposition as given), with `ETag`, `Last-Modified`, conditional
/// requests and one byte range (206 with `Content-Range`), streamed from the content file
/// opened at once, so an object replaced or deleted meanwhile is still read whole.
enum ObjectDownload {
    /// A `Range` outside the object: each API's error format answers it 416 with
    /// `Content-Range: bytes */<size>`.
    struct UnsatisfiableRange: Error {
        let size: Int64

        /// The `Content-Range` header of the refusal.
        var headers: HTTPFields {
            var headers = HTTPFields()
            headers[.contentRange] = "bytes */\(size)"
            return headers
        }
    }

    /// The answer to a download of `object` from `store`.
    /// - Parameters:
    ///   - onAppOrigin: true when the request came to the app's own origin rather than a files origin.
    ///   - headers: the API's own headers for this object (Cloud Storage's `x-goog-…`).
    /// - Throws: ``UnsatisfiableRange`` for a range outside the object.
    static func response(
        _ object: StoredObject, store: FileStore, request: Request, onAppOrigin: Bool, headers extra: HTTPFields = [:]
    ) async throws -> Response {
        var headers = extra
        let etag = "\"\(object.etag)\""
        let lastModified = httpDate(object.updated)
        headers[.eTag] = etag
        headers[.lastModified] = lastModified
        headers[.acceptRanges] = "bytes"
        // Never the stored type and disposition as given: see FileContentPolicy.
        let presentation = FileContentPolicy.presentation(
            name: object.name, contentType: object.contentType, storedDisposition: object.contentDisposition,
            onAppOrigin: onAppOrigin)
        headers[.contentType] = presentation.contentType
        headers[.contentDisposition] = presentation.disposition
        if let cacheControl = object.cacheControl { headers[.cacheControl] = cacheControl }
        if let language = object.contentLanguage { headers[.contentLanguage] = language }
        if let encoding = object.contentEncoding, encoding != "identity" { headers[.contentEncoding] = encoding }
        if notModified(request, etag: etag, updated: object.updated) {
            return Response(status: .notModified, headers: headers)
        }
        var range: Range<Int64> = 0..<object.size
        var status = HTTPResponse.Status.ok
        if let header = request.headers[.range], ifRangeHolds(request, etag: etag, lastModified: lastModified) {
            switch byteRange(header, size: object.size) {
            case .whole: break
            case .part(let part):
                range = part
                status = .partialContent
                headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(object.size)"
            case .unsatisfiable:
                throw UnsatisfiableRange(size: object.size)
            }
        }
        // Opened now: a replaced or deleted object's content stays readable through this handle.
        let body = try await streamedBody(of: store.contentPath(of: object), bytes: range)
        return Response(status: status, headers: headers, body: body)
    }

    /// `bytes` of the file at `path` as a body read in chunks as the client takes them, the
    /// file opened now (so a file replaced or deleted meanwhile is still read whole).
    static func streamedBody(of path: String, bytes: Range<Int64>) async throws -> ResponseBody {
        let handle = try await FileSystem.shared.openFile(forReadingAt: FilePath(path), options: .init())
        return ResponseBody(contentLength: Int(bytes.count)) { writer in
            do {
                if !bytes.isEmpty {
                    for try await chunk in handle.readChunks(in: bytes, chunkLength: .kibibytes(512)) {
                        try await writer.write(chunk)
                    }
                }
                try await handle.close()
            } catch {
                try? await handle.close()
                throw error
            }
            try await writer.finish(nil)
        }
    }

    // MARK: - HTTP details

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ milliseconds: Int64) -> String {
        httpDateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000)))
    }

    private static func httpDateFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    /// True when `If-None-Match` names the current ETag, or (without it) `If-Modified-Since`
    /// is no earlier than the last change.
    static func notModified(_ request: Request, etag: String, updated: Int64) -> Bool {
        if let match = request.headers[.ifNoneMatch] {
            return match == "*" || match.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
        }
        if let since = request.headers[.ifModifiedSince], let date = httpDateFormatter().date(from: since) {
            return Int64(date.timeIntervalSince1970) >= updated / 1000
        }
        return false
    }

    /// `If-Range`: a range applies only while the ETag or date it names is current.
    static func ifRangeHolds(_ request: Request, etag: String, lastModified: String) -> Bool {
        guard let condition = request.headers[.ifRange] else { return true }
        return condition == etag || condition == lastModified
    }

    enum ByteRange: Equatable {
        case whole
        case part(Range<Int64>)
        case unsatisfiable
    }

    /// One byte range of a `Range` header (`bytes=a-b`, `bytes=a-`, `bytes=-n`); several
    /// ranges or another unit get the whole content, as RFC 9110 allows.
    static func byteRange(_ header: String, size: Int64) -> ByteRange {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .whole }
        if parts[0].isEmpty {
            guard let suffix = Int64(parts[1]), suffix > 0 else { return .unsatisfiable }
            return size == 0 ? .unsatisfiable : .part(max(0, size - suffix)..<size)
        }
        guard let start = Int64(parts[0]), start >= 0 else { return .whole }
        guard start < size else { return .unsatisfiable }
        var end = size - 1
        if !parts[1].isEmpty {
            guard let last = Int64(parts[1]), last >= start else { return .whole }
            end = min(last, size - 1)
        }
        return .part(start..<(end + 1))
    }
}
