@testable import HearthServer
import Testing

/// Which stored files a browser may show inline, and what every other one is served as.
@Suite("File content policy")
struct FileContentPolicyTests {
    static func present(_ type: String, disposition: String? = nil, name: String = "u/p/file") -> FileContentPolicy.Presentation {
        FileContentPolicy.presentation(name: name, contentType: type, storedDisposition: disposition)
    }

    @Test(arguments: [
        "image/png", "image/jpeg", "IMAGE/JPEG", "image/gif", "image/webp", "image/avif", "audio/mpeg", "video/mp4",
        "application/pdf", "text/plain", "text/plain; charset=utf-8", " image/png ; q=1",
    ])
    func safeTypesAreInline(type: String) {
        let presentation = Self.present(type, name: "alice/p1/photo 1.png")
        #expect(presentation.disposition == "inline; filename*=utf-8''photo%201.png")
        #expect(presentation.contentType == type)
    }

    @Test(arguments: [
        "image/svg+xml", "text/html", "text/html; charset=utf-8", "application/xhtml+xml", "text/xml", "application/xml",
        "application/javascript", "text/javascript", "application/json", "text/css", "application/octet-stream",
        "multipart/x-mixed-replace; boundary=x", "image/svg+xml; charset=utf-8", "text/plain/html", "application/x-shockwave-flash",
        "text/markdown", "image/x-portable-anymap",
    ])
    func everythingElseIsAnAttachment(type: String) {
        let presentation = Self.present(type, name: "mallory/evil.svg")
        #expect(presentation.disposition == "attachment; filename*=utf-8''evil.svg", "\(type)")
    }

    @Test func aStoredInlineDispositionCannotMakeAnUnsafeTypeInline() {
        let presentation = Self.present("image/svg+xml", disposition: "inline; filename=\"cat.svg\"")
        #expect(presentation.disposition == "attachment; filename=\"cat.svg\"")
        let bare = Self.present("text/html", disposition: "INLINE", name: "a/page.html")
        #expect(bare.disposition == "attachment; filename*=utf-8''page.html")
    }

    @Test func anOwnerMayAskForAnAttachmentOfASafeType() {
        #expect(Self.present("image/png", disposition: "attachment; filename=\"x.png\"").disposition == "attachment; filename=\"x.png\"")
        #expect(Self.present("image/png", disposition: "inline; filename=\"x.png\"").disposition == "inline; filename=\"x.png\"")
    }

    @Test(arguments: ["", "image", "/png", "image/", "image/png, text/html", "text/html\u{0}", "imäge/png", "image/png image/gif"])
    func malformedTypesAreOctetStreamAttachments(type: String) {
        let presentation = Self.present(type)
        #expect(presentation.contentType == "application/octet-stream", "\(type)")
        #expect(presentation.disposition.hasPrefix("attachment;"), "\(type)")
    }

    @Test func strangeDispositionParametersAreReplaced() {
        let presentation = Self.present("text/html", disposition: "inline; filename=\"a\u{7}.html\"", name: "x/a.html")
        #expect(presentation.disposition == "attachment; filename*=utf-8''a.html")
        let unknown = Self.present("image/png", disposition: "form-data; name=x", name: "x/a.png")
        #expect(unknown.disposition == "inline; name=x")
    }
}
