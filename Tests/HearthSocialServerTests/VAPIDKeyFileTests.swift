import Foundation
import HearthSocialServer
import Testing

/// The VAPID key kept across restarts: made once, owner-only, never silently replaced.
@Suite("The VAPID key file")
struct VAPIDKeyFileTests {
    /// A fresh folder for one test, removed after it.
    static func withFolder(_ body: (URL) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder)
    }

    static func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test("The first start makes the key, owner-only, as one line; later starts read the same key")
    func createAndReload() throws {
        try Self.withFolder { folder throws in
            let url = folder.appendingPathComponent("vapid.key")
            let file = VAPIDKeyFile(url: url)
            #expect(try file.load() == nil)

            let made = VAPIDKey()
            let key = try file.loadOrCreate(makeKey: { made })
            #expect(key.rawBase64URL == made.rawBase64URL)
            #expect(try String(contentsOf: url, encoding: .utf8) == made.rawBase64URL + "\n")
            #expect(try Self.mode(url) == 0o600)
            // Nothing else is left in the folder (no temporary file).
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["vapid.key"])

            let reloaded = try VAPIDKeyFile(url: url).loadOrCreate(makeKey: { Issue.record("a second key was made"); return VAPIDKey() })
            #expect(reloaded.publicKeyBase64URL == made.publicKeyBase64URL)
            #expect(try file.load()?.rawBase64URL == made.rawBase64URL)
        }
    }

    @Test("A malformed file is an error and is left as it is", arguments: ["", "\n", "not a key\n", "abc", "a b\n"])
    func malformed(content: String) throws {
        try Self.withFolder { folder throws in
            let url = folder.appendingPathComponent("vapid.key")
            #expect(FileManager.default.createFile(atPath: url.path, contents: Data(content.utf8), attributes: [.posixPermissions: 0o600]))
            #expect(throws: VAPIDKeyFile.Problem.malformed(path: url.path)) { try VAPIDKeyFile(url: url).loadOrCreate() }
            #expect(try String(contentsOf: url, encoding: .utf8) == content)
        }
    }

    @Test("A key with more after it, or a file far too long, is malformed")
    func extraContent() throws {
        try Self.withFolder { folder throws in
            let url = folder.appendingPathComponent("vapid.key")
            let key = VAPIDKey().rawBase64URL
            for content in [key + "\n" + key + "\n", key + String(repeating: "A", count: 10_000)] {
                try Data(content.utf8).write(to: url)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
                #expect(throws: VAPIDKeyFile.Problem.malformed(path: url.path)) { try VAPIDKeyFile(url: url).load() }
            }
            // Without the newline (written by hand) it is taken.
            try Data(key.utf8).write(to: url)
            #expect(try VAPIDKeyFile(url: url).load()?.rawBase64URL == key)
        }
    }

    @Test("A key file others may read is refused, not used")
    func tooOpen() throws {
        try Self.withFolder { folder throws in
            let url = folder.appendingPathComponent("vapid.key")
            let key = VAPIDKey()
            #expect(FileManager.default.createFile(
                atPath: url.path, contents: Data((key.rawBase64URL + "\n").utf8), attributes: [.posixPermissions: 0o644]))
            #expect(throws: VAPIDKeyFile.Problem.tooOpen(path: url.path, mode: 0o644)) { try VAPIDKeyFile(url: url).loadOrCreate() }
            #expect(VAPIDKeyFile.Problem.tooOpen(path: url.path, mode: 0o644).description.contains("chmod 600"))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
            #expect(try VAPIDKeyFile(url: url).loadOrCreate().rawBase64URL == key.rawBase64URL)
        }
    }

    @Test("A folder that does not exist is an error")
    func noFolder() throws {
        try Self.withFolder { folder throws in
            let url = folder.appendingPathComponent("missing/vapid.key")
            #expect {
                try VAPIDKeyFile(url: url).loadOrCreate()
            } throws: { error in
                guard case .cannotCreate(let path, _) = error as? VAPIDKeyFile.Problem else { return false }
                return path == url.path
            }
        }
    }

    @Test("Of two creators racing, the second ends with the first one's key")
    func race() throws {
        try Self.withFolder { folder throws in
            let url = folder.appendingPathComponent("vapid.key")
            let first = VAPIDKey()
            var won: VAPIDKey?
            // The second creator makes its key, and the first creates the file before the
            // second gets to write its own.
            let second = try VAPIDKeyFile(url: url).loadOrCreate(makeKey: {
                won = try? VAPIDKeyFile(url: url).loadOrCreate(makeKey: { first })
                return VAPIDKey()
            })
            #expect(won?.rawBase64URL == first.rawBase64URL)
            #expect(second.rawBase64URL == first.rawBase64URL)
            #expect(try VAPIDKeyFile(url: url).load()?.rawBase64URL == first.rawBase64URL)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["vapid.key"])
        }
    }

    @Test("Many creators at once all end with one key")
    func concurrentCreators() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("vapid.key")
        let keys = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 {
                group.addTask { try VAPIDKeyFile(url: url).loadOrCreate().rawBase64URL }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(keys.count == 1)
        #expect(try keys.first == VAPIDKeyFile(url: url).load()?.rawBase64URL)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["vapid.key"])
    }
}
