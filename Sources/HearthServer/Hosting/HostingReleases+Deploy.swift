import Foundation
import HearthHosting

extension HostingReleases {
    /// Deploys the app in `source` (the folder holding its `firebase.json`) as a new release and
    /// makes it live, then removes the oldest beyond ``keep``.
    ///
    /// What is copied is what Firebase would upload: `firebase.json` and each site's public
    /// folder without its `ignore`d files. A symbolic link is copied as the file it leads to
    /// when that is inside the public folder, and left out otherwise. `excluding` (the server's
    /// data folder) and the releases folder itself are never copied, even from a public folder
    /// of `.` that holds them.
    /// - Throws: ``Problem/invalid(_:)`` for a `firebase.json` that cannot be served (naming
    ///   the key) or a public folder outside `source`; ``Problem/failed(_:)`` when the file
    ///   system refuses. Either way the live release is unchanged.
    @discardableResult
    public func deploy(from source: URL, message: String? = nil, excluding: [URL] = []) throws -> HostingRelease {
        let settings: HostingSettings
        do {
            settings = try HostingSettings.load(folder: source)
        } catch {
            throw Problem.invalid("\(source.path): \(error)")
        }
        let sourceRoot = HostingFolderFiles.realPath(source.path) ?? source.standardizedFileURL.path
        for publicFolder in Self.publicFolders(of: settings.configuration) {
            guard let real = HostingFolderFiles.realPath(source.appendingPathComponent(publicFolder).path),
                HostingPath.isInside(real, root: sourceRoot)
            else {
                throw Problem.invalid("hosting.public: \(publicFolder) must be a folder inside \(source.path) to be deployed")
            }
        }
        return try withLock {
            removeLeftovers()
            let id = newID()
            let incoming = folder.appendingPathComponent(".incoming-\(id)", isDirectory: true)
            do {
                let app = incoming.appendingPathComponent("app", isDirectory: true)
                try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
                try copy(source.appendingPathComponent("firebase.json"), to: app.appendingPathComponent("firebase.json"))
                var totals = (files: 0, bytes: Int64(0))
                let excluded = (excluding + [folder]).compactMap { HostingFolderFiles.realPath($0.path) }
                for publicFolder in Self.publicFolders(of: settings.configuration) {
                    let sites = settings.configuration.sites.filter { $0.publicFolder == publicFolder }
                    let copied = try copyPublicFolder(publicFolder, for: sites, from: source, to: app, excluding: excluded)
                    totals.files += copied.files
                    totals.bytes += copied.bytes
                }
                let release = HostingRelease(
                    id: id, sequence: (list().first?.sequence ?? 0) + 1, created: clock(), source: source.standardizedFileURL.path, message: message,
                    files: totals.files, bytes: totals.bytes)
                try Self.writeDurably(try Self.encoder.encode(release), to: incoming.appendingPathComponent("release.json"))
                Self.syncFolder(incoming)
                try FileManager.default.moveItem(at: incoming, to: releasesFolder.appendingPathComponent(id, isDirectory: true))
                Self.syncFolder(releasesFolder)
                try point(at: id)
                prune()
                return release
            } catch {
                try? FileManager.default.removeItem(at: incoming)
                if let problem = error as? Problem { throw problem }
                throw Problem.failed("the deploy did not finish (the live release is unchanged): \(error.localizedDescription)")
            }
        }
    }

    /// A new release ID, after every existing one in time order: the clock's second, then random.
    private func newID() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        let stamp = formatter.string(from: clock())
        while true {
            let id = "\(stamp)-\(randomSuffix())"
            if !FileManager.default.fileExists(atPath: releasesFolder.appendingPathComponent(id).path) { return id }
        }
    }

    /// Removes what interrupted deploys and prunes left (the lock is held, so none is running).
    private func removeLeftovers() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        where name.hasPrefix(".incoming-") || name.hasPrefix(".removing-") || name.hasPrefix(".current-") {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// Copies a public folder from `source` into `app`, leaving out what every site serving it
    /// ignores (each site still ignores its own when serving), links that lead out of it, and
    /// the `excluded` folders (real paths); the files and bytes copied.
    private func copyPublicFolder(
        _ publicFolder: String, for sites: [HostingSite], from source: URL, to app: URL, excluding excluded: [String]
    ) throws -> (files: Int, bytes: Int64) {
        let from = source.appendingPathComponent(publicFolder, isDirectory: true)
        let to = app.appendingPathComponent(publicFolder, isDirectory: true)
        try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
        let root = HostingFolderFiles(folder: from).root
        let prefix = from.standardizedFileURL.path.hasSuffix("/") ? from.standardizedFileURL.path : from.standardizedFileURL.path + "/"
        let keys: [URLResourceKey] = [.isRegularFileKey, .isDirectoryKey, .isSymbolicLinkKey]
        guard let walker = FileManager.default.enumerator(at: from, includingPropertiesForKeys: keys) else {
            throw Problem.failed("cannot read \(from.path)")
        }
        var totals = (files: 0, bytes: Int64(0))
        while let url = walker.nextObject() as? URL {
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(prefix) else { continue }
            let relative = String(path.dropFirst(prefix.count))
            let values = try url.resourceValues(forKeys: Set(keys))
            let real = HostingFolderFiles.realPath(path)
            if sites.allSatisfy({ $0.isIgnored(relative) }) || real.map({ path in excluded.contains { HostingPath.isInside(path, root: $0) } }) == true {
                if values.isDirectory == true { walker.skipDescendants() }
                continue
            }
            if values.isDirectory == true, values.isSymbolicLink != true { continue }
            // A file, or a link: copied as the regular file it leads to, when inside the folder.
            guard let real, HostingPath.isInside(real, root: root),
                (try? URL(fileURLWithPath: real).resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true
            else { continue }
            let target = to.appendingPathComponent(relative)
            // `firebase.json` itself, when the public folder is its folder and not ignored.
            if FileManager.default.fileExists(atPath: target.path) { continue }
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            totals.bytes += try copy(URL(fileURLWithPath: real), to: target)
            totals.files += 1
        }
        return totals
    }

    /// Copies one file and makes it durable; its size.
    @discardableResult
    private func copy(_ file: URL, to target: URL) throws -> Int64 {
        try FileManager.default.copyItem(at: file, to: target)
        try Self.syncFile(target)
        let size = try FileManager.default.attributesOfItem(atPath: target.path)[.size] as? NSNumber
        return size?.int64Value ?? 0
    }
}
