import Foundation
import HearthServer
import HearthTesting
import Testing

/// The security headers on every kind of response, uploaded files that must never run as the
/// app, and JSONP that pages of the server's own origin cannot load.
@Suite("Security headers")
struct SecurityHeadersTests {
    static let admin = TestServer.adminHeaders
    static let objects = FilesEndpointTests.objects

    /// Checks the headers every API answer (JSON, errors, streams) carries.
    static func expectAPIHeaders(_ result: HTTPResult, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.header("X-Content-Type-Options") == "nosniff", "\(label)", sourceLocation: sourceLocation)
        #expect(
            result.header("Content-Security-Policy") == "sandbox; default-src 'none'; frame-ancestors 'none'", "\(label)",
            sourceLocation: sourceLocation)
        #expect(result.header("X-Frame-Options") == "DENY", "\(label)", sourceLocation: sourceLocation)
        #expect(result.header("Referrer-Policy") == "no-referrer", "\(label)", sourceLocation: sourceLocation)
    }

    static func expectFileHeaders(_ result: HTTPResult, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.header("X-Content-Type-Options") == "nosniff", "\(label)", sourceLocation: sourceLocation)
        #expect(result.header("Content-Security-Policy") == "sandbox; default-src 'none'", "\(label)", sourceLocation: sourceLocation)
        #expect(result.header("Referrer-Policy") == "no-referrer", "\(label)", sourceLocation: sourceLocation)
    }

    static func expectPageHeaders(
        _ result: HTTPResult, _ label: String, filesOrigin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.header("X-Content-Type-Options") == "nosniff", "\(label)", sourceLocation: sourceLocation)
        let policy = result.header("Content-Security-Policy") ?? ""
        let directives = Dictionary(
            policy.split(separator: ";").map { part -> (String, String) in
                let words = part.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
                return (String(words[0]), words.count > 1 ? String(words[1]) : "")
            }, uniquingKeysWith: { first, _ in first })
        #expect(directives["default-src"] == "'none'", "\(label): \(policy)", sourceLocation: sourceLocation)
        #expect(directives["script-src"] == "'self'", "\(label): \(policy)", sourceLocation: sourceLocation)
        #expect(directives["style-src"] == "'self'", "\(label): \(policy)", sourceLocation: sourceLocation)
        #expect(directives["frame-ancestors"] == "'none'", "\(label): \(policy)", sourceLocation: sourceLocation)
        #expect(directives["object-src"] == "'none'", "\(label): \(policy)", sourceLocation: sourceLocation)
        #expect(directives["base-uri"] == "'none'", "\(label): \(policy)", sourceLocation: sourceLocation)
        let images = directives["img-src"] ?? ""
        #expect(images.contains("blob:") && images.contains("'self'"), "\(label): \(policy)", sourceLocation: sourceLocation)
        #expect(directives["connect-src"]?.hasPrefix("'self'") == true, "\(label): \(policy)", sourceLocation: sourceLocation)
        if let filesOrigin {
            #expect(images.contains(filesOrigin), "\(label): \(policy)", sourceLocation: sourceLocation)
            #expect(directives["connect-src"]?.contains(filesOrigin) == true, "\(label): \(policy)", sourceLocation: sourceLocation)
        }
        #expect(!policy.contains("unsafe"), "\(label): \(policy)", sourceLocation: sourceLocation)
        #expect(result.header("X-Frame-Options") == "DENY", "\(label)", sourceLocation: sourceLocation)
        #expect(result.header("Referrer-Policy") == "same-origin", "\(label)", sourceLocation: sourceLocation)
        #expect(result.header("Cross-Origin-Opener-Policy") == "same-origin-allow-popups", "\(label)", sourceLocation: sourceLocation)
    }

    @Test func everyKindOfAPIResponseCarriesTheHeaders() async throws {
        try await withServer { server in
            let signUp = try await server.request(
                "POST", AuthEndpointTests.identity + "accounts:signUp", body: #"{"returnSecureToken":true}"#,
                headers: ["Content-Type": "application/json"])
            let cases: [(String, HTTPResult)] = [
                ("read", try await server.request("GET", "/a.json")),
                ("write", try await server.request("PUT", "/a.json", body: "1")),
                ("bad write", try await server.request("PUT", "/a.json", body: "{")),
                ("rules", try await server.request("GET", "/.settings/rules.json", headers: Self.admin)),
                ("denied rules", try await server.request("GET", "/.settings/rules.json")),
                ("JSONP", try await server.request("GET", "/a.json?callback=show")),
                ("download", try await server.request("GET", "/a.json?download=a.txt")),
                ("sign-up", signUp),
                ("auth error", try await server.request("POST", AuthEndpointTests.identity + "accounts:nothing", body: "{}")),
                ("keys", try await server.request("GET", "/.well-known/jwks.json")),
                ("stats", try await server.request("GET", "/.hearth/stats", headers: Self.admin)),
                ("stats refused", try await server.request("GET", "/.hearth/stats")),
                ("session", try await server.request("POST", "/.hearth/session/token")),
                ("preflight", try await server.request("OPTIONS", "/a.json", headers: ["Origin": "https://x.example"])),
                ("not found", try await server.request("DELETE", "/nothing")),
            ]
            for (label, result) in cases { Self.expectAPIHeaders(result, label) }
        }
    }

    @Test func aStreamCarriesTheHeaders() async throws {
        try await withServer { server in
            let connection = try RawHTTPConnection(
                port: server.port, request: "GET /a.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            defer { connection.disconnect() }
            let head = await connection.read(untilContaining: "event: put").lowercased()
            #expect(head.contains("content-type: text/event-stream"))
            #expect(head.contains("x-content-type-options: nosniff"))
            #expect(head.contains("content-security-policy: sandbox; default-src 'none'; frame-ancestors 'none'"))
        }
    }

    @Test func pagesCarryAStrictPolicy() async throws {
        try await WebAndStatsTests.withWebRoot(["index.html": "<!doctype html>app", "app/main.js": "1", "console/index.html": "c"]) { server in
            for path in ["/", "/app/main.js", "/console/", "/__/firebase/init.json", "/app/missing.js"] {
                Self.expectPageHeaders(try await server.request("GET", path), path)
            }
        }
    }

    @Test func uploadedFilesNeverRunAsDocuments() async throws {
        try await withServer { server in
            let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>"#.utf8)
            let html = Data("<!doctype html><script>alert(1)</script>".utf8)
            let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            _ = try await FilesEndpointTests.upload(server, "mallory/evil.svg", svg, type: "image/svg+xml")
            _ = try await FilesEndpointTests.upload(server, "mallory/page.html", html, type: "text/html")
            // A type that claims to be an image but holds a page: nosniff keeps it an image.
            _ = try await FilesEndpointTests.upload(server, "mallory/fake.png", html, type: "image/png")
            _ = try await FilesEndpointTests.upload(server, "alice/photo.png", png, type: "image/png")
            // Metadata asking for inline display of a page changes nothing.
            let patched = try await server.request(
                "PATCH", FilesEndpointTests.path("mallory/page.html"), body: #"{"contentDisposition": "inline"}"#,
                headers: ["Content-Type": "application/json"])
            #expect(patched.status == 200, "\(patched.text)")

            let cases: [(String, String, String)] = [
                ("mallory/evil.svg", "image/svg+xml", "attachment"),
                ("mallory/page.html", "text/html", "attachment"),
                ("mallory/fake.png", "image/png", "inline"),
                ("alice/photo.png", "image/png", "inline"),
            ]
            for (name, type, disposition) in cases {
                let result = try await server.request("GET", FilesEndpointTests.path(name) + "?alt=media")
                #expect(result.status == 200, "\(name)")
                #expect(result.header("Content-Type") == type, "\(name)")
                #expect(result.header("Content-Disposition")?.hasPrefix("\(disposition);") == true, "\(name): \(result.headers)")
                Self.expectFileHeaders(result, name)
                let ranged = try await server.request(
                    "GET", FilesEndpointTests.path(name) + "?alt=media", headers: ["Range": "bytes=0-3"])
                #expect(ranged.status == 206)
                Self.expectFileHeaders(ranged, "\(name) range")
                #expect(ranged.header("Content-Disposition")?.hasPrefix("\(disposition);") == true, "\(name)")
            }
            // The metadata tells what a download is served as, unless the owner set one.
            let svgMetadata = FilesEndpointTests.json(try await server.request("GET", FilesEndpointTests.path("mallory/evil.svg")))
            #expect(svgMetadata["contentDisposition"] as? String == "attachment; filename*=utf-8''evil.svg")
            for result in [
                try await server.request("GET", FilesEndpointTests.path("mallory/evil.svg")),
                try await server.request("GET", FilesEndpointTests.path("nobody/none.png") + "?alt=media"),
                try await server.request("GET", Self.objects + "?prefix=mallory/"),
                try await server.request("DELETE", FilesEndpointTests.path("alice/photo.png")),
            ] {
                Self.expectFileHeaders(result, "file API \(result.status)")
            }
        }
    }

    @Test func jsonpIsNotServedAsAScriptOfThisOrigin() async throws {
        try await withServer { server in
            _ = try await server.expectOK("PUT", "/a.json", body: #""<img src=x>""#)
            let ownPage = ["Sec-Fetch-Dest": "script", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors"]
            let refused = try await server.request("GET", "/a.json?callback=document.write", headers: ownPage)
            #expect(refused.status == 400)
            #expect(refused.errorText == "callback is not served to pages of this server's own origin")
            #expect(!refused.text.contains("document.write("))
            // Another site's page may still use JSONP, as Firebase allows.
            let crossSite = try await server.request(
                "GET", "/a.json?callback=show", headers: ["Sec-Fetch-Dest": "script", "Sec-Fetch-Site": "cross-site"])
            #expect(crossSite.status == 200)
            #expect(crossSite.text == #"show("<img src=x>");"#)
            #expect(crossSite.header("Content-Type") == "application/javascript; charset=utf-8")
        }
    }
}
