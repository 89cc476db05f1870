import Foundation
import HearthEngine

/// How a stored file's content is presented to a browser, decided from its stored content
/// type and disposition alone (pure; no I/O).
///
/// Uploaded content is written by users, and Hearth may serve it from the app's own origin, so
/// nothing a user uploads may ever be rendered as a document that runs script there. Only types
/// a browser shows without running anything are `inline`: raster images, audio, video, PDF and
/// plain text. Everything else — HTML, SVG, XML, JavaScript, unknown or malformed types — is an
/// `attachment`, whatever disposition its metadata asks for. The response headers
/// (``SecurityHeaders``) add `nosniff` and a sandboxing CSP on top, so even a browser that
/// ignored the disposition would not run it.
enum FileContentPolicy {
    /// Raster image types browsers display without a script engine. SVG is not one of them.
    static let inlineImageTypes: Set<String> = [
        "image/png", "image/jpeg", "image/jpg", "image/pjpeg", "image/gif", "image/webp", "image/avif", "image/apng",
        "image/bmp", "image/x-ms-bmp", "image/x-icon", "image/vnd.microsoft.icon", "image/heic", "image/heif",
    ]
    /// Other types shown inline: PDF (the browser's viewer) and plain text.
    static let inlineOtherTypes: Set<String> = ["application/pdf", "text/plain"]
    /// Types a page runs or applies when it loads them as a script, worker or stylesheet (the
    /// WHATWG's JavaScript MIME types, and CSS). With `nosniff`, a browser refuses any other type
    /// for those, so sent as `application/octet-stream` from the app's origin they cannot get
    /// past the pages' `script-src 'self'`.
    static let pageExecutableTypes: Set<String> = [
        "application/ecmascript", "application/javascript", "application/x-ecmascript", "application/x-javascript",
        "text/ecmascript", "text/javascript", "text/javascript1.0", "text/javascript1.1", "text/javascript1.2",
        "text/javascript1.3", "text/javascript1.4", "text/javascript1.5", "text/jscript", "text/livescript",
        "text/x-ecmascript", "text/x-javascript", "text/css",
    ]

    /// What a download is served as.
    struct Presentation: Equatable {
        /// The `Content-Type` header.
        var contentType: String
        /// The `Content-Disposition` header.
        var disposition: String
    }

    /// The presentation of the object `name` stored with `contentType` and, if any, the
    /// `storedDisposition` from its metadata; `onAppOrigin` when it is served from the app's
    /// own origin rather than a files origin.
    static func presentation(
        name: String, contentType: String, storedDisposition: String?, onAppOrigin: Bool = true
    ) -> Presentation {
        let mediaType = Self.mediaType(contentType)
        let inline = mediaType.map(isSafeInline) ?? false
        // Only the type and a well-formed charset are passed on: browsers read a Content-Type
        // of several types (`a; x=y, text/html`) as its last one, and guess from what they
        // cannot parse.
        let sentType: String
        if let mediaType, !(onAppOrigin && pageExecutableTypes.contains(mediaType)) {
            sentType = charset(of: contentType).map { "\(mediaType); charset=\($0)" } ?? mediaType
        } else {
            sentType = "application/octet-stream"
        }
        let filename = filenameParameters(storedDisposition) ?? "filename*=utf-8''\(encodedFileName(name))"
        let asked = storedDisposition.flatMap(dispositionType)
        // The owner may ask for an attachment of anything; inline only where it is safe.
        let type = inline && asked != "attachment" ? "inline" : "attachment"
        return Presentation(contentType: sentType, disposition: "\(type); \(filename)")
    }

    /// True for media types (lowercased, without parameters) safe to render inline.
    static func isSafeInline(_ mediaType: String) -> Bool {
        if inlineImageTypes.contains(mediaType) || inlineOtherTypes.contains(mediaType) { return true }
        // Audio and video play in the browser's media player; none of these types is a document.
        return mediaType.hasPrefix("audio/") || mediaType.hasPrefix("video/")
    }

    /// The `type/subtype` of a `Content-Type` value, lowercased, or nil when it is not one
    /// well-formed media type (empty, several types, stray characters).
    static func mediaType(_ contentType: String) -> String? {
        let essence = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let trimmed = essence.trimmingCharacters(in: .whitespaces).lowercased()
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(isTokenByte) }) else { return nil }
        return trimmed
    }

    /// The `charset` parameter of a `Content-Type`, when it is one plain token.
    static func charset(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            return !value.isEmpty && value.utf8.count <= 40 && value.utf8.allSatisfy(isTokenByte) ? value : nil
        }
        return nil
    }

    /// RFC 9110's token characters.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// `inline` or `attachment` (lowercased) from a stored disposition, nil for anything else.
    private static func dispositionType(_ disposition: String) -> String? {
        let type = disposition.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0].trimmingCharacters(in: .whitespaces).lowercased()
        return type == "inline" || type == "attachment" ? type : nil
    }

    /// The parameters after the type of a stored disposition (`filename=…`), if it has any
    /// and they hold no control characters.
    private static func filenameParameters(_ disposition: String?) -> String? {
        guard let disposition else { return nil }
        let parts = disposition.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let parameters = parts[1].trimmingCharacters(in: .whitespaces)
        guard !parameters.isEmpty, !parameters.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return nil
        }
        return parameters
    }

    /// The last segment of `name`, percent-encoded as RFC 5987 asks.
    static func encodedFileName(_ name: String) -> String {
        let file = name.split(separator: "/").last.map(String.init) ?? name
        return file.addingPercentEncoding(withAllowedCharacters: .rfc5987) ?? "file"
    }
}
