/// How the resolver learns which files a site has: the server's is the public folder on disk,
/// tests use a set of names. Paths are relative to the public folder, decoded, with no leading
/// slash and no `.` or `..` (`app/main.js`, `index.html`).
public protocol HostingFileLookup: Sendable {
    /// Whether a regular file is at `path` (a folder is not a file).
    func isFile(_ path: String) async throws -> Bool
}

/// A fixed set of files, for tests and for sites held in memory.
public struct HostingFileSet: HostingFileLookup, Hashable {
    public let paths: Set<String>

    public init(_ paths: some Sequence<String>) {
        self.paths = Set(paths.map { $0.hasPrefix("/") ? String($0.dropFirst()) : $0 })
    }

    public func isFile(_ path: String) async throws -> Bool { paths.contains(path) }
}
