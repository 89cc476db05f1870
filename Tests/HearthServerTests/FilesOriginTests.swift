import Foundation
import HearthServer
import HearthTesting
import Testing

/// User files on an origin of their own: a files port, or a host name sent to the server.
@Suite("Files origin")
struct FilesOriginTests {
    /// The raw response (head and body) to `GET path`, redirects not followed.
    static func rawGET(port: Int, _ path: String, host: String = "127.0.0.1", headers: [String: String] = [:]) async throws -> String {
        let extra = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        let connection = try RawHTTPConnection(
            port: port, request: "GET \(path) HTTP/1.1\r\nHost: \(host)\r\n\(extra)Connection: close\r\n\r\n")
        defer { connection.disconnect() }
        return await connection.read { text in
            guard let end = text.range(of: "\r\n\r\n") else { return false }
            let head = text[..<end.lowerBound].lowercased()
            guard let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
                let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
            else { return true }
            return text.utf8.count - text[..<end.upperBound].utf8.count >= length
        }
    }

    static func header(_ name: String, in raw: String) -> String? {
        let head = raw.components(separatedBy: "\r\n\r\n")[0]
        return head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    static func status(_ raw: String) -> Int? {
        raw.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
    }

    @Test func aFilesPortServesOnlyFilesAndPagesAreToldOfIt() async throws {
        try await withServer(configure: { $0.filesPort = 0 }) { server in
            let filesPort = try #require(server.filesPort)
            #expect(filesPort != server.port)
            let origin = "http://127.0.0.1:\(filesPort)"
            let config = try await server.request("GET", "/__/firebase/init.json")
            #expect((config.json as? [String: String])?["storageOrigin"] == origin)
            SecurityHeadersTests.expectPageHeaders(config, "init.json", filesOrigin: origin)

            _ = try await FilesEndpointTests.upload(server, "alice/photo.png", Data([1, 2, 3]), type: "image/png")
            let direct = try await Self.rawGET(port: filesPort, FilesEndpointTests.path("alice/photo.png") + "?alt=media")
            #expect(Self.status(direct) == 200, "\(direct)")
            #expect(Self.header("Content-Security-Policy", in: direct) == "sandbox; default-src 'none'")
            // Uploads work there too, with CORS for the app's page on the other origin.
            let preflight = try await httpRequest(
                "OPTIONS", URL(string: "\(origin)\(FilesEndpointTests.objects)")!,
                headers: ["Origin": "http://127.0.0.1:\(server.port)", "Access-Control-Request-Method": "POST"])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "*")
            let upload = try await httpRequest(
                "POST", URL(string: "\(origin)\(FilesEndpointTests.objects)?uploadType=media&name=bob%2Fa.txt")!,
                body: Data("hi".utf8), headers: ["Content-Type": "text/plain"])
            #expect(upload.status == 200, "\(upload.text)")

            // Nothing but files answers there: no pages, database, accounts or session.
            for path in ["/", "/index.html", "/console/", "/a.json", "/.hearth/stats", "/__/firebase/init.json"] {
                let raw = try await Self.rawGET(port: filesPort, path, headers: ["Authorization": "Bearer \(TestServer.adminToken)"])
                #expect(Self.status(raw) == 404, "\(path): \(raw)")
                #expect(Self.header("X-Content-Type-Options", in: raw) == "nosniff", "\(path)")
            }
            let signUp = try await httpRequest(
                "POST", URL(string: "\(origin)\(AuthEndpointTests.identity)accounts:signUp")!, body: Data("{}".utf8))
            #expect(signUp.status == 404)
            let write = try await httpRequest(
                "PUT", URL(string: "\(origin)/a.json")!, body: Data("1".utf8), headers: TestServer.adminHeaders)
            #expect(write.status == 404)
            #expect(try await server.request("GET", "/a.json").text == "null")
        }
    }

    @Test func browsersOpeningAFileOnTheAppOriginAreSentToTheFilesOrigin() async throws {
        try await withServer(configure: { $0.filesPort = 0 }) { server in
            let filesPort = try #require(server.filesPort)
            _ = try await FilesEndpointTests.upload(server, "mallory/evil.svg", Data("<svg/>".utf8), type: "image/svg+xml")
            let path = FilesEndpointTests.path("mallory/evil.svg") + "?alt=media&token=abc"
            let redirect = try await Self.rawGET(port: server.port, path, host: "localhost:\(server.port)")
            #expect(Self.status(redirect) == 307, "\(redirect)")
            #expect(Self.header("Location", in: redirect) == "http://localhost:\(filesPort)\(path)")
            // A signed request of an SDK is answered where it is (a redirect would lose its credential).
            let signed = try await Self.rawGET(
                port: server.port, FilesEndpointTests.path("mallory/evil.svg") + "?alt=media",
                headers: ["Authorization": "Bearer \(TestServer.adminToken)"])
            #expect(Self.status(signed) == 200)
            #expect(Self.header("Content-Disposition", in: signed)?.hasPrefix("attachment;") == true)
            // A repeated parameter is read as storage reads it (the last one): no way round the redirect.
            let repeated = try await Self.rawGET(
                port: server.port, FilesEndpointTests.path("mallory/evil.svg") + "?alt=json&alt=media")
            #expect(Self.status(repeated) == 307, "\(repeated)")
            let metadataLast = try await Self.rawGET(
                port: server.port, FilesEndpointTests.path("mallory/evil.svg") + "?alt=media&alt=json")
            #expect(Self.status(metadataLast) == 200)
            #expect(metadataLast.contains(#""contentType" : "image/svg+xml""#), "\(metadataLast)")
            // A Host that is not a plain name gets no files origin written into its answers.
            for host in ["x; script-src *", "a@evil.example", "evil.example/path", "[::1", "h:80x"] {
                let page = try await Self.rawGET(port: server.port, "/__/firebase/init.json", host: host)
                #expect(!page.contains("storageOrigin"), "\(host): \(page)")
                #expect(!(Self.header("Content-Security-Policy", in: page) ?? "").contains("evil"), "\(host)")
            }
            // Metadata is not a download: no redirect.
            let metadata = try await Self.rawGET(port: server.port, FilesEndpointTests.path("mallory/evil.svg"))
            #expect(Self.status(metadata) == 200)
        }
    }

    @Test func aFilesHostNameOnTheSamePortIsAFilesOrigin() async throws {
        try await withServer(configure: { $0.filesOrigin = "https://files.example.com" }) { server in
            _ = try await FilesEndpointTests.upload(server, "alice/a.png", Data([1]), type: "image/png")
            let page = try await Self.rawGET(port: server.port, "/__/firebase/init.json", host: "app.example.com")
            #expect(page.contains(#""storageOrigin":"https://files.example.com""#), "\(page)")
            #expect(Self.header("Content-Security-Policy", in: page)?.contains("img-src 'self' blob: data: https://files.example.com") == true)
            let redirect = try await Self.rawGET(port: server.port, FilesEndpointTests.path("alice/a.png") + "?alt=media", host: "app.example.com")
            #expect(Self.header("Location", in: redirect) == "https://files.example.com\(FilesEndpointTests.path("alice/a.png"))?alt=media")
            // The files host answers files, and nothing else.
            let file = try await Self.rawGET(port: server.port, FilesEndpointTests.path("alice/a.png") + "?alt=media", host: "files.example.com")
            #expect(Self.status(file) == 200, "\(file)")
            for path in ["/", "/a.json", "/console/"] {
                #expect(Self.status(try await Self.rawGET(port: server.port, path, host: "FILES.example.com")) == 404, "\(path)")
            }
        }
    }

    @Test func onlyOriginsAreAcceptedAsTheFilesOrigin() {
        #expect(ServerConfiguration.normalizedOrigin("https://Files.Example.com/") == "https://files.example.com")
        #expect(ServerConfiguration.normalizedOrigin("http://127.0.0.1:9001") == "http://127.0.0.1:9001")
        #expect(ServerConfiguration.normalizedOrigin("https://files.example.com:443") == "https://files.example.com")
        for bad in ["files.example.com", "ftp://files.example.com", "https://files.example.com/o", "https://u:p@files.example.com",
            "https://files.example.com?x=1", "javascript:alert(1)", ""]
        {
            #expect(ServerConfiguration.normalizedOrigin(bad) == nil, "\(bad)")
        }
    }
}
