import Foundation
import HearthBackup
import HearthCore
@testable import HearthEngine
@testable import HearthServer
import HearthStore
import HearthTesting
import Logging
import Testing

/// The console's backups: listing a backup folder (each backup checked against its manifest),
/// "back up now", and restoring one path from a backup while the server runs, against real
/// SQLite files in temporary folders.
@Suite("Backups in the console")
struct BackupConsoleTests {
    static let quiet = Logger(label: "backup-console-test") { _ in SwiftLogNoOpLogHandler() }

    static func json(_ result: HTTPResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: result.body) as? [String: Any], "\(result.text)")
    }

    /// Every file under `folder`, with its size and modification time: what "unchanged" means.
    static func fingerprint(_ folder: URL) -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey, .contentModificationDateKey])
        while let url = enumerator?.nextObject() as? URL {
            let values = try? url.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey])
            files[url.path] = "\(values?.fileSize ?? -1) \(values?.contentModificationDate?.timeIntervalSince1970 ?? 0)"
        }
        return files
    }

    @Test func withoutABackupFolderTheListSaysHowToConfigureOne() async throws {
        try await withServer { server in
            let listed = try await server.request("GET", "/.hearth/backups", headers: TestServer.adminHeaders)
            #expect(listed.status == 200)
            let body = try Self.json(listed)
            #expect(body["configured"] as? Bool == false)
            #expect((body["message"] as? String)?.contains("--backup-dir") == true)
            let now = try await server.request("POST", "/.hearth/backups", headers: TestServer.adminHeaders)
            #expect(now.status == 400)
            #expect(now.text.contains("--backup-dir"))
        }
    }

    @Test func backUpNowListRestoreAPathAndRefuseDamagedOnes() async throws {
        let backups = try TemporaryDirectory(prefix: "hearth-console-backups")
        defer { backups.remove() }
        try await withServer(configure: { $0.backupFolder = backups.url }) { server in
            let admin = TestServer.adminHeaders
            _ = try await server.request("PUT", "/.json", body: #"{"notes":{"a":"old","b":{"c":1}},"keep":"k"}"#, headers: admin)
            for status in [401] {
                #expect(try await server.request("GET", "/.hearth/backups").status == status)
                #expect(try await server.request("POST", "/.hearth/backups", headers: TestServer.userHeaders("u")).status == status)
                #expect(try await server.request(
                    "POST", "/.hearth/backups/restore", body: #"{"backup":"x","database":"default","path":"/"}"#).status == status)
            }

            let made = try await server.request("POST", "/.hearth/backups", headers: admin)
            #expect(made.status == 200, "\(made.text)")
            let backup = try #require((try Self.json(made))["backup"] as? [String: Any])
            let name = try #require(backup["name"] as? String)
            #expect(name.hasPrefix("hearth-backup-"))
            #expect(backup["verified"] as? Bool == true)

            let listed = try Self.json(try await server.request("GET", "/.hearth/backups", headers: admin))
            #expect(listed["configured"] as? Bool == true)
            let entries = try #require(listed["backups"] as? [[String: Any]])
            #expect(entries.map { $0["name"] as? String } == [name])
            #expect((entries[0]["bytes"] as? Int ?? 0) > 0)
            #expect(entries[0]["databases"] as? [String] == ["default"])
            #expect((listed["restoreCommand"] as? String)?.hasPrefix("hearth restore ") == true)
            let progress = try Self.json(try await server.request("GET", "/.hearth/backups?progress", headers: admin))
            #expect(progress["configured"] as? Bool == true && progress["backups"] == nil && progress["running"] == nil)

            // Written after the backup: the restore of /notes takes it back, /keep is left alone.
            _ = try await server.request("PUT", "/notes.json", body: #"{"a":"new","z":true}"#, headers: admin)
            _ = try await server.request("PUT", "/keep.json", body: #""changed""#, headers: admin)
            let before = Self.fingerprint(backups.url.appendingPathComponent(name))

            let target = #"{"backup":"\#(name)","database":"default","path":"/notes"}"#
            let preview = try Self.json(try await server.request("POST", "/.hearth/backups/preview", body: target, headers: admin))
            let current = try #require(preview["current"] as? [String: Any])
            let backed = try #require(preview["backed"] as? [String: Any])
            #expect(current["children"] as? Int == 2 && backed["children"] as? Int == 2)
            #expect(backed["bytes"] as? Int == #"{"a":"old","b":{"c":1}}"#.utf8.count)
            #expect(try await server.read("/notes.json") == #"{"a":"new","z":true}"#, "a preview changes nothing")

            let restored = try await server.request("POST", "/.hearth/backups/restore", body: target, headers: admin)
            #expect(restored.status == 200, "\(restored.text)")
            #expect((try Self.json(restored))["sequence"] as? Int != nil)
            #expect(try await server.read("/notes.json") == #"{"a":"old","b":{"c":1}}"#)
            #expect(try await server.read("/keep.json") == #""changed""#)
            #expect(Self.fingerprint(backups.url.appendingPathComponent(name)) == before, "the backup was only read")

            // The root can be restored too.
            let root = #"{"backup":"\#(name)","database":"default","path":"/"}"#
            #expect(try await server.request("POST", "/.hearth/backups/restore", body: root, headers: admin).status == 200)
            #expect(try await server.read("/keep.json") == #""k""#)

            // Bad requests change nothing.
            _ = try await server.request("PUT", "/keep.json", body: #""later""#, headers: admin)
            let unknown = try await server.request(
                "POST", "/.hearth/backups/restore", body: #"{"backup":"nope","database":"default","path":"/keep"}"#, headers: admin)
            #expect(unknown.status == 422)
            #expect(unknown.text.contains("no backup named nope"))
            let escape = try await server.request(
                "POST", "/.hearth/backups/restore", body: #"{"backup":"../x","database":"default","path":"/keep"}"#, headers: admin)
            #expect(escape.status == 422)
            let missingField = try await server.request("POST", "/.hearth/backups/restore", body: #"{"backup":"\#(name)"}"#, headers: admin)
            #expect(missingField.status == 400)
            let otherDatabase = try await server.request(
                "POST", "/.hearth/backups/restore", body: #"{"backup":"\#(name)","database":"other","path":"/"}"#, headers: admin)
            #expect(otherDatabase.status == 422)
            #expect(otherDatabase.text.contains("holds no database named other"))

            // A damaged backup is listed as such and cannot be restored.
            let log = backups.url.appendingPathComponent(name).appendingPathComponent("databases/default/log.sqlite")
            let handle = try FileHandle(forWritingTo: log)
            try handle.seek(toOffset: 200)
            try handle.write(contentsOf: Data("damage".utf8))
            try handle.close()
            let damaged = try Self.json(try await server.request("GET", "/.hearth/backups", headers: admin))
            let damagedEntry = try #require((damaged["backups"] as? [[String: Any]])?.first)
            #expect(damagedEntry["verified"] as? Bool == false)
            #expect((damagedEntry["problem"] as? String)?.contains("differs from the backup's manifest") == true)
            let refused = try await server.request(
                "POST", "/.hearth/backups/restore", body: #"{"backup":"\#(name)","database":"default","path":"/keep"}"#, headers: admin)
            #expect(refused.status == 422)
            #expect(try await server.read("/keep.json") == #""later""#)
        }
    }

    @Test func aValueLargerThanOneWriteIsRefusedAndChangesNothing() async throws {
        let backups = try TemporaryDirectory(prefix: "hearth-console-backups-big")
        defer { backups.remove() }
        try await withServer(maxWriteBytes: 64, configure: { $0.backupFolder = backups.url }) { server in
            let admin = TestServer.adminHeaders
            // Each write is small; together they are more than one write may hold.
            for key in ["a", "b", "c", "d"] {
                let put = try await server.request("PUT", "/big/\(key).json", body: #""012345678901234""#, headers: admin)
                #expect(put.status == 200)
            }
            let made = try Self.json(try await server.request("POST", "/.hearth/backups", headers: admin))
            let name = try #require((made["backup"] as? [String: Any])?["name"] as? String)
            _ = try await server.request("PUT", "/big.json", body: #""small""#, headers: admin)
            let refused = try await server.request(
                "POST", "/.hearth/backups/restore", body: #"{"backup":"\#(name)","database":"default","path":"/big"}"#, headers: admin)
            #expect(refused.status == 413)
            #expect(refused.text.contains("more than one write may hold"))
            #expect(try await server.read("/big.json") == #""small""#)
        }
    }

    @Test func aSecondBackupAtTheSameTimeIsRefused() async throws {
        let gate = BackupGate()
        #expect(gate.enter())
        #expect(!gate.enter(), "one at a time")
        #expect(gate.running != nil)
        gate.leave()
        #expect(gate.running == nil)

        // The schedule's backup (what "Back up now" runs) while another holds the gate: refused,
        // nothing written; once the gate is free, it runs.
        let data = try TemporaryDirectory(prefix: "hearth-gate-data")
        let backups = try TemporaryDirectory(prefix: "hearth-gate-backups")
        defer {
            data.remove()
            backups.remove()
        }
        let folder = try DataFolder(url: data.url, logger: Self.quiet)
        try await folder.database(named: "default").write(.set(try Path(parsing: "/a"), Node.int(1)))
        let schedule = BackupSchedule(
            backup: DataFolderBackup(source: data.url, clock: { 1_764_000_000_000 }), folder: backups.url, interval: .seconds(60),
            keep: 3, report: nil, logger: Self.quiet, gate: gate)
        #expect(gate.enter())
        guard case .busy = await schedule.attempt() else {
            Issue.record("a backup ran beside another")
            return
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: backups.url.path).isEmpty)
        gate.leave()
        guard case .made(let url, let manifest) = await schedule.attempt() else {
            Issue.record("no backup once the gate was free")
            return
        }
        #expect(manifest.databases.map(\.name) == ["default"])
        #expect(BackupCatalog(folder: backups.url).list().map(\.name) == [url.lastPathComponent])
        #expect(BackupCatalog(folder: backups.url).list().first?.verified == true)
        #expect(gate.running == nil, "the gate is free again")
        folder.close()
    }
}
