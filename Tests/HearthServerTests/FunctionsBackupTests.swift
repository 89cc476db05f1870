import Crypto
import Foundation
@testable import HearthBackup
@testable import HearthServer
import HearthTesting
import Testing

/// The functions folder in backups (`hearth backup --functions`, the server's own backups):
/// what is copied and left out, the manifest, restoring it, refusals, and backups made before
/// functions were backed up; against real folders in a temporary directory.
@Suite("Functions in backups")
struct FunctionsBackupTests {
    /// A temporary place with a data folder and a functions folder beside it.
    struct Place {
        let root: TemporaryDirectory
        var data: URL { root.url.appendingPathComponent("data") }
        var functions: URL { root.url.appendingPathComponent("functions") }
        /// Where restores go.
        var restoredData: URL { root.url.appendingPathComponent("restored-data") }
        var restoredFunctions: URL { root.url.appendingPathComponent("restored-functions") }

        init() throws {
            root = try TemporaryDirectory(prefix: "hearth-functions-backup")
            try FileManager.default.createDirectory(at: data.appendingPathComponent("databases"), withIntermediateDirectories: true)
            try Data("token\n".utf8).write(to: data.appendingPathComponent("admin-token"))
        }

        func write(_ text: String, at path: String, in folder: URL? = nil) throws {
            let url = (folder ?? functions).appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }

        func link(_ path: String, to destination: String) throws {
            try FileManager.default.createSymbolicLink(
                atPath: functions.appendingPathComponent(path).path, withDestinationPath: destination)
        }

        func backup(
            _ name: String = "backup", functions: URL?, limits: FunctionsFolderCopy.Limits = .init()
        ) throws -> (URL, BackupManifest) {
            let destination = root.url.appendingPathComponent(name)
            let backup = DataFolderBackup(
                source: data, filesDirectory: nil, functionsFolder: functions, functionsLimits: limits, clock: { 1_000 })
            return (destination, try backup.write(to: destination))
        }
    }

    /// A functions folder with source, what is rebuilt, and links in and out of it.
    static func typicalFolder(in place: Place) throws {
        try place.write("from firebase_functions import db_fn\n", at: "main.py")
        try place.write("firebase-functions\n", at: "requirements.txt")
        try place.write(#"{"webhooks": {}}"#, at: "webhooks.json")
        try place.write("def helper(): pass\n", at: "lib/helpers.py")
        try place.write("apple\npear\n", at: "data/words.txt")
        try place.write("SECRET_NAME=x\n", at: ".env")
        try place.write("#!/bin/python", at: "venv/bin/python")
        try place.write("x", at: ".venv/lib/site.py")
        try place.write("x", at: "__pycache__/main.cpython-312.pyc")
        try place.write("x", at: "lib/__pycache__/helpers.cpython-312.pyc")
        try place.write("x", at: "node_modules/left-pad/index.js")
        try place.write("x", at: "stale.pyc")
        try place.write("outside\n", at: "outside.txt", in: place.root.url)
        try place.link("main-link.py", to: "main.py")
        try place.link("out.txt", to: place.root.url.appendingPathComponent("outside.txt").path)
        try place.link("lib-link", to: "lib")
        try place.link("nowhere.py", to: "missing.py")
    }

    /// A place whose typical functions folder is backed up, with the backup.
    static func typicalBackup() throws -> (Place, URL) {
        let place = try Place()
        try typicalFolder(in: place)
        return (place, try place.backup(functions: place.functions).0)
    }

    static let typicalSource = [
        ".env", "data/words.txt", "lib/helpers.py", "main-link.py", "main.py", "requirements.txt", "webhooks.json",
    ]

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    @Test func theSourceIsCopiedWithSizesAndHashesAndWhatIsRebuiltOrLeadsOutIsLeftOut() throws {
        let place = try Place()
        defer { place.root.remove() }
        try Self.typicalFolder(in: place)

        let (backup, manifest) = try place.backup(functions: place.functions)

        #expect(manifest.format == 2)
        #expect(manifest.functions?.source == place.functions.resolvingSymlinksInPath().path)
        #expect(manifest.functions?.linksLeftOut == ["lib-link", "nowhere.py", "out.txt"])
        let functionsFiles = manifest.files.filter(manifest.isFunctionsFile)
        #expect(functionsFiles.map(\.path) == Self.typicalSource.map { "functions/\($0)" })
        for file in functionsFiles {
            let source = try Data(contentsOf: place.functions.appendingPathComponent(String(file.path.dropFirst("functions/".count))))
            #expect(file.bytes == Int64(source.count) && file.sha256 == Self.sha256(source), "\(file.path)")
        }
        // A link inside the folder is copied as the file it leads to.
        let linked = backup.appendingPathComponent("functions/main-link.py")
        #expect(try FileManager.default.attributesOfItem(atPath: linked.path)[.type] as? FileAttributeType == .typeRegular)
        #expect(try String(contentsOf: linked, encoding: .utf8) == "from firebase_functions import db_fn\n")
        // The data folder is copied as before, beside the functions.
        #expect(manifest.files.map(\.path).contains("admin-token"))
        #expect(try BackupRestore(backup: backup, clock: { 0 }).verify() == manifest)
    }

    @Test func aBackupWithoutFunctionsIsTheFormerFormat() throws {
        let place = try Place()
        defer { place.root.remove() }
        let (backup, manifest) = try place.backup(functions: nil)
        #expect(manifest.format == 1 && manifest.functions == nil)
        let written = try String(contentsOf: backup.appendingPathComponent("hearth-backup.json"), encoding: .utf8)
        #expect(!written.contains(#""functions""#), "an older Hearth reads it as it always did")
    }

    @Test func aFunctionsFolderInsideTheDataFolderIsCopiedOnceAsFunctions() throws {
        let place = try Place()
        defer { place.root.remove() }
        let inside = place.data.appendingPathComponent("my-functions")
        try place.write("print(1)\n", at: "main.py", in: inside)
        let (_, manifest) = try place.backup(functions: inside)
        #expect(manifest.files.map(\.path).filter { $0.hasSuffix("main.py") } == ["functions/main.py"])
    }

    @Test func restoreBringsTheFunctionsBackOnlyWhereAsked() throws {
        let (place, backup) = try Self.typicalBackup()
        defer { place.root.remove() }

        let (data, functions) = (place.restoredData, place.restoredFunctions)
        let outcome = try BackupRestore(backup: backup, clock: { 0 }).restore(into: data, functionsFolder: functions, replacing: false)
        #expect(outcome.previousFunctions == nil)
        for path in Self.typicalSource {
            #expect(
                try Data(contentsOf: functions.appendingPathComponent(path))
                    == Data(contentsOf: place.functions.appendingPathComponent(path)), "\(path)")
        }
        #expect(!FileManager.default.fileExists(atPath: functions.appendingPathComponent("venv").path))
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("functions").path))
        #expect(FileManager.default.fileExists(atPath: data.appendingPathComponent("admin-token").path))

        // Without --functions the data comes back alone.
        let dataOnly = place.root.url.appendingPathComponent("data-only")
        _ = try BackupRestore(backup: backup, clock: { 0 }).restore(into: dataOnly, replacing: false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dataOnly.path).sorted() == ["admin-token"])
    }

    @Test func aDamagedFunctionsFileFailsTheCheckAndNothingIsRestored() throws {
        let (place, backup) = try Self.typicalBackup()
        defer { place.root.remove() }
        try place.write("tampered", at: "functions/main.py", in: backup)

        let (data, functions) = (place.restoredData, place.restoredFunctions)
        let error = #expect(throws: BackupError.self) {
            try BackupRestore(backup: backup, clock: { 0 }).restore(into: data, functionsFolder: functions, replacing: false)
        }
        #expect(error?.description.contains("functions/main.py differs from the backup's manifest") == true)
        #expect(!FileManager.default.fileExists(atPath: data.path) && !FileManager.default.fileExists(atPath: functions.path))
        let listing = BackupCatalog(folder: place.root.url).listing(named: "backup")
        #expect(listing.functions && !listing.verified)
    }

    @Test func aFunctionsFolderThatHoldsSomethingIsReplacedOnlyWhenAskedAndKeptAside() throws {
        let (place, backup) = try Self.typicalBackup()
        defer { place.root.remove() }
        let (data, functions) = (place.restoredData, place.restoredFunctions)
        try place.write("newer\n", at: "main.py", in: functions)

        let refused = #expect(throws: BackupError.self) {
            try BackupRestore(backup: backup, clock: { 0 }).restore(into: data, functionsFolder: functions, replacing: false)
        }
        #expect(refused?.description.contains("is not empty; --force moves it aside first") == true)
        #expect(!FileManager.default.fileExists(atPath: data.path), "refused before anything was written")

        let outcome = try BackupRestore(backup: backup, clock: { 7 }).restore(into: data, functionsFolder: functions, replacing: true)
        let aside = try #require(outcome.previousFunctions)
        #expect(aside.lastPathComponent == "restored-functions.before-restore-7")
        #expect(try String(contentsOf: aside.appendingPathComponent("main.py"), encoding: .utf8) == "newer\n")
        #expect(try String(contentsOf: functions.appendingPathComponent("main.py"), encoding: .utf8).hasPrefix("from firebase_functions"))
    }

    @Test func backupsRefuseFoldersThatAreMissingTooLargeOrInTheWay() throws {
        let place = try Place()
        defer { place.root.remove() }
        try Self.typicalFolder(in: place)
        let cases: [(functions: URL, limits: FunctionsFolderCopy.Limits, destination: String, words: String)] = [
            (place.root.url.appendingPathComponent("absent"), .init(), "b1", "does not exist or is not a folder"),
            (place.functions, .init(maxFiles: 3, maxBytes: 1 << 20), "b2", "holds more than 3 files to copy"),
            (place.functions, .init(maxFiles: 100, maxBytes: 40), "b3", "holds more than 40 bytes to copy"),
            (place.functions, .init(), "functions/backup", "cannot go inside the functions folder"),
            (place.data, .init(), "b4", "the functions folder cannot be the data folder"),
        ]
        for refusal in cases {
            let error = #expect(throws: BackupError.self) {
                _ = try place.backup(refusal.destination, functions: refusal.functions, limits: refusal.limits)
            }
            #expect(error?.description.contains(refusal.words) == true, "\(error?.description ?? "")")
            let destination = place.root.url.appendingPathComponent(refusal.destination)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            #expect(!FileManager.default.fileExists(atPath: destination.appendingPathExtension("partial").path))
        }
    }

    @Test func restoreRefusesFunctionsABackupDoesNotHoldOrThatWouldOverlapTheData() throws {
        let place = try Place()
        defer { place.root.remove() }
        try Self.typicalFolder(in: place)
        let (withoutFunctions, _) = try place.backup("without", functions: nil)
        let (withFunctions, _) = try place.backup("with", functions: place.functions)
        let data = place.restoredData
        let notAFolder = place.root.url.appendingPathComponent("outside.txt")
        let cases: [(backup: URL, functions: URL, words: String)] = [
            (withoutFunctions, place.root.url.appendingPathComponent("f1"), "holds no functions folder"),
            (withFunctions, data.appendingPathComponent("functions"), "neither inside the other"),
            (withFunctions, notAFolder, "is not a folder"),
        ]
        for refusal in cases {
            let error = #expect(throws: BackupError.self) {
                try BackupRestore(backup: refusal.backup, clock: { 0 }).restore(
                    into: data, functionsFolder: refusal.functions, replacing: true)
            }
            #expect(error?.description.contains(refusal.words) == true, "\(error?.description ?? "")")
            #expect(!FileManager.default.fileExists(atPath: data.path))
        }
        #expect(BackupCatalog(folder: place.root.url).list().filter(\.verified).map { [$0.name, "\($0.functions)"] }
            == [["without", "false"], ["with", "true"]])
    }

    @Test func aManifestOfTheFormerFormatStillRestoresEveryFileIntoTheDataFolder() throws {
        let place = try Place()
        defer { place.root.remove() }
        // A data folder that happens to hold a folder named functions, backed up by a Hearth of
        // format 1: its files are data, not a functions folder.
        try place.write("kept\n", at: "functions/notes.txt", in: place.data)
        let (backup, _) = try place.backup(functions: nil)
        let manifestURL = backup.appendingPathComponent("hearth-backup.json")
        let written = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        #expect(Set(written.keys) == ["databases", "files", "finishedAt", "format", "objects", "source", "startedAt"])

        let data = place.restoredData
        let outcome = try BackupRestore(backup: backup, clock: { 0 }).restore(into: data, replacing: false)
        #expect(outcome.manifest.functions == nil)
        #expect(try String(contentsOf: data.appendingPathComponent("functions/notes.txt"), encoding: .utf8) == "kept\n")
        let refused = #expect(throws: BackupError.self) {
            try BackupRestore(backup: backup, clock: { 0 }).restore(
                into: place.root.url.appendingPathComponent("d2"), functionsFolder: place.root.url.appendingPathComponent("f2"),
                replacing: false)
        }
        #expect(refused?.description.contains("holds no functions folder") == true)
    }

    @Test func theServersBackupsHoldItsFunctionsFolderAndTheConsoleSaysSo() async throws {
        let place = try Place()
        defer { place.root.remove() }
        try Self.typicalFolder(in: place)
        let backups = place.root.url.appendingPathComponent("backups")
        try await withServer(configure: {
            $0.backupFolder = backups
            $0.functionsFolder = place.functions
        }) { server in
            let made = try await server.request("POST", "/.hearth/backups", headers: TestServer.adminHeaders)
            #expect(made.status == 200, "\(made.text)")
            let body = try #require(try JSONSerialization.jsonObject(with: made.body) as? [String: Any])
            let backup = try #require(body["backup"] as? [String: Any])
            #expect(backup["functions"] as? Bool == true && backup["verified"] as? Bool == true)
            let name = try #require(backup["name"] as? String)
            let manifest = try BackupRestore(backup: backups.appendingPathComponent(name), clock: { 0 }).verify()
            #expect(manifest.files.filter(manifest.isFunctionsFile).map(\.path) == Self.typicalSource.map { "functions/\($0)" })

            let listed = try await server.request("GET", "/.hearth/backups", headers: TestServer.adminHeaders)
            let list = try #require(try JSONSerialization.jsonObject(with: listed.body) as? [String: Any])
            #expect((list["restoreCommand"] as? String)?.contains(" --functions \(place.functions.path) --force") == true)
        }
    }
}
