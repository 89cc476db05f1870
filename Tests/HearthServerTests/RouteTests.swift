import Foundation
import HearthCore
import HearthEngine
import HearthServer
import HearthStore
import HearthTesting
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// The REST, account and storage routes answered in process, through the whole pipeline (the
/// namespaces and their middleware) but with no socket: Hummingbird's router test framework
/// hands each request to the application's responder.
@Suite("Routes, in process")
struct RouteTests {
    static let rules = #"{"rules": {"open": {".read": true, ".write": true}, "mine": {"$uid": {".read": "auth.uid == $uid", ".write": "auth.uid == $uid"}}}}"#

    static func withApplication(_ test: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var logger = Logger(label: "route-test")
        logger.logLevel = .warning
        let folder = try DataFolder(url: directory.url, logger: logger)
        var configuration = ServerConfiguration(
            host: "127.0.0.1", port: 0, dataFolder: directory.url, maxWriteBytes: 1 << 20,
            adminToken: TestServer.adminToken, emulator: true, defaultRules: rules)
        configuration.passwordHashRounds = 1 << 10
        configuration.storageRules = TestServer.openStorageRules
        let app = try await buildApplication(configuration: configuration, folder: folder, logger: logger)
        try await app.test(.router) { client in try await test(client) }
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    /// A plain JSON answer gets its header fields in one piece, made once; they are the same
    /// fields, in the same order, as an answer that gets them added one by one (here one with
    /// an ETag, which takes that path).
    @Test func jsonAnswersGetTheSameFieldsEitherWay() async throws {
        try await Self.withApplication { client in
            _ = try await client.execute(uri: "/open/a.json", method: .put, body: ByteBuffer(string: "1"))
            let plain = try await client.execute(uri: "/open/a.json", method: .get)
            let tagged = try await client.execute(uri: "/open/a.json", method: .get, headers: [.init("X-Firebase-ETag")!: "true"])
            let names = { (response: TestResponse) in response.headers.map(\.name.canonicalName).filter { $0 != "etag" } }
            #expect(names(plain) == names(tagged))
            #expect(names(plain) == [
                "content-type", "content-length", "access-control-allow-origin", "access-control-expose-headers",
                "x-content-type-options", "content-security-policy", "x-frame-options", "referrer-policy",
            ])
            #expect(plain.headers[.contentLength] == "1")
            for name in names(plain) {
                let field = HTTPField.Name(name)!
                #expect(plain.headers[field] == tagged.headers[field], "\(name)")
            }
            let refused = try await client.execute(uri: "/mine/ana.json", method: .get)
            #expect(names(refused) == names(plain))
        }
    }

    @Test func restWritesReadsAndRefusals() async throws {
        try await Self.withApplication { client in
            let put = try await client.execute(uri: "/open/a.json", method: .put, body: ByteBuffer(string: #"{"b":1}"#))
            #expect(put.status == .ok)
            #expect(Self.text(put) == #"{"b":1}"#)
            #expect(put.headers[.accessControlAllowOrigin] == "*")
            #expect(put.headers[.xContentTypeOptions] == "nosniff")

            let get = try await client.execute(uri: "/open/a/b.json", method: .get)
            #expect(get.status == .ok)
            #expect(Self.text(get) == "1")

            // The rules answer before anything else, in Firebase's words, and nothing changes.
            let refused = try await client.execute(uri: "/mine/ana.json", method: .put, body: ByteBuffer(string: "1"))
            #expect(refused.status == .unauthorized)
            #expect(Self.text(refused).contains(#""error" : "Permission denied""#))
            let bad = try await client.execute(uri: "/open/c.json", method: .put, body: ByteBuffer(string: "{nope"))
            #expect(bad.status == .badRequest)
            #expect(Self.text(bad).contains("Invalid data; couldn't parse JSON object"))
            let after = try await client.execute(uri: "/open.json", method: .get)
            #expect(Self.text(after) == #"{"a":{"b":1}}"#)

            let preflight = try await client.execute(uri: "/open.json", method: .options)
            #expect(preflight.status == .noContent)
            #expect(preflight.headers[.accessControlAllowMethods]?.contains("PATCH") == true)
        }
    }

    @Test func accountsSignUpAndRefuseInFirebasesShape() async throws {
        try await Self.withApplication { client in
            let json: HTTPFields = [.contentType: "application/json"]
            let signUp = try await client.execute(
                uri: "/identitytoolkit.googleapis.com/v1/accounts:signUp", method: .post, headers: json,
                body: ByteBuffer(string: #"{"email":"ana@example.com","password":"secret123","returnSecureToken":true}"#))
            #expect(signUp.status == .ok)
            let session = try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: signUp.body).utf8)) as? [String: Any])
            let token = try #require(session["idToken"] as? String)
            let uid = try #require(session["localId"] as? String)

            let again = try await client.execute(
                uri: "/identitytoolkit.googleapis.com/v1/accounts:signUp", method: .post, headers: json,
                body: ByteBuffer(string: #"{"email":"ana@example.com","password":"secret123"}"#))
            #expect(again.status == .badRequest)
            #expect(Self.text(again).contains("EMAIL_EXISTS"))

            // The token the route issued is what the database's rules see.
            let mine = try await client.execute(
                uri: "/mine/\(uid).json", method: .put, headers: [.authorization: "Bearer \(token)"], body: ByteBuffer(string: "7"))
            #expect(mine.status == .ok)
        }
    }

    @Test func storageUploadsAndDescribesAnObject() async throws {
        try await Self.withApplication { client in
            let objects = "/v0/b/hearth.appspot.com/o"
            let upload = try await client.execute(
                uri: "\(objects)?name=notes%2Fa.txt", method: .post, headers: [.contentType: "text/plain"],
                body: ByteBuffer(string: "hello"))
            #expect(upload.status == .ok)
            let metadata = try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: upload.body).utf8)) as? [String: Any])
            #expect(metadata["name"] as? String == "notes/a.txt")
            #expect(metadata["size"] as? String == "5")

            let download = try await client.execute(uri: "\(objects)/notes%2Fa.txt?alt=media", method: .get)
            #expect(download.status == .ok)
            #expect(Self.text(download) == "hello")
            #expect(download.headers[.contentSecurityPolicy]?.contains("sandbox") == true)

            let missing = try await client.execute(uri: "\(objects)/nothing", method: .get)
            #expect(missing.status == .notFound)
            let error = try #require(try JSONSerialization.jsonObject(with: Data(Self.text(missing).utf8)) as? [String: Any])
            #expect((error["error"] as? [String: Any])?["code"] as? Int == 404, "\(Self.text(missing))")
        }
    }
}
