import Foundation
@testable import HearthServer
import HearthTesting
import Testing

/// Cloud Storage's JSON API on a real server: who may use it, uploads of every kind (a
/// resumable one chunk by chunk), downloads, conditions and errors in Google's shape.
@Suite("Cloud Storage JSON API")
struct CloudStorageEndpointTests {
    static let bucket = "hearth.appspot.com"
    static let objects = "/storage/v1/b/\(bucket)/o"
    static let uploads = "/upload/storage/v1/b/\(bucket)/o"
    static let admin = TestServer.adminHeaders

    static func encoded(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    static func json(_ result: HTTPResult) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: result.body) as? [String: Any]) ?? [:]
    }

    /// The `error` of a JSON API error answer, checked for Google's shape.
    @discardableResult
    static func expectError(
        _ result: HTTPResult, _ status: Int, reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) -> String? {
        #expect(result.status == status, "\(result.text)", sourceLocation: sourceLocation)
        let error = json(result)["error"] as? [String: Any]
        #expect(error?["code"] as? Int == status, sourceLocation: sourceLocation)
        let item = (error?["errors"] as? [[String: Any]])?.first
        #expect(item?["reason"] as? String == reason, "\(result.text)", sourceLocation: sourceLocation)
        #expect(item?["domain"] as? String == "global", sourceLocation: sourceLocation)
        return error?["message"] as? String
    }

    @discardableResult
    static func upload(_ server: TestServer, _ name: String, _ text: String, query: String = "") async throws -> HTTPResult {
        try await server.request(
            "POST", "\(uploads)?uploadType=media&name=\(encoded(name))\(query)", body: text,
            headers: admin.merging(["Content-Type": "text/plain"]) { $1 })
    }

    @Test func contentRangesAreRead() {
        #expect(UploadContentRange("bytes 0-9/*") == UploadContentRange(bytes: 0...9, total: nil))
        #expect(UploadContentRange("bytes 10-19/20") == UploadContentRange(bytes: 10...19, total: 20))
        #expect(UploadContentRange("bytes */*") == UploadContentRange(bytes: nil, total: nil))
        #expect(UploadContentRange("bytes */0") == UploadContentRange(bytes: nil, total: 0))
        for bad in ["", "bytes", "bytes 5-4/10", "bytes 0-10/10", "bytes -1-3/*", "items 0-1/2", "bytes 0-1", "bytes 1-2/x", "bytes 0-99999999999999999999/*"] {
            #expect(UploadContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test func adminsOnlyAndAuthorizationComesFirst() async throws {
        try await withServer(configure: { $0.emulator = false }) { server in
            #expect(try await Self.upload(server, "a/secret.txt", "secret").status == 200)
            for (headers, reason) in [([String: String](), "required"), (["Authorization": "Bearer wrong"], "authError")] {
                // The same answer whether the object exists or not, and for unknown routes.
                for path in ["\(Self.objects)/a%2Fsecret.txt", "\(Self.objects)/a%2Fmissing.txt", "/storage/v1/b/\(Self.bucket)/nothing"] {
                    Self.expectError(try await server.request("GET", path, headers: headers), 401, reason: reason)
                }
                Self.expectError(
                    try await server.request("DELETE", "\(Self.objects)/a%2Fsecret.txt", headers: headers), 401, reason: reason)
                Self.expectError(
                    try await server.request("POST", "\(Self.uploads)?uploadType=media&name=a%2Fsecret.txt", body: "x", headers: headers),
                    401, reason: reason)
            }
            // An ID token is not an admin's credential.
            Self.expectError(
                try await server.request("GET", "\(Self.objects)/a%2Fsecret.txt", headers: TestServer.userHeaders("alice")), 401,
                reason: "authError")
            let media = try await server.request("GET", "/download/storage/v1/b/\(Self.bucket)/o/a%2Fsecret.txt?alt=media", headers: Self.admin)
            #expect(media.text == "secret")
        }
    }

    @Test func emulatorModeTakesAnonymousRequests() async throws {
        try await withServer { server in
            let created = try await server.request(
                "POST", "\(Self.uploads)?uploadType=media&name=open.txt", body: "open", headers: ["Content-Type": "text/plain"])
            #expect(created.status == 200, "\(created.text)")
            let resource = Self.json(created)
            #expect(resource["kind"] as? String == "storage#object")
            #expect(resource["size"] as? String == "4")
            #expect(resource["crc32c"] as? String != nil)
            #expect(resource["id"] as? String == "\(Self.bucket)/open.txt/\(resource["generation"] as? String ?? "")")
            #expect((resource["mediaLink"] as? String)?.hasPrefix("http://127.0.0.1:\(server.port)/download/storage/v1/") == true)
            let bucket = try await server.request("GET", "/storage/v1/b/\(Self.bucket)")
            #expect(Self.json(bucket)["kind"] as? String == "storage#bucket")
            // A credential Hearth cannot verify (a Google access token from Application Default
            // Credentials) is taken too, as Firebase's emulator takes every request.
            let foreign = try await server.request("GET", "\(Self.objects)/open.txt", headers: ["Authorization": "Bearer ya29.not-ours"])
            #expect(foreign.status == 200, "\(foreign.text)")
            // `"metadata": null` deletes every custom key, the download token too.
            let patched = try await server.request(
                "PATCH", "\(Self.objects)/open.txt", body: #"{"metadata": {"a": "1"}}"#, headers: ["Content-Type": "application/json"])
            #expect((Self.json(patched)["metadata"] as? [String: String])?["a"] == "1")
            let cleared = try await server.request(
                "PATCH", "\(Self.objects)/open.txt", body: #"{"metadata": null}"#, headers: ["Content-Type": "application/json"])
            #expect(cleared.status == 200, "\(cleared.text)")
            #expect(Self.json(cleared)["metadata"] == nil)
            #expect(Self.json(cleared)["metageneration"] as? String == "3")
        }
    }

    @Test func aResumableUploadGoesChunkByChunk() async throws {
        try await withServer { server in
            let start = try await server.request(
                "POST", "\(Self.uploads)?uploadType=resumable", body: #"{"name": "big/file.bin", "metadata": {"k": "v"}}"#,
                headers: Self.admin.merging(["Content-Type": "application/json", "X-Upload-Content-Type": "application/x-test",
                                             "X-Upload-Content-Length": "10"]) { $1 })
            #expect(start.status == 200, "\(start.text)")
            let location = try #require(start.header("Location"))
            let url = try #require(URLComponents(string: location))
            let path = url.path + "?" + (url.percentEncodedQuery ?? "")
            let first = try await server.request(
                "PUT", path, data: Data("01234".utf8), headers: Self.admin.merging(["Content-Range": "bytes 0-4/10"]) { $1 })
            #expect(first.status == 308)
            #expect(first.header("Range") == "bytes=0-4")
            // A chunk that does not fit its Content-Range, or starts past the upload, changes nothing.
            let wrong = try await server.request(
                "PUT", path, data: Data("56".utf8), headers: Self.admin.merging(["Content-Range": "bytes 5-9/10"]) { $1 })
            Self.expectError(wrong, 400, reason: "invalid")
            let gap = try await server.request(
                "PUT", path, data: Data("89".utf8), headers: Self.admin.merging(["Content-Range": "bytes 8-9/10"]) { $1 })
            Self.expectError(gap, 400, reason: "invalid")
            let status = try await server.request("PUT", path, data: Data(), headers: Self.admin.merging(["Content-Range": "bytes */*"]) { $1 })
            #expect(status.status == 308)
            #expect(status.header("Range") == "bytes=0-4")
            let last = try await server.request(
                "PUT", path, data: Data("3456789".utf8), headers: Self.admin.merging(["Content-Range": "bytes 3-9/10"]) { $1 })
            #expect(last.status == 200, "\(last.text)")
            #expect(Self.json(last)["contentType"] as? String == "application/x-test")
            #expect((Self.json(last)["metadata"] as? [String: String])?["k"] == "v")
            let media = try await server.request("GET", "\(Self.objects)/big%2Ffile.bin?alt=media", headers: Self.admin)
            #expect(media.text == "0123456789")
            #expect(media.header("X-Goog-Hash")?.contains("md5=") == true)
        }
    }

    @Test func conditionsAndErrorsInGooglesShape() async throws {
        try await withServer { server in
            let created = Self.json(try await Self.upload(server, "c.txt", "one", query: "&ifGenerationMatch=0"))
            let generation = try #require(created["generation"] as? String)
            Self.expectError(try await Self.upload(server, "c.txt", "two", query: "&ifGenerationMatch=0"), 412, reason: "conditionNotMet")
            Self.expectError(try await Self.upload(server, "c.txt", "two", query: "&ifGenerationMatch=nope"), 400, reason: "invalid")
            let message = Self.expectError(
                try await server.request("GET", "\(Self.objects)/missing%2Fthing", headers: Self.admin), 404, reason: "notFound")
            #expect(message == "No such object: \(Self.bucket)/missing/thing")
            Self.expectError(
                try await server.request("GET", "\(Self.objects)/c.txt?generation=1", headers: Self.admin), 404, reason: "notFound")
            Self.expectError(
                try await server.request("DELETE", "\(Self.objects)/c.txt?ifMetagenerationMatch=5", headers: Self.admin), 412,
                reason: "conditionNotMet")
            Self.expectError(
                try await server.request("PATCH", "\(Self.objects)/c.txt", body: #"{"cacheControl": 7}"#, headers: Self.admin), 400,
                reason: "invalid")
            Self.expectError(
                try await server.request(
                    "GET", "/download/storage/v1/b/\(Self.bucket)/o/c.txt", headers: Self.admin.merging(["Range": "bytes=50-"]) { $1 }),
                416, reason: "requestedRangeNotSatisfiable")
            Self.expectError(try await server.request("GET", "/storage/v1/b/Bad_Bucket!/o", headers: Self.admin), 400, reason: "invalid")
            // Nothing of that changed the object.
            let after = Self.json(try await server.request("GET", "\(Self.objects)/c.txt", headers: Self.admin))
            #expect(after["generation"] as? String == generation)
            #expect(after["metageneration"] as? String == "1")
            #expect(after["cacheControl"] == nil)
            let deleted = try await server.request("DELETE", "\(Self.objects)/c.txt?ifGenerationMatch=\(generation)", headers: Self.admin)
            #expect(deleted.status == 204)
        }
    }
    @Test func contentIsServedAsTheFirebaseAPIServesIt() async throws {
        try await withServer(configure: { $0.filesPort = 0 }) { server in
            let filesPort = try #require(server.filesPort)
            let created = try await server.request(
                "POST", "\(Self.uploads)?uploadType=media&name=mallory%2Fevil.html", body: "<script>alert(1)</script>",
                headers: Self.admin.merging(["Content-Type": "text/html"]) { $1 })
            #expect(created.status == 200, "\(created.text)")
            let path = "/download/storage/v1/b/\(Self.bucket)/o/mallory%2Fevil.html?alt=media"
            // On the files port the JSON API answers too, with the files' headers.
            let direct = try await FilesOriginTests.rawGET(port: filesPort, path, headers: ["Authorization": "Bearer \(TestServer.adminToken)"])
            #expect(FilesOriginTests.status(direct) == 200, "\(direct)")
            #expect(FilesOriginTests.header("Content-Disposition", in: direct)?.hasPrefix("attachment;") == true)
            #expect(FilesOriginTests.header("X-Content-Type-Options", in: direct) == "nosniff")
            #expect(FilesOriginTests.header("Content-Security-Policy", in: direct) == "sandbox; default-src 'none'")
            #expect(FilesOriginTests.header("X-Goog-Hash", in: direct)?.hasPrefix("crc32c=") == true)
            // A browser opening it on the app's origin is sent to the files origin.
            let redirect = try await FilesOriginTests.rawGET(port: server.port, path, host: "localhost:\(server.port)")
            #expect(FilesOriginTests.status(redirect) == 307, "\(redirect)")
            #expect(FilesOriginTests.header("Location", in: redirect) == "http://localhost:\(filesPort)\(path)")
        }
    }
}
