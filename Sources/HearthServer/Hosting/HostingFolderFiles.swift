import Foundation
import HearthHosting
import _NIOFileSystem

/// A site's public folder on disk, as ``HostingResolver`` asks about it: a path is a file when
/// it is a regular file (through symbolic links) whose real location is inside the folder. A
/// symbolic link that leads out of the folder is treated as no file, so it is never served; nor
/// is anything in the server's own folders (its data) when the public folder holds them.
struct HostingFolderFiles: HostingFileLookup {
    /// The public folder's real path (symbolic links resolved), absolute.
    let root: String
    /// Real paths inside the folder that are never served.
    let excluded: [String]

    /// - Parameters:
    ///   - folder: the public folder; its own symbolic links are resolved here, once.
    ///   - excluding: folders never served from it (the server's data and files folders): those
    ///     inside it are kept.
    init(folder: URL, excluding: [URL] = []) {
        let root = Self.realPath(folder.path) ?? folder.standardizedFileURL.path
        self.root = root
        excluded = excluding.compactMap { Self.realPath($0.path) }.filter { $0 != root && HostingPath.isInside($0, root: root) }
    }

    func isFile(_ path: String) async throws -> Bool {
        try await location(of: path) != nil
    }

    /// The real, absolute location of the file at `path` (relative to the folder), or nil when
    /// there is no regular file there or it lies outside the folder.
    func location(of path: String) async throws -> String? {
        let joined = root + "/" + path
        let info: FileInfo?
        do {
            info = try await FileSystem.shared.info(forFileAt: FilePath(joined), infoAboutSymbolicLink: false)
        } catch let error as FileSystemError where error.code != .io && error.code != .resourceExhausted {
            // A file where a folder is expected (`file.txt/index.html`), or no permission: no file.
            return nil
        }
        guard let info, info.type == .regular, let real = Self.realPath(joined), HostingPath.isInside(real, root: root),
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
