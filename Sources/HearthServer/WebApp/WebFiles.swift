import Foundation
import NIOCore
import _NIOFileSystem

/// Where the web front end's files come from: a table in memory (the copy compiled into the
/// `hearth` binary, `HearthWeb`) or a folder read on each request (`hearth serve --web-root`,
/// for working on the app: an edit shows on the next load, with no restart).
///
/// Paths are relative to the web folder, with no leading slash, empty parts or `..`
/// (`app/main.js`; the empty path is the folder itself): `WebResponder` makes them so.
public struct WebFiles: Sendable {
    /// What a path names.
    enum Entry: Sendable {
        case file(WebFile)
        case folder
        case none
    }

    private enum Source: Sendable {
        case memory(files: [String: WebFile], folders: Set<String>)
        case folder(FilePath)
    }

    private let source: Source

    /// Files held in memory, by their path in the web folder (`index.html`, `app/main.js`);
    /// their types and ETags are worked out once, here.
    public init(files: [String: [UInt8]]) {
        var table: [String: WebFile] = [:]
        var folders: Set<String> = [""]
        for (path, bytes) in files {
            let parts = path.split(separator: "/")
            table[parts.joined(separator: "/")] = WebFile(name: parts.last ?? "", bytes: ByteBuffer(bytes: bytes))
            for end in parts.indices.dropLast() {
                folders.insert(parts[...end].joined(separator: "/"))
            }
        }
        source = .memory(files: table, folders: folders)
    }

    /// The files of `folder`, read from disk each time one is asked for.
    public init(folder: URL) {
        source = .folder(FilePath(folder.path))
    }

    /// The largest file read from a folder.
    static let maxFolderFileBytes = ByteCount.mebibytes(64)

    /// What `path` names.
    func entry(at path: String) async throws -> Entry {
        switch source {
        case .memory(let files, let folders):
            if let file = files[path] { return .file(file) }
            return folders.contains(path) ? .folder : .none
        case .folder(let root):
            let components = path.split(separator: "/").compactMap { FilePath.Component(String($0)) }
            let location = root.appending(components)
            // Symbolic links are followed, as they were by the file middleware this replaces.
            guard let info = try await FileSystem.shared.info(forFileAt: location) else { return .none }
            switch info.type {
            case .directory:
                return .folder
            case .regular:
                do {
                    let bytes = try await ByteBuffer(contentsOf: location, maximumSizeAllowed: Self.maxFolderFileBytes)
                    return .file(WebFile(name: path.split(separator: "/").last ?? "", bytes: bytes))
                } catch let error as FileSystemError where error.code == .notFound {
                    return .none  // removed since it was looked at
                }
            default:
                return .none
            }
        }
    }
}
