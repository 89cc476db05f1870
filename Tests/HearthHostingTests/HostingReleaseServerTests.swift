import AsyncHTTPClient
import Foundation
import HearthServer
import HearthTesting
import NIOCore
import NIOHTTP1
import Testing

/// A server without `--hosting` serves the live release of its files folder, switching on the
/// next request after a deploy or a rollback, and lists and rolls back releases for the console.
@Suite("Hosting releases on a real server", .serialized)
struct HostingReleaseServerTests {
    struct Answer {
        let status: Int
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    }

    func send(
        _ client: HTTPClient, _ server: TestServer, _ path: String, method: HTTPMethod = .GET, admin: Bool = false, body: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)\(path)")
        request.method = method
        if admin { request.headers.add(name: "Authorization", value: "Bearer \(TestServer.adminToken)") }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        return Answer(status: Int(response.status.code), body: Array(bytes.readableBytesView))
    }

    @Test("Nothing deployed: the demo app; each deploy and rollback is served from the next request")
    func servesTheLiveRelease() async throws {
        let folder = try TemporaryDirectory(prefix: "hearth-release-server")
        defer { folder.remove() }
        let project = folder.url.appendingPathComponent("project")
        func write(_ path: String, _ text: String) throws {
            let url = project.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try write("firebase.json", #"{"hosting": {"public": "public", "rewrites": [{"source": "**", "destination": "/index.html"}]}}"#)
        let files = folder.url.appendingPathComponent("files")
        let releases = HostingReleases(folder: HostingReleases.folder(inFiles: files))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))
        do {
            try await TestServer.with(configure: { configuration in
                configuration.filesDirectory = files
                configuration.webFiles = WebFiles(files: ["index.html": Array("demo app".utf8), "console/index.html": Array("console".utf8)])
            }) { server in
                #expect((try await send(client, server, "/")).text == "demo app")
                let empty = try await send(client, server, "/.hearth/hosting", admin: true)
                #expect(empty.json["mode"] as? String == "releases")
                #expect(empty.json["live"] is NSNull)
                #expect((empty.json["releases"] as? [Any])?.isEmpty == true)

                try write("public/index.html", "version 1")
                let first = try releases.deploy(from: project, message: "first")
                #expect((try await send(client, server, "/")).text == "version 1")
                #expect((try await send(client, server, "/deep/link")).text == "version 1")
                try write("public/index.html", "version 2")
                let second = try releases.deploy(from: project)
                #expect((try await send(client, server, "/")).text == "version 2")
                // The console keeps its path.
                #expect((try await send(client, server, "/console/")).text == "console")

                let listing = try await send(client, server, "/.hearth/hosting", admin: true)
                #expect(listing.json["live"] as? String == second.id)
                let listed = (listing.json["releases"] as? [[String: Any]]) ?? []
                #expect(listed.map { $0["id"] as? String } == [second.id, first.id])
                #expect(listed.last?["message"] as? String == "first")
                let filesAnswer = try await send(client, server, "/.hearth/hosting/files?release=\(first.id)", admin: true)
                #expect(filesAnswer.json["total"] as? Int == 1)
                #expect(((filesAnswer.json["files"] as? [[String: Any]]) ?? []).map { $0["path"] as? String } == ["index.html"])

                // Refused without the admin's credential, for an unknown release, or a body
                // that names none well: nothing changes.
                #expect((try await send(client, server, "/.hearth/hosting")).status == 401)
                let anonymous = try await send(client, server, "/.hearth/hosting/rollback", method: .POST, body: #"{"release": "\#(first.id)"}"#)
                #expect(anonymous.status == 401)
                let unknown = try await send(
                    client, server, "/.hearth/hosting/rollback", method: .POST, admin: true, body: #"{"release": "20200101-000000-000000"}"#)
                #expect(unknown.status == 404)
                #expect(unknown.json["error"] as? String == "There is no release 20200101-000000-000000.")
                let malformed = try await send(client, server, "/.hearth/hosting/rollback", method: .POST, admin: true, body: #"{"release": 7}"#)
                #expect(malformed.status == 400)
                #expect((try await send(client, server, "/.hearth/hosting/files?release=..%2Freleases", admin: true)).status == 404)
                #expect((try await send(client, server, "/")).text == "version 2")

                let rolledBack = try await send(client, server, "/.hearth/hosting/rollback", method: .POST, admin: true, body: "{}")
                #expect(rolledBack.status == 200)
                #expect((rolledBack.json["live"] as? [String: Any])?["id"] as? String == first.id)
                #expect((try await send(client, server, "/")).text == "version 1")
                #expect(releases.currentID() == first.id)
            }
        } catch {
            try await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }
}
