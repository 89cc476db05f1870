import AsyncHTTPClient
import Foundation
import HearthServer
import HearthTesting
import NIOCore
import NIOHTTP1
import Testing

/// An owner's app served by a real server on loopback (`--hosting`).
@Suite("Hosting an owner's Firebase web app on a real server", .serialized)
struct HostingServerTests {
    /// A response as these tests read it.
    struct Answer {
        let status: Int
        let headers: HTTPHeaders
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first(name: name) }
    }

    static let firebaseJSON = """
        {
          "database": {"rules": "database.rules.json"},
          "hosting": {
            "public": "public",
            "cleanUrls": true,
            "redirects": [{"source": "/old/:rest*", "destination": "/new/:rest*", "type": 302}],
            "rewrites": [
              {"source": "/api/**", "function": "api"},
              {"source": "/app/**", "destination": "/index.html"}
            ],
            "headers": [
              {"source": "**/*.css", "headers": [{"key": "Cache-Control", "value": "public, max-age=31536000, immutable"}]},
              {"source": "**", "headers": [{"key": "X-Owner", "value": "yes"}]}
            ]
          }
        }
        """

    static let css = String(repeating: "body { color: #333; margin: 0 auto; }\n", count: 200)
    /// Text over the largest file read into memory: streamed from disk.
    static let largeText = Data((0..<(9 << 20)).map { UInt8(ascii: "a") + UInt8($0 % 26) })

    /// Makes the project folder (firebase.json, public/ with pages, a symbolic link out of it)
    /// and an SDK folder, starts a server hosting it, and runs `body` with a client that follows
    /// no redirects and decompresses nothing.
    func withHostedApp(
        notFoundPage: Bool = true, _ body: (TestServer, HTTPClient) async throws -> Void
    ) async throws {
        let project = try TemporaryDirectory(prefix: "hearth-hosting")
        defer { project.remove() }
        let files = FileManager.default
        let publicFolder = project.url.appendingPathComponent("public")
        try files.createDirectory(at: publicFolder.appendingPathComponent("docs"), withIntermediateDirectories: true)
        func write(_ path: String, _ text: String) throws {
            try Data(text.utf8).write(to: project.url.appendingPathComponent(path))
        }
        try write("firebase.json", Self.firebaseJSON)
        try write("secret.txt", "outside the public folder")
        try write("public/index.html", "<!doctype html><title>Owner's app</title><script src=\"/__/firebase/init.js\"></script>")
        try write("public/about.html", "<!doctype html><title>About</title>")
        try Self.largeText.write(to: publicFolder.appendingPathComponent("large.txt"))
        try write("public/docs/index.html", "<!doctype html><title>Docs</title>")
        try write("public/style.css", Self.css)
        try write("public/manifest.json", #"{"name": "Owner's app"}"#)
        try write("public/.env", "SECRET=1")
        try files.createDirectory(at: publicFolder.appendingPathComponent("app"), withIntermediateDirectories: true)
        try write("public/app/ui.js", "owner ui")
        if notFoundPage { try write("public/404.html", "<!doctype html><title>Owner's 404</title>") }
        try files.createSymbolicLink(atPath: publicFolder.appendingPathComponent("leak.txt").path, withDestinationPath: "../secret.txt")
        try files.createSymbolicLink(atPath: publicFolder.appendingPathComponent("alias.css").path, withDestinationPath: "style.css")
        let sdk = project.url.appendingPathComponent("firebase-js-sdk-8.10.1")
        try files.createDirectory(at: sdk, withIntermediateDirectories: true)
        try write("firebase-js-sdk-8.10.1/firebase-app.js", "/* firebase-app 8.10.1 */ var firebase = {};")
        let settings = try HostingSettings.load(folder: project.url, sdkFolder: sdk)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await TestServer.with(configure: { configuration in
                configuration.hosting = settings
                configuration.webFiles = WebFiles(files: [
                    "index.html": Array("demo app".utf8), "__/auth/index.html": Array("hearth auth page".utf8),
                    "console/index.html": Array("hearth console".utf8), "lib/hearth.js": Array("hearth lib".utf8),
                    "app/ui.js": Array("hearth ui".utf8),
                ])
            }) { server in
                try await body(server, client)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    func send(
        _ client: HTTPClient, _ server: TestServer, _ path: String, method: HTTPMethod = .GET, headers: [(String, String)] = [],
        body: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: Array(bytes.readableBytesView))
    }

    @Test("Files come with their type, a strong ETag, Cache-Control, the owner's headers and none of Hearth's")
    func files() async throws {
        try await withHostedApp { server, client in
            let page = try await send(client, server, "/")
            #expect(page.status == 200)
            #expect(page.text.contains("Owner's app"))
            #expect(page.header("Content-Type") == "text/html; charset=utf-8")
            #expect(page.header("Cache-Control") == "max-age=3600")
            #expect(page.header("X-Owner") == "yes")
            #expect(page.header("ETag")?.hasPrefix("\"") == true)
            for hearthHeader in ["Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy",
                "Cross-Origin-Opener-Policy", "Permissions-Policy", "Access-Control-Allow-Origin"] {
                #expect(page.header(hearthHeader) == nil, "\(hearthHeader)")
            }
            let css = try await send(client, server, "/style.css")
            #expect(css.header("Content-Type") == "text/css; charset=utf-8")
            #expect(css.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(css.text == Self.css)
            // The demo app is not served.
            #expect(!(try await send(client, server, "/index.html")).text.contains("demo app"))
        }
    }

    @Test("If-None-Match with the current ETag is a 304; HEAD has the length and no body")
    func revalidationAndHead() async throws {
        try await withHostedApp { server, client in
            let first = try await send(client, server, "/about")
            let etag = try #require(first.header("ETag"))
            let again = try await send(client, server, "/about", headers: [("If-None-Match", etag)])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.header("ETag") == etag)
            let stale = try await send(client, server, "/about", headers: [("If-None-Match", "\"other\"")])
            #expect(stale.status == 200)
            let head = try await send(client, server, "/style.css", method: .HEAD)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("Content-Length") == "\(Self.css.utf8.count)")
        }
    }

    @Test("A file larger than the cache reads is streamed: whole, in ranges, revalidated, never compressed")
    func largeFilesAreStreamed() async throws {
        try await withHostedApp { server, client in
            let whole = try await send(client, server, "/large.txt", headers: [("Accept-Encoding", "gzip, br")])
            #expect(whole.status == 200)
            #expect(whole.header("Content-Encoding") == nil)
            #expect(whole.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(whole.header("Content-Length") == "\(Self.largeText.count)")
            #expect(whole.header("Cache-Control") == "max-age=3600")
            #expect(whole.header("Accept-Ranges") == "bytes")
            #expect(whole.body == Array(Self.largeText))
            let etag = try #require(whole.header("ETag"))
            #expect((try await send(client, server, "/large.txt", headers: [("If-None-Match", etag)])).status == 304)
            let part = try await send(client, server, "/large.txt", headers: [("Range", "bytes=5000000-5000009")])
            #expect(part.status == 206)
            #expect(part.header("Content-Range") == "bytes 5000000-5000009/\(Self.largeText.count)")
            #expect(part.body == Array(Self.largeText[5_000_000..<5_000_010]))
            let tail = try await send(client, server, "/large.txt", headers: [("Range", "bytes=-3")])
            #expect(tail.body == Array(Self.largeText.suffix(3)))
            let beyond = try await send(client, server, "/large.txt", headers: [("Range", "bytes=\(Self.largeText.count)-")])
            #expect(beyond.status == 416)
            #expect(beyond.header("Content-Range") == "bytes */\(Self.largeText.count)")
            // If-Range with another version's ETag: the whole file.
            let changed = try await send(client, server, "/large.txt", headers: [("Range", "bytes=0-1"), ("If-Range", "\"other\"")])
            #expect(changed.status == 200 && changed.body.count == Self.largeText.count)
            let head = try await send(client, server, "/large.txt", method: .HEAD)
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.header("Content-Length") == "\(Self.largeText.count)")
        }
    }

    @Test("Text is sent as Brotli or gzip when accepted, each form with its own ETag")
    func compression() async throws {
        try await withHostedApp { server, client in
            let plain = try await send(client, server, "/style.css")
            let gzip = try await send(client, server, "/style.css", headers: [("Accept-Encoding", "gzip")])
            #expect(gzip.header("Content-Encoding") == "gzip")
            #expect(Array(gzip.body.prefix(2)) == [0x1f, 0x8b])
            #expect(gzip.body.count < plain.body.count)
            #expect(gzip.header("Vary") == "Accept-Encoding")
            let brotli = try await send(client, server, "/style.css", headers: [("Accept-Encoding", "gzip, deflate, br")])
            #expect(brotli.header("Content-Encoding") == "br")
            #expect(brotli.body.count < plain.body.count)
            let etags = Set([plain, gzip, brotli].compactMap { $0.header("ETag") })
            #expect(etags.count == 3)
            let refused = try await send(client, server, "/style.css", headers: [("Accept-Encoding", "br;q=0, gzip;q=0")])
            #expect(refused.header("Content-Encoding") == nil)
            // A 304 for the compressed form's ETag.
            let cached = try await send(
                client, server, "/style.css", headers: [("Accept-Encoding", "br"), ("If-None-Match", brotli.header("ETag")!)])
            #expect(cached.status == 304)
        }
    }

    @Test("A single range is a 206 of the bytes; an unsatisfiable one is a 416")
    func ranges() async throws {
        try await withHostedApp { server, client in
            let part = try await send(client, server, "/style.css", headers: [("Range", "bytes=5-9"), ("Accept-Encoding", "br")])
            #expect(part.status == 206)
            #expect(part.text == String(Array(Self.css)[5...9]))
            #expect(part.header("Content-Range") == "bytes 5-9/\(Self.css.utf8.count)")
            #expect(part.header("Content-Encoding") == nil)
            let beyond = try await send(client, server, "/style.css", headers: [("Range", "bytes=999999-")])
            #expect(beyond.status == 416)
            #expect(beyond.header("Content-Range") == "bytes */\(Self.css.utf8.count)")
        }
    }

    @Test("Redirects, rewrites and clean URLs apply in Firebase's order; 404.html answers the rest")
    func configuration() async throws {
        try await withHostedApp { server, client in
            let moved = try await send(client, server, "/old/a/b?x=1")
            #expect(moved.status == 302)
            #expect(moved.header("Location") == "/new/a/b?x=1")
            let spa = try await send(client, server, "/app/settings/profile")
            #expect(spa.status == 200)
            #expect(spa.text.contains("Owner's app"))
            let clean = try await send(client, server, "/about.html")
            #expect(clean.status == 301)
            #expect(clean.header("Location") == "/about")
            #expect((try await send(client, server, "/about")).text.contains("About"))
            #expect((try await send(client, server, "/docs")).text.contains("Docs"))
            let missing = try await send(client, server, "/nowhere")
            #expect(missing.status == 404)
            #expect(missing.text.contains("Owner's 404"))
            #expect(missing.header("X-Owner") == "yes")
            let hidden = try await send(client, server, "/.env")
            #expect(hidden.status == 404)
            #expect(!hidden.text.contains("SECRET"))
        }
        try await withHostedApp(notFoundPage: false) { server, client in
            let missing = try await send(client, server, "/nowhere")
            #expect(missing.status == 404)
            #expect(missing.text.contains("Page Not Found"))
        }
    }

    @Test("Files answer GET and HEAD only; a function rewrite with no function running is a 404")
    func methods() async throws {
        try await withHostedApp { server, client in
            let post = try await send(client, server, "/style.css", method: .POST, body: "x")
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET, HEAD")
            let api = try await send(client, server, "/api/orders", method: .POST, body: "{}")
            #expect(api.status == 404)
            #expect(api.text.contains("api"))
        }
    }

    @Test("Paths that escape the public folder are refused: .., encoded slashes, symbolic links out")
    func escapes() async throws {
        try await withHostedApp { server, client in
            #expect((try await send(client, server, "/%2e%2e/secret.txt")).status == 400)
            #expect((try await send(client, server, "/docs%2F..%2F..%2Fsecret.txt")).status == 400)
            #expect((try await send(client, server, "/a%00b")).status == 400)
            let leak = try await send(client, server, "/leak.txt")
            #expect(leak.status == 404)
            #expect(!leak.text.contains("outside"))
            // A link that stays inside is served.
            #expect((try await send(client, server, "/alias.css")).text == Self.css)
        }
    }

    @Test("init.js and init.json give this server's configuration; the SDK comes from the SDK folder or Google")
    func reservedURLs() async throws {
        try await withHostedApp { server, client in
            let script = try await send(client, server, "/__/firebase/init.js")
            #expect(script.status == 200)
            #expect(script.header("Content-Type") == "text/javascript; charset=utf-8")
            #expect(script.text.hasPrefix("if (typeof firebase === 'undefined') throw new Error('hosting/init-error"))
            #expect(script.text.contains("var firebaseConfig = {"))
            #expect(script.text.contains("firebase.initializeApp(firebaseConfig);"))
            #expect(script.text.contains("http://127.0.0.1:\(server.port)?ns=default"))
            // The SDKs loaded before it are pointed at this origin, as the CLI's init.js points them at emulators.
            #expect(script.text.contains("})(\"http://127.0.0.1:\(server.port)\");"))
            #expect(script.text.contains("firebase.auth().useEmulator(origin, { disableWarnings: true });"))
            #expect(script.text.contains("functions.useFunctionsEmulator(origin)"))
            #expect(script.text.contains("storage.useEmulator(url.hostname, port)"))
            let json = try await send(client, server, "/__/firebase/init.json")
            let config = try #require(try JSONSerialization.jsonObject(with: Data(json.body)) as? [String: String])
            #expect(config["projectId"] == "hearth")
            #expect(config["apiKey"] == "hearth")
            #expect(config["storageBucket"] == "hearth.appspot.com")
            #expect(config["authDomain"] == "127.0.0.1:\(server.port)")
            #expect(config["databaseURL"] == "http://127.0.0.1:\(server.port)?ns=default")
            let sdk = try await send(client, server, "/__/firebase/8.10.1/firebase-app.js")
            #expect(sdk.status == 200)
            #expect(sdk.text.contains("firebase-app 8.10.1"))
            let other = try await send(client, server, "/__/firebase/9.23.0/firebase-app-compat.js")
            #expect(other.status == 302)
            #expect(other.header("Location") == "https://www.gstatic.com/firebasejs/9.23.0/firebase-app-compat.js")
            #expect((try await send(client, server, "/__/firebase/8.10.1/..%2Fsecret.txt")).status == 400)
            // The auth pages are Hearth's, with its pages' policy.
            let handler = try await send(client, server, "/__/auth/handler?apiKey=x")
            #expect(handler.text == "hearth auth page")
            #expect(handler.header("Content-Security-Policy") != nil)
            #expect((try await send(client, server, "/__/other")).status == 404)
        }
    }

    @Test("The database, the console and the site share the origin: .json is data unless the site has the file")
    func sharedOrigin() async throws {
        try await withHostedApp { server, client in
            let write = try await send(client, server, "/greeting.json", method: .PUT, body: #""hello""#)
            #expect(write.status == 200)
            #expect((try await send(client, server, "/greeting.json")).text == #""hello""#)
            let manifest = try await send(client, server, "/manifest.json")
            #expect(manifest.text == #"{"name": "Owner's app"}"#)
            #expect(manifest.header("Content-Type") == "application/json; charset=utf-8")
            let console = try await send(client, server, "/console/")
            #expect(console.text == "hearth console")
            #expect(console.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
            // The console's modules are Hearth's where the site has no such file; the site's own win.
            #expect((try await send(client, server, "/lib/hearth.js")).text == "hearth lib")
            #expect((try await send(client, server, "/app/ui.js")).text == "owner ui")
        }
    }
}
