import Crypto
import Foundation
import HearthServer
import HearthTesting
import Testing

/// Firebase Storage's REST API on a real server: uploads of every kind, downloads with ranges
/// and conditions, metadata, listing, deletion, download tokens and storage rules.
@Suite("Files endpoints")
struct FilesEndpointTests {
    static let bucket = "hearth.appspot.com"
    static let objects = "/v0/b/\(bucket)/o"

    static func path(_ name: String) -> String {
        objects + "/" + name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    static func bytes(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
    }

    static func json(_ result: HTTPResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: result.body) as? [String: Any]) ?? [:]
    }

    /// Uploads `data` with a simple (media) upload and returns the metadata.
    @discardableResult
    static func upload(
        _ server: TestServer, _ name: String, _ data: Data, type: String = "image/jpeg", headers: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: Any] {
        let query = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let result = try await server.request(
            "POST", "\(objects)?uploadType=media&name=\(query)", data: data,
            headers: ["Content-Type": type].merging(headers) { $1 })
        #expect(result.status == 200, "\(result.text)", sourceLocation: sourceLocation)
        return json(result)
    }

    static func expectError(
        _ result: HTTPResult, _ status: Int, _ message: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == status, "\(result.text)", sourceLocation: sourceLocation)
        let error = json(result)["error"] as? [String: Any]
        #expect(error?["code"] as? Int == status, "\(result.text)", sourceLocation: sourceLocation)
        if let message { #expect(error?["message"] as? String == message, sourceLocation: sourceLocation) }
    }

    // MARK: - Upload and download

    @Test func aSimpleUploadCanBeReadBack() async throws {
        try await withServer { server in
            let data = Self.bytes(3000)
            let metadata = try await Self.upload(server, "alice/full/p1/photo.jpg", data)
            #expect(metadata["name"] as? String == "alice/full/p1/photo.jpg")
            #expect(metadata["bucket"] as? String == Self.bucket)
            #expect(metadata["size"] as? String == "3000")
            #expect(metadata["contentType"] as? String == "image/jpeg")
            #expect(metadata["md5Hash"] as? String == Data(Insecure.MD5.hash(data: data)).base64EncodedString())
            #expect((metadata["generation"] as? String).flatMap(Int64.init) != nil)
            #expect((metadata["timeCreated"] as? String)?.hasSuffix("Z") == true)
            let token = try #require(metadata["downloadTokens"] as? String)

            let fetched = try await server.request("GET", Self.path("alice/full/p1/photo.jpg"))
            #expect(fetched.status == 200)
            #expect(Self.json(fetched)["md5Hash"] as? String == metadata["md5Hash"] as? String)

            let media = try await server.request("GET", Self.path("alice/full/p1/photo.jpg") + "?alt=media&token=\(token)")
            #expect(media.status == 200)
            #expect(media.body == data)
            #expect(media.header("Content-Type") == "image/jpeg")
            #expect(media.header("Content-Length") == "3000")
            #expect(media.header("Accept-Ranges") == "bytes")
            #expect(media.header("ETag")?.hasPrefix("\"") == true)
            #expect(media.header("Last-Modified")?.hasSuffix("GMT") == true)
            #expect(media.header("Access-Control-Allow-Origin") == "*")
        }
    }

    @Test func rangesAndConditionalDownloads() async throws {
        try await withServer { server in
            let data = Self.bytes(1000)
            try await Self.upload(server, "file.bin", data, type: "application/octet-stream")
            let url = Self.path("file.bin") + "?alt=media"
            let first = try await server.request("GET", url, headers: ["Range": "bytes=0-9"])
            #expect(first.status == 206)
            #expect(first.body == data[0..<10])
            #expect(first.header("Content-Range") == "bytes 0-9/1000")
            let tail = try await server.request("GET", url, headers: ["Range": "bytes=-100"])
            #expect(tail.status == 206)
            #expect(tail.body == data[900..<1000])
            let open = try await server.request("GET", url, headers: ["Range": "bytes=990-"])
            #expect(open.body == data[990..<1000])
            let beyond = try await server.request("GET", url, headers: ["Range": "bytes=5000-"])
            Self.expectError(beyond, 416)
            #expect(beyond.header("Content-Range") == "bytes */1000")

            let etag = try #require(first.header("ETag"))
            let unchanged = try await server.request("GET", url, headers: ["If-None-Match": etag])
            #expect(unchanged.status == 304)
            #expect(unchanged.body.isEmpty)
            // If-Range with a stale ETag: the whole file, not the range.
            let stale = try await server.request("GET", url, headers: ["Range": "bytes=0-9", "If-Range": "\"old\""])
            #expect(stale.status == 200)
            #expect(stale.body == data)
            // After a new upload the old ETag no longer matches.
            try await Self.upload(server, "file.bin", Self.bytes(10), type: "application/octet-stream")
            let changed = try await server.request("GET", url, headers: ["If-None-Match": etag])
            #expect(changed.status == 200)
            #expect(changed.body.count == 10)
        }
    }

    @Test func aMultipartUploadCarriesItsMetadata() async throws {
        try await withServer { server in
            let boundary = "hearth-boundary-42"
            let content = Self.bytes(2048)
            var body = Data()
            body += Data("--\(boundary)\r\nContent-Type: application/json; charset=utf-8\r\n\r\n".utf8)
            body += Data(#"{"name": "alice/thumb/p1/t.png", "contentType": "image/png", "metadata": {"caption": "sunset"}}"#.utf8)
            body += Data("\r\n--\(boundary)\r\nContent-Type: image/png\r\n\r\n".utf8)
            body += content
            body += Data("\r\n--\(boundary)--".utf8)
            let result = try await server.request(
                "POST", Self.objects, data: body,
                headers: ["X-Goog-Upload-Protocol": "multipart", "Content-Type": "multipart/related; boundary=\(boundary)"])
            #expect(result.status == 200, "\(result.text)")
            let metadata = Self.json(result)
            #expect(metadata["name"] as? String == "alice/thumb/p1/t.png")
            #expect(metadata["contentType"] as? String == "image/png")
            #expect((metadata["metadata"] as? [String: String]) == ["caption": "sunset"])
            let media = try await server.request("GET", Self.path("alice/thumb/p1/t.png") + "?alt=media")
            #expect(media.body == content)

            // A body cut off before its closing boundary stores nothing.
            let cut = body.prefix(body.count - 200)
            let refused = try await server.request(
                "POST", Self.objects + "?name=cut.png", data: Data(cut),
                headers: ["X-Goog-Upload-Protocol": "multipart", "Content-Type": "multipart/related; boundary=\(boundary)"])
            Self.expectError(refused, 400)
            Self.expectError(try await server.request("GET", Self.path("cut.png")), 404, "Not Found.")
        }
    }

    @Test func aResumableUploadResumesAfterADroppedConnection() async throws {
        try await withServer { server in
            let data = Self.bytes(600_000)
            let start = try await server.request(
                "POST", Self.objects + "?name=videos%2Fclip.mp4", body: #"{"contentType": "video/mp4"}"#,
                headers: [
                    "X-Goog-Upload-Protocol": "resumable", "X-Goog-Upload-Command": "start",
                    "X-Goog-Upload-Header-Content-Length": "600000", "X-Goog-Upload-Header-Content-Type": "video/mp4",
                    "Content-Type": "application/json",
                ])
            #expect(start.status == 200, "\(start.text)")
            #expect(start.header("X-Goog-Upload-Status") == "active")
            let uploadURL = try #require(start.header("X-Goog-Upload-URL").flatMap(URL.init(string:)))
            #expect(uploadURL.port == server.port)
            let target = uploadURL.path + "?" + uploadURL.query!

            let first = try await server.request(
                "POST", target, data: data[0..<262_144],
                headers: ["X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "0"])
            #expect(first.status == 200, "\(first.text)")
            #expect(first.header("X-Goog-Upload-Size-Received") == "262144")

            // The next chunk's connection drops after 100,000 of its bytes.
            let head = "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nX-Goog-Upload-Command: upload\r\n"
                + "X-Goog-Upload-Offset: 262144\r\nContent-Length: 262144\r\n\r\n"
            let dropped = try RawHTTPConnection(port: server.port, request: head)
            try dropped.sendBody(data[262_144..<362_144])
            try await Task.sleep(for: .milliseconds(200))
            dropped.disconnect()
            try await Task.sleep(for: .milliseconds(200))

            // The server may still be writing what arrived before the drop: wait until it settles.
            var query = try await server.request("POST", target, headers: ["X-Goog-Upload-Command": "query"])
            for _ in 0..<100 where query.header("X-Goog-Upload-Size-Received") != "362144" {
                try await Task.sleep(for: .milliseconds(50))
                query = try await server.request("POST", target, headers: ["X-Goog-Upload-Command": "query"])
            }
            #expect(query.status == 200)
            #expect(query.header("X-Goog-Upload-Status") == "active")
            let received = try #require(query.header("X-Goog-Upload-Size-Received").flatMap(Int.init))
            #expect(received == 362_144)
            // Nothing is visible yet.
            Self.expectError(try await server.request("GET", Self.path("videos/clip.mp4")), 404)

            let wrongOffset = try await server.request(
                "POST", target, data: data[0..<10], headers: ["X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "0"])
            Self.expectError(wrongOffset, 400)

            let last = try await server.request(
                "POST", target, data: data[received...],
                headers: ["X-Goog-Upload-Command": "upload, finalize", "X-Goog-Upload-Offset": String(received)])
            #expect(last.status == 200, "\(last.text)")
            #expect(last.header("X-Goog-Upload-Status") == "final")
            #expect(Self.json(last)["size"] as? String == "600000")
            #expect(Self.json(last)["contentType"] as? String == "video/mp4")
            let media = try await server.request("GET", Self.path("videos/clip.mp4") + "?alt=media")
            #expect(media.body == data)
            // A finished upload takes no more chunks, and says it is final.
            let after = try await server.request("POST", target, headers: ["X-Goog-Upload-Command": "query"])
            #expect(after.header("X-Goog-Upload-Status") == "final")
            Self.expectError(
                try await server.request(
                    "POST", target, data: data[0..<1], headers: ["X-Goog-Upload-Command": "upload", "X-Goog-Upload-Offset": "600000"]),
                400)
            Self.expectError(
                try await server.request("POST", Self.objects + "?upload_id=0000", headers: ["X-Goog-Upload-Command": "query"]), 404)
        }
    }

    // MARK: - Metadata, listing, deletion

    @Test func metadataUpdatesAndDownloadTokens() async throws {
        try await withServer(configure: { $0.storageRules = Self.readClosedRules }) { server in
            let owner = ["Authorization": "Firebase " + TestToken.unsigned(uid: "alice")]
            let created = try await Self.upload(server, "alice/doc.txt", Data("hello".utf8), type: "text/plain", headers: owner)
            let token = try #require(created["downloadTokens"] as? String)
            let updated = try await server.request(
                "PATCH", Self.path("alice/doc.txt"),
                body: #"{"cacheControl": "public, max-age=300", "metadata": {"lang": "en"}}"#,
                headers: owner.merging(["Content-Type": "application/json"]) { $1 })
            #expect(updated.status == 200, "\(updated.text)")
            #expect(Self.json(updated)["cacheControl"] as? String == "public, max-age=300")
            #expect((Self.json(updated)["metadata"] as? [String: String]) == ["lang": "en"])
            #expect(Self.json(updated)["metageneration"] as? String == "2")

            // Reading needs the rules or the token: the token makes the URL shareable.
            let url = Self.path("alice/doc.txt") + "?alt=media"
            Self.expectError(try await server.request("GET", url), 403, "Permission denied. No READ permission.")
            let shared = try await server.request("GET", url + "&token=\(token)")
            #expect(shared.status == 200)
            #expect(shared.text == "hello")
            #expect(shared.header("Cache-Control") == "public, max-age=300")
            Self.expectError(try await server.request("GET", url + "&token=guess"), 403)

            // Revoking the tokens (as the console does) ends the shared URL.
            let revoked = try await server.request(
                "PATCH", Self.path("alice/doc.txt"), body: #"{"metadata": {"firebaseStorageDownloadTokens": ""}}"#, headers: owner)
            #expect(revoked.status == 200)
            #expect(Self.json(revoked)["downloadTokens"] == nil)
            Self.expectError(try await server.request("GET", url + "&token=\(token)"), 403)

            // Admins make and delete tokens one at a time, as with Firebase's create_token.
            Self.expectError(
                try await server.request("POST", Self.path("alice/doc.txt") + "?create_token=true", headers: owner), 403,
                "Missing admin credentials.")
            let minted = try await server.request(
                "POST", Self.path("alice/doc.txt") + "?create_token=true", headers: TestServer.adminHeaders)
            let fresh = try #require(Self.json(minted)["downloadTokens"] as? String)
            #expect(try await server.request("GET", url + "&token=\(fresh)").status == 200)
            let removed = try await server.request(
                "POST", Self.path("alice/doc.txt") + "?delete_token=\(fresh)", headers: TestServer.adminHeaders)
            #expect(Self.json(removed)["downloadTokens"] == nil)
            Self.expectError(try await server.request("GET", url + "&token=\(fresh)"), 403)
            // PUT with X-HTTP-Method-Override: PATCH updates metadata too.
            let overridden = try await server.request(
                "PUT", Self.path("alice/doc.txt"), body: #"{"contentLanguage": "en"}"#,
                headers: owner.merging(["X-HTTP-Method-Override": "PATCH"]) { $1 })
            #expect(Self.json(overridden)["contentLanguage"] as? String == "en")

            Self.expectError(
                try await server.request("PATCH", Self.path("alice/doc.txt"), body: "[1]", headers: owner), 400)
            Self.expectError(
                try await server.request("PATCH", Self.path("alice/doc.txt"), body: #"{"metadata": {"n": 1}}"#, headers: owner), 400)
        }
    }

    /// "You can delete a metadata property by setting it to null": every writable property,
    /// the content type falling back to the default; an absent property is left as it is, and
    /// a new object given nulls has none of them.
    @Test func nullDeletesMetadataProperties() async throws {
        try await withServer(configure: { $0.storageRules = Self.readClosedRules }) { server in
            let owner = ["Authorization": "Firebase " + TestToken.unsigned(uid: "alice"), "Content-Type": "application/json"]
            _ = try await Self.upload(server, "alice/doc.txt", Data("hello".utf8), type: "text/plain", headers: owner)
            let set = try await server.request(
                "PATCH", Self.path("alice/doc.txt"),
                body: #"{"cacheControl": "no-cache", "contentDisposition": "inline", "contentEncoding": "identity", "contentLanguage": "en", "metadata": {"a": "1", "b": "2"}}"#,
                headers: owner)
            #expect(set.status == 200, "\(set.text)")
            let cleared = try await server.request(
                "PATCH", Self.path("alice/doc.txt"),
                body: #"{"cacheControl": null, "contentDisposition": null, "contentEncoding": null, "contentLanguage": null, "contentType": null, "metadata": {"a": null}}"#,
                headers: owner)
            #expect(cleared.status == 200, "\(cleared.text)")
            let object = Self.json(cleared)
            for key in ["cacheControl", "contentLanguage"] {
                #expect(object[key] == nil, "\(key) is still \(object[key] ?? "")")
            }
            // The rest show what downloads are now served with, as Firebase's resource does.
            #expect(object["contentType"] as? String == "application/octet-stream")
            #expect(object["contentEncoding"] as? String == "identity")
            #expect(object["contentDisposition"] as? String == "attachment; filename*=utf-8''doc.txt")
            #expect((object["metadata"] as? [String: String]) == ["b": "2"])

            // Absent leaves it: only the language changes.
            _ = try await server.request("PATCH", Self.path("alice/doc.txt"), body: #"{"cacheControl": "no-store"}"#, headers: owner)
            let kept = try await server.request("PATCH", Self.path("alice/doc.txt"), body: #"{"contentLanguage": "fr"}"#, headers: owner)
            #expect(Self.json(kept)["cacheControl"] as? String == "no-store")
            #expect(Self.json(kept)["contentLanguage"] as? String == "fr")

            // A wrong type is refused and changes nothing.
            Self.expectError(
                try await server.request("PATCH", Self.path("alice/doc.txt"), body: #"{"cacheControl": 5}"#, headers: owner), 400)
            let after = try await server.request("PATCH", Self.path("alice/doc.txt"), body: "{}", headers: owner)
            #expect(Self.json(after)["cacheControl"] as? String == "no-store")
        }
    }

    static let readClosedRules = """
        rules_version = '2';
        service firebase.storage {
          match /b/{bucket}/o {
            match /{owner}/{rest=**} {
              allow write: if request.auth.uid == owner;
            }
          }
        }
        """

    @Test func listingAndDeleting() async throws {
        try await withServer { server in
            for name in ["alice/a.jpg", "alice/b.jpg", "alice/sub/c.jpg", "bob/d.jpg", "top.txt"] {
                try await Self.upload(server, name, Data([1]))
            }
            let top = Self.json(try await server.request("GET", Self.objects + "?delimiter=%2F"))
            #expect(top["prefixes"] as? [String] == ["alice/", "bob/"])
            #expect((top["items"] as? [[String: String]])?.map { $0["name"] } == ["top.txt"])
            let alice = Self.json(try await server.request("GET", Self.objects + "?prefix=alice%2F&delimiter=%2F&maxResults=1"))
            #expect(alice["prefixes"] as? [String] == [])
            #expect((alice["items"] as? [[String: String]])?.map { $0["name"] } == ["alice/a.jpg"])
            let token = try #require(alice["nextPageToken"] as? String)
            let next = Self.json(try await server.request(
                "GET", Self.objects + "?prefix=alice%2F&delimiter=%2F&maxResults=10&pageToken=\(token)"))
            #expect((next["items"] as? [[String: String]])?.map { $0["name"] } == ["alice/b.jpg"])
            #expect(next["prefixes"] as? [String] == ["alice/sub/"])
            #expect(next["nextPageToken"] == nil)

            let deleted = try await server.request("DELETE", Self.path("alice/a.jpg"))
            #expect(deleted.status == 204)
            Self.expectError(try await server.request("GET", Self.path("alice/a.jpg")), 404, "Not Found.")
            Self.expectError(try await server.request("DELETE", Self.path("alice/a.jpg")), 404)
            Self.expectError(try await server.request("GET", Self.objects + "?maxResults=abc"), 400)
        }
    }

    // MARK: - Bad input

    @Test func hostileNamesAndOversizedFilesAreRefused() async throws {
        try await withServer(configure: { $0.maxFileBytes = 4096 }) { server in
            for name in ["..%2Fescape", "a%2F..%2Fb", "tab%09name", "%2Fleading", String(repeating: "x", count: 1100)] {
                let result = try await server.request("POST", Self.objects + "?name=\(name)", data: Data([1]))
                Self.expectError(result, 400)
                #expect((Self.json(result)["error"] as? [String: Any])?["message"] as? String != nil)
            }
            Self.expectError(try await server.request("POST", Self.objects, data: Data([1])), 400)
            let tooBig = try await server.request("POST", Self.objects + "?name=big.bin", data: Self.bytes(5000))
            Self.expectError(tooBig, 413)
            Self.expectError(try await server.request("GET", Self.path("big.bin")), 404)
            let badType = try await server.request(
                "POST", Self.objects + "?name=a.bin", data: Data([1]), headers: ["Content-Type": "not a type"])
            Self.expectError(badType, 400)
            Self.expectError(try await server.request("GET", "/v0/b/\(Self.bucket)/x"), 404)
            Self.expectError(try await server.request("POST", "/v0/b/Bad%20Bucket/o?name=a", data: Data([1])), 400)
            let listing = Self.json(try await server.request("GET", Self.objects))
            #expect((listing["items"] as? [Any])?.isEmpty == true)
        }
    }

    // MARK: - Storage rules

    static let friendlyPixStorageRules = try! String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/rules/friendlypix-web-storage.rules").standardized,
        encoding: .utf8)

    static func user(_ uid: String, claims: [String: any Sendable] = [:]) -> [String: String] {
        ["Authorization": "Firebase " + TestToken.unsigned(uid: uid, claims: claims)]
    }

    @Test func friendlyPixStorageRulesAreEnforced() async throws {
        try await withServer(configure: { $0.storageRules = Self.friendlyPixStorageRules }) { server in
            let image = Self.bytes(2000)
            let full = "alice/full/p1/photo.jpg"
            try await Self.upload(server, full, image, headers: Self.user("alice"))
            // Bob may read it but not replace it; signed out, nobody writes.
            #expect(try await server.request("GET", Self.path(full) + "?alt=media").body == image)
            let forged = try await server.request(
                "POST", Self.objects + "?name=alice%2Ffull%2Fp1%2Fphoto.jpg", data: Self.bytes(10),
                headers: Self.user("bob").merging(["Content-Type": "image/jpeg"]) { $1 })
            Self.expectError(forged, 403, "Permission denied. No WRITE permission.")
            #expect(try await server.request("GET", Self.path(full) + "?alt=media").body == image)
            // Not an image, or too big for a thumbnail: refused.
            let text = try await server.request(
                "POST", Self.objects + "?name=alice%2Ffull%2Fp1%2Fnotes.txt", data: Data("hi".utf8),
                headers: Self.user("alice").merging(["Content-Type": "text/plain"]) { $1 })
            Self.expectError(text, 403)
            let bigThumb = try await server.request(
                "POST", Self.objects + "?name=alice%2Fthumb%2Fp1%2Fbig.jpg", data: Self.bytes(1024 * 1024),
                headers: Self.user("alice").merging(["Content-Type": "image/jpeg"]) { $1 })
            Self.expectError(bigThumb, 403)
            Self.expectError(try await server.request("GET", Self.path("alice/thumb/p1/big.jpg")), 404)
            // Listing needs rules version 2; these rules are version 1.
            Self.expectError(try await server.request("GET", Self.objects + "?prefix=alice%2F"), 403, "Permission denied. No LIST permission.")
            // Deleting: the owner and admins may, others not.
            Self.expectError(try await server.request("DELETE", Self.path(full), headers: Self.user("bob")), 403)
            #expect(try await server.request("DELETE", Self.path(full), headers: Self.user("alice")).status == 204)
            try await Self.upload(server, full, image, headers: Self.user("alice"))
            #expect(try await server.request("DELETE", Self.path(full), headers: Self.user("root", claims: ["admin": true])).status == 204)
            // The admin credential is not bound by the rules.
            try await Self.upload(server, "anything/goes.bin", Data([1]), type: "application/octet-stream", headers: TestServer.adminHeaders)
        }
    }

    @Test func storageIsClosedUntilRulesAreGiven() async throws {
        try await withServer(configure: { $0.storageRules = nil }) { server in
            let refused = try await server.request("POST", Self.objects + "?name=a.txt", data: Data([1]), headers: Self.user("alice"))
            Self.expectError(refused, 403)
            Self.expectError(try await server.request("GET", Self.objects), 403)
            try await Self.upload(server, "a.txt", Data([1]), headers: TestServer.adminHeaders)
            Self.expectError(try await server.request("GET", Self.path("a.txt")), 403)
        }
    }
}
