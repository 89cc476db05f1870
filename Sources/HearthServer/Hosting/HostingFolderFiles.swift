import Foundation
import HearthHosting
import Synchronization

/// A site's public folder on disk, as ``HostingResolver`` asks about it: a path is a file when
/// it is a regular file (through symbolic links) whose real location is inside the folder. A
/// symbolic link that leads out of the folder is treated as no file, so it is never served; nor
/// is anything in the server's own folders (its data) when the public folder holds them.
struct HostingFolderFiles: HostingFileLookup {
    /// The public folder's real path (symbolic links resolved), absolute.
    let root: String
    /// Real paths inside the folder that are never served.
    let excluded: [String]
    /// For a folder that never changes (a deployed release): what each path was found to be,
    /// so a path is looked up on disk once; nil for a folder served as it is.
    private let known: KnownLocations?

    /// - Parameters:
    ///   - folder: the public folder; its own symbolic links are resolved here, once.
    ///   - excluding: folders never served from it (the server's data and files folders): those
    ///     inside it are kept.
    ///   - immutable: true for a deployed release, whose files never change.
    init(folder: URL, excluding: [URL] = [], immutable: Bool = false) {
        let root = Self.realPath(folder.path) ?? folder.standardizedFileURL.path
        self.root = root
        excluded = excluding.compactMap { Self.realPath($0.path) }.filter { $0 != root && HostingPath.isInside($0, root: root) }
        known = immutable ? KnownLocations() : nil
    }

    func isFile(_ path: String) async throws -> Bool {
        try await location(of: path) != nil
    }

    /// The real, absolute location of the file at `path` (relative to the folder), or nil when
    /// there is no regular file there or it lies outside the folder.
    func location(of path: String) async throws -> String? {
        if let known, let found = known.lookUp(path) { return found.location }
        let location = findLocation(of: path)
        known?.remember(path, location)
        return location
    }

    private func findLocation(of path: String) -> String? {
        let joined = root + "/" + path
        // A file where a folder is expected (`file.txt/index.html`), or no permission: no file.
        guard FileStatus(path: joined)?.isRegularFile == true, let real = Self.realPath(joined), HostingPath.isInside(real, root: root),
            !excluded.contains(where: { HostingPath.isInside(real, root: $0) })
        else { return nil }
        return real
    }

    /// `path` with every symbolic link resolved, or nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// What the paths of an unchanging folder were found to be, for at most ``limit`` paths (a
/// crawler asking for made-up paths fills it; then it starts again).
final class KnownLocations: Sendable {
    struct Found: Sendable {
        let location: String?
    }

    static let limit = 10_000
    private let found = Mutex<[String: Found]>([:])

    func lookUp(_ path: String) -> Found? {
        found.withLock { $0[path] }
    }

    func remember(_ path: String, _ location: String?) {
        found.withLock { found in
            if found.count >= Self.limit { found.removeAll(keepingCapacity: true) }
            found[path] = Found(location: location)
        }
    }
}
