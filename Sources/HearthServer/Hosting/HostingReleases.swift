import Foundation
import HearthHosting

/// The deployed versions of the owner's web app, in a folder of their own (`hosting` in the
/// files folder, which a cluster's nodes share):
///
/// ```
/// hosting/current                      the live release's ID (replaced by rename, never edited)
/// hosting/releases/<id>/release.json   what ``HostingRelease`` says of it
/// hosting/releases/<id>/app/…          its firebase.json and public folders, as deployed
/// hosting/.incoming-<id>/              a deploy being copied (removed if it was interrupted)
/// hosting/.lock                        held by a deploy, a rollback or a prune
/// ```
///
/// A deploy copies into `.incoming-<id>`, renames that into `releases/`, then replaces
/// `current`: a reader sees the old release or the new one, never part of one, and a deploy
/// stopped at any point leaves the live release as it was. Servers read `current` on each
/// request (``HostingReleaseWatcher``), so every node serving the folder switches with it.
///
/// Blocking file work: call it off the event loops.
public struct HostingReleases: Sendable {
    /// The folder holding `current` and `releases/`.
    public let folder: URL
    /// How many releases are kept (the live one always is, besides).
    public var keep: Int
    let clock: @Sendable () -> Date
    let randomSuffix: @Sendable () -> String

    /// The default number of releases kept.
    public static let defaultKeep = 10

    public init(
        folder: URL, keep: Int = defaultKeep, clock: @escaping @Sendable () -> Date = { Date() },
        randomSuffix: @escaping @Sendable () -> String = { String(format: "%06x", UInt32.random(in: 0...0xFF_FFFF)) }
    ) {
        self.folder = folder
        self.keep = max(1, keep)
        self.clock = clock
        self.randomSuffix = randomSuffix
    }

    /// The releases folder of a server whose files are in `filesFolder`.
    public static func folder(inFiles filesFolder: URL) -> URL {
        filesFolder.appendingPathComponent("hosting", isDirectory: true)
    }

    var releasesFolder: URL { folder.appendingPathComponent("releases", isDirectory: true) }
    /// The pointer to the live release.
    public var pointer: URL { folder.appendingPathComponent("current") }

    /// The folder holding release `id`'s `firebase.json`.
    public func appFolder(of id: String) -> URL {
        releasesFolder.appendingPathComponent(id, isDirectory: true).appendingPathComponent("app", isDirectory: true)
    }

    /// The live release's ID, or nil when nothing was deployed.
    public func currentID() -> String? {
        guard let bytes = FileManager.default.contents(atPath: pointer.path) else { return nil }
        let id = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return HostingRelease.isValidID(id) ? id : nil
    }

    /// Every release kept, newest (last deployed) first.
    public func list() -> [HostingRelease] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: releasesFolder.path)) ?? []
        return names.compactMap { name in
            guard HostingRelease.isValidID(name) else { return nil }
            return try? release(name)
        }.sorted { ($0.sequence, $0.id) > ($1.sequence, $1.id) }
    }

    /// Release `id`'s description.
    /// - Throws: ``Problem/notFound(_:)`` when there is no such release.
    public func release(_ id: String) throws -> HostingRelease {
        let file = releasesFolder.appendingPathComponent(id).appendingPathComponent("release.json")
        guard HostingRelease.isValidID(id), let bytes = FileManager.default.contents(atPath: file.path),
            let release = try? Self.decoder.decode(HostingRelease.self, from: bytes)
        else { throw Problem.notFound("There is no release \(id).") }
        return release
    }

    /// The files release `id` serves, by site and path, the first `limit` of them, and how many
    /// there are in all.
    public func files(of id: String, limit: Int = 2000) throws -> (files: [HostingReleaseFile], total: Int) {
        _ = try release(id)
        let app = appFolder(of: id)
        let settings = try HostingSettings.load(folder: app)
        var files: [HostingReleaseFile] = []
        var total = 0
        for publicFolder in Self.publicFolders(of: settings.configuration) {
            let root = app.appendingPathComponent(publicFolder, isDirectory: true)
            let prefix = root.standardizedFileURL.path + "/"
            let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey])
            while let url = walker?.nextObject() as? URL {
                let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
                guard values?.isRegularFile == true else { continue }
                total += 1
                if files.count < limit {
                    let path = String(url.standardizedFileURL.path.dropFirst(prefix.count))
                    files.append(HostingReleaseFile(site: publicFolder, path: path, bytes: Int64(values?.fileSize ?? 0)))
                }
            }
        }
        return (files.sorted { ($0.site, $0.path) < ($1.site, $1.path) }, total)
    }

    /// Makes release `id` (default: the one deployed before the live one) live again.
    /// - Throws: ``Problem`` when there is no such release, no earlier one, or it cannot be
    ///   served any more (its files were removed by hand); the live release stays.
    @discardableResult
    public func rollback(to id: String? = nil) throws -> HostingRelease {
        guard FileManager.default.fileExists(atPath: releasesFolder.path) else {
            throw Problem.notFound("Nothing is deployed in \(folder.path), so there is nothing to roll back.")
        }
        return try withLock {
            let releases = list()
            let target: HostingRelease
            if let id {
                target = try release(id)
            } else {
                guard let live = currentID(), let index = releases.firstIndex(where: { $0.id == live }) else {
                    throw Problem.notFound("Nothing is deployed, so there is nothing to roll back.")
                }
                guard index + 1 < releases.count else {
                    throw Problem.invalid("Release \(live) is the oldest kept: there is no earlier release to roll back to.")
                }
                target = releases[index + 1]
            }
            do {
                _ = try HostingSettings.load(folder: appFolder(of: target.id))
            } catch {
                throw Problem.invalid("Release \(target.id) cannot be served: \(error)")
            }
            try point(at: target.id)
            return target
        }
    }

    /// Removes the oldest releases beyond ``keep``, never the live one. Call with the lock held.
    /// - Returns: the IDs removed.
    @discardableResult
    func prune() -> [String] {
        let live = currentID()
        let doomed = list().enumerated().filter { $0.offset >= keep && $0.element.id != live }.map(\.element.id)
        for id in doomed {
            // Out of `releases/` first, so a listing never shows part of one.
            let away = folder.appendingPathComponent(".removing-\(id)")
            if (try? FileManager.default.moveItem(at: releasesFolder.appendingPathComponent(id), to: away)) != nil {
                try? FileManager.default.removeItem(at: away)
            }
        }
        return doomed
    }

    // MARK: - Writing safely

    /// Points `current` at `id`: a new file renamed over the old one, both made durable.
    func point(at id: String) throws {
        let temporary = folder.appendingPathComponent(".current-\(randomSuffix())")
        try Self.writeDurably(Data((id + "\n").utf8), to: temporary)
        guard rename(temporary.path, pointer.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw Problem.failed("cannot replace \(pointer.path): \(reason)")
        }
        Self.syncFolder(folder)
    }

    /// Runs `body` holding the folder's lock (`.lock`), which deploys, rollbacks and prunes take,
    /// on any node sharing the folder.
    func withLock<T>(_ body: () throws -> T) throws -> T {
        try FileManager.default.createDirectory(at: releasesFolder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent(".lock").path
        let descriptor = open(path, O_RDWR | O_CREAT, 0o644)
        guard descriptor >= 0 else { throw Problem.failed("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX) == 0 else { throw Problem.failed("cannot lock \(path): \(String(cString: strerror(errno)))") }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    static func writeDurably(_ data: Data, to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: data) else {
            throw Problem.failed("cannot write \(url.path)")
        }
        try syncFile(url)
    }

    static func syncFile(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw Problem.failed("cannot open \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw Problem.failed("cannot sync \(url.path): \(String(cString: strerror(errno)))") }
    }

    /// Makes a folder's entries (a rename into it) durable; best effort, as some file systems
    /// refuse to sync a folder.
    static func syncFolder(_ url: URL) {
        let descriptor = open(url.path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// Each public folder of a configuration once (sites may share one).
    static func publicFolders(of configuration: HostingConfiguration) -> [String] {
        var seen: Set<String> = []
        return configuration.sites.map(\.publicFolder).filter { seen.insert($0).inserted }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// Why a deploy, rollback or listing could not be done; nothing was changed.
    public enum Problem: Error, CustomStringConvertible, Equatable {
        /// No such release, or nothing deployed.
        case notFound(String)
        /// The request or the folder deployed is not right (a bad firebase.json, naming its key).
        case invalid(String)
        /// The file system refused.
        case failed(String)

        public var description: String {
            switch self {
            case .notFound(let words), .invalid(let words), .failed(let words): words
            }
        }
    }
}
