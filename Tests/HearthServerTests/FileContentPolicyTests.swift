@testable import HearthEngine
@testable import HearthServer
import Testing

/// Which stored files a browser may show inline, and what every other one is served as.
@Suite("File content policy")
struct FileContentPolicyTests {
    static func present(
        _ type: String, disposition: String? = nil, name: String = "u/p/file", onAppOrigin: Bool = true
    ) -> FileContentPolicy.Presentation {
        FileContentPolicy.presentation(name: name, contentType: type, storedDisposition: disposition, onAppOrigin: onAppOrigin)
    }

    @Test(arguments: [
        ("image/png", "image/png"), ("image/jpeg", "image/jpeg"), ("IMAGE/JPEG", "image/jpeg"), ("image/gif", "image/gif"),
        ("image/webp", "image/webp"), ("image/avif", "image/avif"), ("audio/mpeg", "audio/mpeg"), ("video/mp4", "video/mp4"),
        ("application/pdf", "application/pdf"), ("text/plain", "text/plain"),
        ("text/plain; charset=UTF-8", "text/plain; charset=UTF-8"), (" image/png ; q=1", "image/png"),
    ])
    func safeTypesAreInline(type: String, sent: String) {
        let presentation = Self.present(type, name: "alice/p1/photo 1.png")
        #expect(presentation.disposition == "inline; filename*=utf-8''photo%201.png")
        #expect(presentation.contentType == sent)
    }

    @Test(arguments: [
        "text/plain; a=b, text/html", "image/png; a=b, text/javascript", "image/png;charset=\"x, text/html\"",
        "text/plain; charset=utf-8, text/html",
    ])
    func onlyTheTypeAndAPlainCharsetArePassedOn(type: String) {
        // Browsers read a list of types as its last one: none may reach the browser.
        let sent = Self.present(type).contentType
        #expect(!sent.contains(","), "\(type) → \(sent)")
        #expect(!sent.contains("html") && !sent.contains("javascript"), "\(type) → \(sent)")
    }

    @Test(arguments: ["text/javascript", "application/javascript", "TEXT/JavaScript; charset=utf-8", "application/x-javascript", "text/css"])
    func scriptsAndStylesAreOnlyBytesOnTheAppOrigin(type: String) {
        // A page of the app's origin may load same-origin scripts: a user's file must not be one.
        #expect(Self.present(type).contentType == "application/octet-stream")
        #expect(Self.present(type).disposition.hasPrefix("attachment;"))
        // On a files origin, which no page's policy lets scripts come from, the type is kept.
        #expect(Self.present(type, onAppOrigin: false).contentType.hasPrefix(type.split(separator: ";")[0].lowercased()))
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
