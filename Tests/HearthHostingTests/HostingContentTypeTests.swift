import Testing

@testable import HearthHosting

@Suite("Content types by extension")
struct HostingContentTypeTests {
    @Test("Every extension of the table, case-insensitively, and a fallback")
    func table() {
        let expected: [String: String] = [
            "a.html": "text/html; charset=utf-8", "a.css": "text/css; charset=utf-8", "a.js": "text/javascript; charset=utf-8",
            "a.mjs": "text/javascript; charset=utf-8", "a.json": "application/json; charset=utf-8",
            "a.js.map": "application/json; charset=utf-8", "a.svg": "image/svg+xml", "a.png": "image/png", "a.jpg": "image/jpeg",
            "a.jpeg": "image/jpeg", "a.gif": "image/gif", "a.webp": "image/webp", "a.avif": "image/avif", "a.ico": "image/x-icon",
            "a.woff": "font/woff", "a.woff2": "font/woff2", "a.ttf": "font/ttf", "a.otf": "font/otf",
            "a.txt": "text/plain; charset=utf-8", "a.xml": "application/xml; charset=utf-8", "a.wasm": "application/wasm",
            "site.webmanifest": "application/manifest+json; charset=utf-8", "a.pdf": "application/pdf", "a.mp4": "video/mp4",
            "a.webm": "video/webm", "a.mp3": "audio/mpeg", "dir/A.PNG": "image/png",
        ]
        for (name, type) in expected { #expect(HostingContentType.of(name) == type, "\(name)") }
        #expect(HostingContentType.of("README") == "application/octet-stream")
        #expect(HostingContentType.of(".env") == "application/octet-stream")
        #expect(HostingContentType.of("a.unknown") == "application/octet-stream")
    }

    @Test("Text types compress, images and fonts already compressed do not")
    func compressible() {
        #expect(HostingContentType.isCompressible("text/html; charset=utf-8"))
        #expect(HostingContentType.isCompressible("application/json; charset=utf-8"))
        #expect(HostingContentType.isCompressible("image/svg+xml"))
        #expect(HostingContentType.isCompressible("application/wasm"))
        #expect(!HostingContentType.isCompressible("image/png"))
        #expect(!HostingContentType.isCompressible("font/woff2"))
        #expect(!HostingContentType.isCompressible("video/mp4"))
    }
}
