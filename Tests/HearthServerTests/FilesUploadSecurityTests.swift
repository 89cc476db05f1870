import Foundation
import HearthFiles
import HearthServer
import HearthTesting
import Testing

/// Uploads the rules refuse keep nothing, on a real server: a resumable upload is judged when
/// it starts, a simple or multipart one before its content is read; a refused finish deletes
/// what arrived; only the owner continues an upload; chunks stay within the declared size;
/// open uploads are limited; and expired ones are removed while the server runs.
@Suite("Files upload security")
struct FilesUploadSecurityTests {
    typealias Files = FilesEndpointTests
    static let objects = Files.objects

    /// Owners write their own folder, files under 100 KiB; everyone reads.
    static let ownerRules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /{owner}/{rest=**} {
              allow read;
              allow write: if request.auth.uid == owner && request.resource.size < 100 * 1024;
            }
          }
        }
        """

    static let denied = "Permission denied. No WRITE permission."

    static func folder(_ server: TestServer, _ name: String) -> [String] {
        let url = server.directory.url.appendingPathComponent("files").appendingPathComponent(name)
        return ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    }

    /// The size of each file in the files folder's `name` folder.
    static func sizes(_ server: TestServer, _ name: String) -> [Int] {
        let url = server.directory.url.appendingPathComponent("files").appendingPathComponent(name)
        return folder(server, name).map {
            ((try? FileManager.default.attributesOfItem(atPath: url.appendingPathComponent($0).path))?[.size] as? NSNumber)?.intValue
                ?? -1
        }
    }

    /// Starts a resumable upload of `name`.
    static func start(
        _ server: TestServer, _ name: String, size: Int? = nil, headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        var all = [
            "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
            "X-Goog-Upload-Header-Content-Type": "application/octet-stream", "Content-Type": "application/json",
        ]
        if let size { all["X-Goog-Upload-Header-Content-Length"] = String(size) }
        let query = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        return try await server.request("POST", objects + "?name=\(query)", body: "{}", headers: all.merging(headers) { $1 })
    }

    /// The upload URL's path and query, from a start's answer.
    static func target(_ start: HTTPResult) throws -> String {
        let url = try #require(start.header("X-Goog-Upload-URL").flatMap(URL.init(string:)))
        return url.path + "?" + url.query!
    }

    static func command(
        _ server: TestServer, _ target: String, _ command: String, data: Data = Data(), offset: Int? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        var all = ["X-Goog-Upload-Command": command]
        if let offset { all["X-Goog-Upload-Offset"] = String(offset) }
        return try await server.request("POST", target, data: data, headers: all.merging(headers) { $1 })
    }

    // MARK: - Judged before anything is kept

    @Test func aSignedOutStartInAnotherUsersFolderKeepsNothingAndRevealsNothing() async throws {
        try await withServer(configure: { $0.storageRules = Self.ownerRules }) { server in
            try await Files.upload(server, "alice/existing.bin", Data([1, 2, 3]), headers: Files.user("alice"))
            let missing = try await Self.start(server, "alice/big.bin", size: 64 << 20)
            Files.expectError(missing, 403, Self.denied)
            // An object that exists is refused in the very same words.
            let existing = try await Self.start(server, "alice/existing.bin", size: 64 << 20)
            Files.expectError(existing, 403, Self.denied)
            #expect(existing.body == missing.body)
            // Another user, or a size the rules refuse, fares no better.
            Files.expectError(try await Self.start(server, "alice/big.bin", size: 10, headers: Files.user("bob")), 403, Self.denied)
            Files.expectError(try await Self.start(server, "alice/big.bin", size: 64 << 20, headers: Files.user("alice")), 403)
            #expect(Self.folder(server, "uploads").isEmpty)
            #expect(Self.folder(server, "tmp").isEmpty)
            // What the rules allow as declared starts.
            let allowed = try await Self.start(server, "alice/small.bin", size: 1000, headers: Files.user("alice"))
            #expect(allowed.status == 200, "\(allowed.text)")
            #expect(Self.folder(server, "uploads").count == 1)
        }
    }

    @Test func aRefusedSimpleUploadIsAnsweredBeforeItsBodyAndWritesNothing() async throws {
        try await withServer(configure: { $0.storageRules = Self.ownerRules }) { server in
            // 64 MiB announced, 64 KiB sent: the refusal comes while the rest is still owed.
            let head = "POST \(Self.objects)?uploadType=media&name=alice%2Fbig.bin HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                + "Content-Type: application/octet-stream\r\nContent-Length: \(64 << 20)\r\n\r\n"
            let connection = try RawHTTPConnection(port: server.port, request: head)
            try connection.sendBody(Files.bytes(64 * 1024))
            let answer = await connection.read(untilContaining: Self.denied)
            #expect(answer.hasPrefix("HTTP/1.1 403"), "\(answer)")
            #expect(answer.contains(Self.denied))
            #expect(Self.folder(server, "tmp").isEmpty)
            #expect(Self.folder(server, "blobs").isEmpty)
            connection.disconnect()

            // The owner, over the size the rules allow: refused by the Content-Length alone.
            let tooBig = try await server.request(
                "POST", Self.objects + "?name=alice%2Fbig.bin", data: Files.bytes(100 * 1024),
                headers: Files.user("alice").merging(["Content-Type": "application/octet-stream"]) { $1 })
            Files.expectError(tooBig, 403, Self.denied)
            #expect(Self.folder(server, "tmp").isEmpty)
            #expect(Self.folder(server, "blobs").isEmpty)
            Files.expectError(try await server.request("GET", Files.path("alice/big.bin")), 404)
            try await Files.upload(server, "alice/fits.bin", Files.bytes(100 * 1024 - 1), headers: Files.user("alice"))
            #expect(Self.folder(server, "blobs").count == 1)
        }
    }

    @Test func aMultipartUploadIsJudgedByItsMetadataBeforeItsContent() async throws {
        try await withServer(configure: { $0.storageRules = Self.ownerRules }) { server in
            let boundary = "hearth-boundary-7"
            func multipart(_ name: String, _ content: Data) -> Data {
                var body = Data("--\(boundary)\r\nContent-Type: application/json; charset=utf-8\r\n\r\n".utf8)
                body += Data(#"{"name": "\#(name)", "contentType": "image/png"}"#.utf8)
                body += Data("\r\n--\(boundary)\r\nContent-Type: image/png\r\n\r\n".utf8)
                body += content
                body += Data("\r\n--\(boundary)--".utf8)
                return body
            }
            let headers = [
                "X-Goog-Upload-Protocol": "multipart", "Content-Type": "multipart/related; boundary=\(boundary)",
            ]
            // Signed out, under Alice's name: answered while the content is still owed.
            let body = multipart("alice/a.png", Files.bytes(1 << 20))
            let head = "POST \(Self.objects) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"
                + headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "Content-Length: \(body.count)\r\n\r\n"
            let connection = try RawHTTPConnection(port: server.port, request: head)
            try connection.sendBody(body.prefix(64 * 1024))
            let answer = await connection.read(untilContaining: Self.denied)
            #expect(answer.hasPrefix("HTTP/1.1 403"), "\(answer)")
            #expect(Self.folder(server, "tmp").isEmpty)
            connection.disconnect()

            // The content's size is known from the Content-Length before it is read: one byte
            // under the rules' limit passes, the limit itself does not.
            let owner = Files.user("alice").merging(headers) { $1 }
            let fits = try await server.request("POST", Self.objects, data: multipart("alice/b.png", Files.bytes(100 * 1024 - 1)), headers: owner)
            #expect(fits.status == 200, "\(fits.text)")
            let over = try await server.request("POST", Self.objects, data: multipart("alice/c.png", Files.bytes(100 * 1024)), headers: owner)
            Files.expectError(over, 403, Self.denied)
            #expect(Self.folder(server, "tmp").isEmpty)
            #expect(Self.folder(server, "blobs").count == 1)
        }
    }

    // MARK: - Continued by the owner only, within the declared size

    @Test func anotherUserCannotAppendToSomeonesUpload() async throws {
        try await withServer(configure: { $0.storageRules = Self.ownerRules }) { server in
            let started = try await Self.start(server, "alice/clip.bin", size: 1000, headers: Files.user("alice"))
            #expect(started.status == 200, "\(started.text)")
            let target = try Self.target(started)
            let unknown = try await Self.command(
                server, Self.objects + "?upload_id=00000000-0000-0000-0000-000000000000", "query", headers: Files.user("bob"))
            Files.expectError(unknown, 404, "Not Found.")
            for stranger in [Files.user("bob"), [:]] {
                // Every command is answered as for an upload that does not exist.
                let append = try await Self.command(server, target, "upload", data: Files.bytes(1000), offset: 0, headers: stranger)
                Files.expectError(append, 404, "Not Found.")
                #expect(append.body == unknown.body)
                for command in ["query", "finalize", "cancel", "upload, finalize"] {
                    Files.expectError(try await Self.command(server, target, command, offset: 0, headers: stranger), 404, "Not Found.")
                }
            }
            #expect(Self.sizes(server, "uploads") == [0])
            let data = Data(Files.bytes(1000).reversed())
            let finished = try await Self.command(server, target, "upload, finalize", data: data, offset: 0, headers: Files.user("alice"))
            #expect(finished.status == 200, "\(finished.text)")
            #expect(try await server.request("GET", Files.path("alice/clip.bin") + "?alt=media").body == data)
        }
    }

    @Test func aChunkPastTheDeclaredSizeIsRefused() async throws {
        try await withServer(configure: { $0.storageRules = Self.ownerRules }) { server in
            let alice = Files.user("alice")
            let target = try Self.target(try await Self.start(server, "alice/a.bin", size: 1000, headers: alice))
            let over = try await Self.command(server, target, "upload", data: Files.bytes(1500), offset: 0, headers: alice)
            Files.expectError(over, 400, "The upload is larger than its declared size of 1000 bytes.")
            let query = try await Self.command(server, target, "query", headers: alice)
            #expect(query.header("X-Goog-Upload-Size-Received") == "0")
            #expect(Self.sizes(server, "uploads") == [0])
            // Going on within the declared size works.
            let rest = try await Self.command(server, target, "upload, finalize", data: Files.bytes(1000), offset: 0, headers: alice)
            #expect(rest.status == 200, "\(rest.text)")
        }
    }

    @Test func aRefusedFinalizeLeavesNoBytes() async throws {
        try await withServer(configure: { $0.storageRules = Self.ownerRules }) { server in
            let alice = Files.user("alice")
            // No size declared: the start is allowed (the rules allow an empty file), the
            // finished upload is judged by what arrived.
            let target = try Self.target(try await Self.start(server, "alice/a.bin", headers: alice))
            let chunk = try await Self.command(server, target, "upload", data: Files.bytes(256 * 1024), offset: 0, headers: alice)
            #expect(chunk.status == 200, "\(chunk.text)")
            #expect(Self.sizes(server, "uploads") == [256 * 1024])
            let refused = try await Self.command(server, target, "finalize", headers: alice)
            Files.expectError(refused, 403, Self.denied)
            #expect(Self.folder(server, "uploads").isEmpty)
            #expect(Self.folder(server, "tmp").isEmpty)
            #expect(Self.folder(server, "blobs").isEmpty)
            let query = try await Self.command(server, target, "query", headers: alice)
            #expect(query.header("X-Goog-Upload-Status") == "cancelled")
            Files.expectError(try await Self.command(server, target, "upload", data: Data([1]), offset: 0, headers: alice), 400)
        }
    }

    // MARK: - Limits and expiry

    @Test func openUploadsAreLimitedPerUser() async throws {
        try await withServer(configure: { configuration in
            configuration.storageRules = Self.ownerRules
            configuration.uploadLimits.maxOpenPerOwner = 2
        }) { server in
            for _ in 0..<2 {
                #expect(try await Self.start(server, "alice/a.bin", size: 10, headers: Files.user("alice")).status == 200)
            }
            let third = try await Self.start(server, "alice/a.bin", size: 10, headers: Files.user("alice"))
            Files.expectError(third, 429, "Too many unfinished uploads: finish or cancel some first.")
            #expect(try await Self.start(server, "bob/a.bin", size: 10, headers: Files.user("bob")).status == 200)
            #expect(Self.folder(server, "uploads").count == 3)
        }
    }

    @Test func expiredUploadsAreRemovedWhileTheServerRuns() async throws {
        let clock = TestClock()
        let (sweeps, sweeping) = AsyncStream<FileStore.ExpiredUploads>.makeStream()
        try await withServer(configure: { configuration in
            configuration.clock = { clock.now }
            configuration.uploadLimits.idleLifetime = 60_000
            configuration.uploadSweepInterval = .milliseconds(20)
            configuration.onUploadSweep = { sweeping.yield($0) }
        }) { server in
            let target = try Self.target(try await Self.start(server, "drop/a.bin", size: 100))
            #expect(try await Self.command(server, target, "upload", data: Files.bytes(40), offset: 0).status == 200)
            clock.advance(by: 60_000)
            var removed = FileStore.ExpiredUploads()
            var sweepsSeen = 0
            for await sweep in sweeps {
                sweepsSeen += 1
                if sweep.uploads > 0 {
                    removed = sweep
                    break
                }
                // The first sweep after the clock moved removes it: ten seconds of sweeps
                // without it mean it never will.
                if sweepsSeen == 500 { break }
            }
            #expect(removed == FileStore.ExpiredUploads(uploads: 1, bytes: 40, pendingBytes: 0))
            #expect(Self.folder(server, "uploads").isEmpty)
            Files.expectError(try await Self.command(server, target, "query"), 404)
        }
    }
}
