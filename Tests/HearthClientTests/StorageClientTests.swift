import Foundation
import HearthClient
import HearthServer
import HearthTesting
import Synchronization
import Testing

/// The SDK's file storage against a real server: uploads with progress, downloads, download
/// URLs, metadata, listing, deletion, and the storage rules deciding by the signed-in user.
@Suite("HearthClient storage")
struct StorageClientTests {
    static let friendlyPixStorage = try! String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/rules/friendlypix-web-storage.rules").standardized,
        encoding: .utf8)

    static func bytes(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }) }

    @Test func uploadsWithProgressAndReadsBack() async throws {
        try await TestServer.with { (server: TestServer) async throws in
            let storage = Storage(url: server.baseURL, chunkSize: 100_000)
            let photo = storage.reference("alice/full/p1/photo.jpg")
            let reports = Mutex<[Int64]>([])
            let data = Self.bytes(250_000)
            let metadata = try await photo.putData(data, contentType: "image/jpeg", customMetadata: ["caption": "sea"]) { sent, total in
                #expect(total == 250_000)
                reports.withLock { $0.append(sent) }
            }
            #expect(reports.withLock { $0 } == [100_000, 200_000, 250_000])
            #expect(metadata.size == 250_000)
            #expect(metadata.contentType == "image/jpeg")
            #expect(metadata.customMetadata == ["caption": "sea"])
            #expect(metadata.downloadTokens.count == 1)
            #expect(try await photo.data() == data)

            let url = try await photo.downloadURL()
            let shared = try await httpRequest("GET", url)
            #expect(shared.body == data)

            let updated = try await photo.updateMetadata(customMetadata: ["caption": nil, "place": "Nice"])
            #expect(updated.customMetadata == ["place": "Nice"])

            // A file from disk, read piece by piece.
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let local = directory.url.appendingPathComponent("thumb.jpg")
            try Self.bytes(5000).write(to: local)
            try await storage.reference("alice/thumb/p1/photo.jpg").putFile(from: local, contentType: "image/jpeg")

            let folder = try await storage.reference("alice").listAll()
            #expect(folder.prefixes.map(\.fullPath) == ["alice/full", "alice/thumb"])
            #expect(folder.items.isEmpty)
            let files = try await storage.reference("alice/thumb/p1").listAll()
            #expect(files.items.map(\.name) == ["photo.jpg"])

            try await photo.delete()
            let missing = await #expect(throws: HearthClientError.self) { try await photo.getMetadata() }
            #expect(missing?.kind == .notFound)
        }
    }

    @Test func storageRulesJudgeTheSignedInUser() async throws {
        try await TestServer.with(configure: { $0.storageRules = Self.friendlyPixStorage }) { (server: TestServer) async throws in
            let auth = Auth(url: server.baseURL)
            let storage = Storage(url: server.baseURL, auth: auth)
            let user = try await auth.createUser(email: "ann@example.com", password: "secret-pw")
            let mine = storage.reference("\(user.uid)/thumb/p1/photo.jpg")
            try await mine.putData(Self.bytes(10_000), contentType: "image/jpeg")
            let theirs = storage.reference("someone-else/thumb/p1/photo.jpg")
            let denied = await #expect(throws: HearthClientError.self) {
                try await theirs.putData(Self.bytes(10), contentType: "image/jpeg")
            }
            #expect(denied?.kind == .permissionDenied)
            #expect(denied?.message == "Permission denied. No WRITE permission.")
            let notImage = await #expect(throws: HearthClientError.self) {
                try await storage.reference("\(user.uid)/full/p1/notes.txt").putData(Data("hi".utf8), contentType: "text/plain")
            }
            #expect(notImage?.kind == .permissionDenied)
            try await mine.delete()
        }
    }
}
