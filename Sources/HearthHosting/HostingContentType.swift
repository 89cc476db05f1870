import Foundation

/// The `Content-Type` of a hosted file, by its extension (case-insensitive), and whether the type
/// is text that compresses well.
public enum HostingContentType {
    /// Extensions and their types; text types carry their charset.
    public static let byExtension: [String: String] = [
        "html": "text/html; charset=utf-8",
        "htm": "text/html; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8",
        "json": "application/json; charset=utf-8",
        "map": "application/json; charset=utf-8",
        "svg": "image/svg+xml",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "gif": "image/gif",
        "webp": "image/webp",
        "avif": "image/avif",
        "ico": "image/x-icon",
        "woff": "font/woff",
        "woff2": "font/woff2",
        "ttf": "font/ttf",
        "otf": "font/otf",
        "txt": "text/plain; charset=utf-8",
        "xml": "application/xml; charset=utf-8",
        "wasm": "application/wasm",
        "webmanifest": "application/manifest+json; charset=utf-8",
        "pdf": "application/pdf",
        "mp4": "video/mp4",
        "webm": "video/webm",
        "mp3": "audio/mpeg",
    ]

    /// What a file of no known extension is sent as.
    public static let fallback = "application/octet-stream"

    /// The type of the file at `path` (`/app/main.js`, `index.html`).
    public static func of(_ path: some StringProtocol) -> String {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return fallback }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? fallback
    }

    /// Whether a response of `contentType` is worth compressing: text, JSON, XML, JavaScript, SVG
    /// and WebAssembly (images, fonts in WOFF and media are compressed already).
    public static func isCompressible(_ contentType: some StringProtocol) -> Bool {
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type.hasPrefix("text/") || type.hasSuffix("+json") || type.hasSuffix("+xml")
            || ["application/json", "application/xml", "application/javascript", "application/wasm", "font/ttf", "font/otf", "image/x-icon"]
                .contains(type)
    }
}
