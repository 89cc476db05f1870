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
                "x-content-type-options", "content-security-policy", "x-frame-options", "referrer-policy", "x-request-id",
            ])
            #expect(plain.headers[.contentLength] == "1")
            // Every field but the request's own ID is the same.
            for name in names(plain) where name != "x-request-id" {
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

    static func object(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text(response).utf8)) as? [String: Any], "\(text(response))")
    }

    /// Identity Toolkit's `error.code` and `error.message`.
    static func authError(_ response: TestResponse) throws -> (code: Int?, message: String?) {
        let error = try object(response)["error"] as? [String: Any]
        let reasons = error?["errors"] as? [[String: Any]]
        #expect(reasons?.first?["reason"] as? String == "invalid")
        return (error?["code"] as? Int, error?["message"] as? String)
    }

    @Test func eachAPIWritesItsErrorsInItsOwnShape() async throws {
        try await Self.withApplication { client in
            let accounts = "/identitytoolkit.googleapis.com/v1/"
            // Identity Toolkit: an unknown endpoint, a method the endpoint does not take, an
            // admin endpoint without the admin's credential.
            let unknown = try await client.execute(uri: accounts + "accounts:fly", method: .post, body: ByteBuffer(string: "{}"))
            #expect(unknown.status == .notFound)
            #expect(try Self.authError(unknown) == (404, "NOT_FOUND"))
            let wrongMethod = try await client.execute(uri: accounts + "accounts:signUp", method: .get)
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(try Self.authError(wrongMethod) == (405, "METHOD_NOT_ALLOWED"))
            let notAdmin = try await client.execute(
                uri: accounts + "projects/demo/accounts:query", method: .post, body: ByteBuffer(string: "{}"))
            #expect(notAdmin.status == .forbidden)
            #expect(try Self.authError(notAdmin) == (403, "INSUFFICIENT_PERMISSION"))
            let cookie = try await client.execute(
                uri: accounts + "projects/demo:createSessionCookie", method: .post,
                headers: [.authorization: "Bearer \(TestServer.adminToken)"], body: ByteBuffer(string: #"{"idToken":"nope","validDuration":3600}"#))
            #expect(cookie.status == .badRequest)
            #expect(try Self.authError(cookie).message?.hasPrefix("INVALID_ID_TOKEN") == true, "\(Self.text(cookie))")
            let badBody = try await client.execute(uri: accounts + "accounts:signInWithPassword", method: .post, body: ByteBuffer(string: "[1]"))
            #expect(try Self.authError(badBody).message?.hasPrefix("INVALID_ARGUMENT") == true)

            // Cloud Storage: a credential that cannot be verified is 401 in Storage's shape; a
            // method an object does not take is 405.
            let objects = "/v0/b/hearth.appspot.com/o"
            let forged = try await client.execute(
                uri: "\(objects)/a.txt", method: .get, headers: [.authorization: "Bearer not.a.token"])
            #expect(forged.status == .unauthorized)
            let forgedError = try Self.object(forged)["error"] as? [String: Any]
            #expect(forgedError?["code"] as? Int == 401)
            let put = try await client.execute(uri: "\(objects)/a.txt", method: .put, body: ByteBuffer(string: "x"))
            #expect(put.status == .methodNotAllowed)
            #expect((try Self.object(put)["error"] as? [String: Any])?["code"] as? Int == 405)

            // The admin endpoints: the Realtime Database's shape, and a refusal before anything.
            let backups = try await client.execute(uri: "/.hearth/backups/restore", method: .post, body: ByteBuffer(string: "{}"))
            #expect(backups.status == .unauthorized)
            #expect(try Self.object(backups)["error"] is String)
            let browse = try await client.execute(
                uri: "/.hearth/data/children?path=/open&limit=x", method: .get,
                headers: [.authorization: "Bearer \(TestServer.adminToken)"])
            #expect(browse.status == .badRequest, "\(Self.text(browse))")
            #expect(try Self.object(browse)["error"] is String)
        }
    }

    @Test func everyAnswerNamesItsRequest() async throws {
        try await Self.withApplication { client in
            let first = try await client.execute(uri: "/open.json", method: .get)
            let second = try await client.execute(uri: "/identitytoolkit.googleapis.com/v1/accounts:fly", method: .post)
            let third = try await client.execute(uri: "/v0/b/hearth.appspot.com/o/none", method: .get)
            let ids = [first, second, third].compactMap { $0.headers[.init("X-Request-Id")!] }
            #expect(ids.count == 3)
            #expect(Set(ids).count == 3)
            // A client's own ID is not believed (no trusted proxy sent it).
            let claimed = try await client.execute(uri: "/open.json", method: .get, headers: [.init("X-Request-Id")!: "mine-123"])
            #expect(claimed.headers[.init("X-Request-Id")!] != "mine-123")
            #expect(first.headers[.accessControlExposeHeaders]?.contains("X-Request-Id") == true)
        }
    }
}
