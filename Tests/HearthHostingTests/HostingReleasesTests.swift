import Foundation
import HearthServer
import HearthTesting
import Synchronization
import Testing

/// `hearth hosting deploy`, `ls` and `rollback` on a real folder: what a release holds, the
/// order and pointer, keeping N, and that bad input or an interrupted deploy leaves the live
/// release as it was.
@Suite("Hosting releases: deploy, list, roll back")
struct HostingReleasesTests {
    /// A project folder (firebase.json and public/) and a releases folder, in one temporary folder.
    struct Fixture {
        let folder: TemporaryDirectory
        var project: URL { folder.url.appendingPathComponent("project", isDirectory: true) }
        var releasesFolder: URL { folder.url.appendingPathComponent("files/hosting", isDirectory: true) }
        /// Shared by every `releases()` of the fixture, so their clocks agree.
        final class Ticks: Sendable { let count = Mutex(0) }
        let seconds = Ticks()

        init() throws {
            folder = try TemporaryDirectory(prefix: "hearth-releases")
            try write("firebase.json", #"{"hosting": {"public": "public", "rewrites": [{"source": "**", "destination": "/index.html"}]}}"#)
            try write("public/index.html", "version 1")
            try write("public/js/app.js", "console.log(1)")
            try write("public/.env", "SECRET=1")
            try write("public/node_modules/lib/index.js", "module")
            try write("secret.txt", "outside")
            try FileManager.default.createSymbolicLink(
                atPath: project.appendingPathComponent("public/leak.txt").path, withDestinationPath: "../secret.txt")
            try FileManager.default.createSymbolicLink(
                atPath: project.appendingPathComponent("public/alias.js").path, withDestinationPath: "js/app.js")
        }

        func write(_ path: String, _ text: String) throws {
            let url = project.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }

        /// Releases whose clock moves a second per call, from 2026-11-29 05:00:00 UTC.
        func releases(keep: Int = 10) -> HostingReleases {
            let seconds = self.seconds
            return HostingReleases(
                folder: releasesFolder, keep: keep,
                clock: { Date(timeIntervalSince1970: 1_795_928_400 + Double(seconds.count.withLock { $0 += 1; return $0 })) },
                randomSuffix: { "abc123" })
        }

        func served(_ releases: HostingReleases, _ path: String) -> String? {
            guard let id = releases.currentID(),
                let bytes = FileManager.default.contents(atPath: releases.appFolder(of: id).appendingPathComponent("public/\(path)").path)
            else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }

        func leftovers() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: releasesFolder.path).filter { $0.hasPrefix(".incoming-") }
        }
    }

    @Test("A deploy copies firebase.json and the public folder as Firebase uploads it, and makes it live")
    func deployCopiesWhatIsServed() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        let releases = fixture.releases()
        #expect(releases.currentID() == nil)
        let release = try releases.deploy(from: fixture.project, message: "first")
        #expect(release.id == "20261129-050001-abc123")
        #expect(release.sequence == 1)
        #expect(release.message == "first")
        #expect(release.source == fixture.project.standardizedFileURL.path)
        #expect(releases.currentID() == release.id)
        let (files, total) = try releases.files(of: release.id)
        // Ignored: dot files and node_modules; the link out of the folder is left out, the one
        // inside is a file of its own.
        #expect(files.map(\.path) == ["alias.js", "index.html", "js/app.js"])
        #expect(total == 3)
        #expect(release.files == 3)
        #expect(release.bytes == Int64("version 1".utf8.count + 2 * "console.log(1)".utf8.count))
        #expect(files.allSatisfy { $0.site == "public" })
        let app = releases.appFolder(of: release.id)
        #expect(FileManager.default.fileExists(atPath: app.appendingPathComponent("firebase.json").path))
        let alias = try FileManager.default.attributesOfItem(atPath: app.appendingPathComponent("public/alias.js").path)
        #expect(alias[.type] as? FileAttributeType == .typeRegular)
        #expect(!FileManager.default.fileExists(atPath: app.appendingPathComponent("public/leak.txt").path))
        #expect(try releases.list() == [release])
        #expect(try fixture.leftovers().isEmpty)
    }

    @Test("Each deploy is live at once; rollback goes to the one before, or to the one named")
    func deployAndRollback() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        let releases = fixture.releases()
        let first = try releases.deploy(from: fixture.project)
        try fixture.write("public/index.html", "version 2")
        let second = try releases.deploy(from: fixture.project)
        try fixture.write("public/index.html", "version 3")
        let third = try releases.deploy(from: fixture.project)
        #expect(releases.list().map(\.id) == [third.id, second.id, first.id])
        #expect(releases.list().map(\.sequence) == [3, 2, 1])
        #expect(fixture.served(releases, "index.html") == "version 3")

        #expect(try releases.rollback().id == second.id)
        #expect(fixture.served(releases, "index.html") == "version 2")
        #expect(try releases.rollback().id == first.id)
        #expect(fixture.served(releases, "index.html") == "version 1")
        #expect(throws: HostingReleases.Problem.invalid("Release \(first.id) is the oldest kept: there is no earlier release to roll back to.")) {
            try releases.rollback()
        }
        #expect(try releases.rollback(to: third.id).id == third.id)
        #expect(fixture.served(releases, "index.html") == "version 3")
        // Unknown and malformed IDs name nothing, and change nothing.
        for id in ["20200101-000000-000000", "../releases", "", "a/b"] {
            #expect(throws: HostingReleases.Problem.self) { try releases.rollback(to: id) }
        }
        #expect(releases.currentID() == third.id)
        // A later deploy comes after every kept release, even after a rollback.
        _ = try releases.rollback(to: first.id)
        let fourth = try releases.deploy(from: fixture.project)
        #expect(fourth.sequence == 4)
        #expect(releases.list().first?.id == fourth.id)
    }

    @Test("Rolling back with nothing deployed says so")
    func rollbackWithNothingDeployed() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        let releases = fixture.releases()
        #expect(throws: HostingReleases.Problem.notFound("Nothing is deployed in \(releases.folder.path), so there is nothing to roll back.")) {
            try releases.rollback()
        }
        // Asking changed nothing on disk.
        #expect(!FileManager.default.fileExists(atPath: releases.folder.path))
    }

    @Test("Only the newest N are kept; a release rolled back to is pruned once newer ones pass it")
    func keepsN() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        let releases = fixture.releases(keep: 3)
        var ids: [String] = []
        for version in 1...5 {
            try fixture.write("public/index.html", "version \(version)")
            ids.append(try releases.deploy(from: fixture.project).id)
        }
        #expect(releases.list().map(\.id) == [ids[4], ids[3], ids[2]])
        // A rollback does not protect a release from later prunes once it is no longer live.
        try releases.rollback(to: ids[2])
        try fixture.write("public/index.html", "version 6")
        let sixth = try releases.deploy(from: fixture.project)
        #expect(releases.list().map(\.id) == [sixth.id, ids[4], ids[3]])
        #expect(throws: HostingReleases.Problem.notFound("There is no release \(ids[2]).")) { try releases.rollback(to: ids[2]) }
        let folders = try FileManager.default.contentsOfDirectory(atPath: fixture.releasesFolder.appendingPathComponent("releases").path)
        #expect(folders.sorted() == [ids[3], ids[4], sixth.id].sorted())
    }

    @Test("A bad firebase.json, a missing or outside public folder: refused, naming the problem, and nothing changes")
    func badInputChangesNothing() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        let releases = fixture.releases()
        let live = try releases.deploy(from: fixture.project)
        let cases: [(json: String, words: String)] = [
            (#"{"hosting": {"public": "public", "rewrites": [{"source": "/a", "destination": 3}]}}"#, "hosting.rewrites[0].destination"),
            (#"{"hosting": {"public": "public", "redirects": [{"source": "/a"}]}}"#, "hosting.redirects[0]"),
            (#"{"hosting": {"public": "missing"}}"#, "missing"),
            (#"{"hosting": {"public": "../outside"}}"#, "hosting.public"),
            ("{ not json", "firebase.json"),
        ]
        try FileManager.default.createDirectory(at: fixture.folder.url.appendingPathComponent("outside"), withIntermediateDirectories: true)
        for (json, words) in cases {
            try fixture.write("firebase.json", json)
            do {
                try releases.deploy(from: fixture.project)
                Issue.record("deployed \(json)")
            } catch let problem as HostingReleases.Problem {
                guard case .invalid(let message) = problem else {
                    Issue.record("\(json): \(problem)")
                    continue
                }
                #expect(message.contains(words), "\(message)")
            }
            #expect(releases.currentID() == live.id)
            #expect(releases.list() == [live])
            #expect(try fixture.leftovers().isEmpty)
        }
    }

    @Test("What an interrupted deploy left is never listed or served, and the next deploy removes it")
    func interruptedDeploy() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        let releases = fixture.releases()
        let live = try releases.deploy(from: fixture.project)
        // A deploy stopped while copying, and one stopped before its pointer was written: a
        // temporary pointer file that was never renamed.
        let incoming = fixture.releasesFolder.appendingPathComponent(".incoming-20261129-050009-dead00/app/public")
        try FileManager.default.createDirectory(at: incoming, withIntermediateDirectories: true)
        try Data("half".utf8).write(to: incoming.appendingPathComponent("index.html"))
        try Data("20261129-050009-dead00\n".utf8).write(to: fixture.releasesFolder.appendingPathComponent(".current-ffffff"))
        #expect(releases.currentID() == live.id)
        #expect(releases.list() == [live])
        #expect(fixture.served(releases, "index.html") == "version 1")

        try fixture.write("public/index.html", "version 2")
        let next = try releases.deploy(from: fixture.project)
        #expect(releases.currentID() == next.id)
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.releasesFolder.path).sorted()
        #expect(names == [".lock", "current", "releases"])
    }

    @Test("A public folder of \".\" (firebase.json's own folder) deploys, firebase.json once")
    func publicIsTheProjectFolder() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        try fixture.write("firebase.json", #"{"hosting": {"public": ".", "ignore": ["secret.txt", "public/**"]}}"#)
        try fixture.write("index.html", "root page")
        let releases = fixture.releases()
        let release = try releases.deploy(from: fixture.project)
        let (files, _) = try releases.files(of: release.id)
        #expect(files.map(\.path) == ["firebase.json", "index.html"])
    }

    @Test("Sites sharing a public folder each keep what they serve; the server's data folder is never deployed")
    func sharedFoldersAndServerFolders() throws {
        let fixture = try Fixture()
        defer { fixture.folder.remove() }
        try fixture.write("firebase.json", #"""
            {"hosting": [{"site": "alpha", "public": ".", "ignore": ["**/*.map", "secret.txt", "public/**"]},
                         {"site": "beta", "public": ".", "ignore": ["secret.txt", "public/**"]}]}
            """#)
        try fixture.write("app.js", "code")
        try fixture.write("app.js.map", "map")
        try fixture.write("hearth-data/admin-token", "token")
        let releases = fixture.releases()
        let release = try releases.deploy(from: fixture.project, excluding: [fixture.project.appendingPathComponent("hearth-data")])
        let (files, _) = try releases.files(of: release.id)
        // beta serves the map, so it is deployed; alpha still ignores it when serving.
        #expect(files.map(\.path) == ["app.js", "app.js.map", "firebase.json"])
    }
}
