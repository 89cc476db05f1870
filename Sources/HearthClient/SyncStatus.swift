import HearthCore

/// Whether a ``Database`` is connected and which of its writes wait for the server: what an
/// app shows as "offline — changes will sync" and "waiting to be sent".
public struct SyncStatus: Sendable, Equatable {
    /// True while the connection is open and authenticated (as `.info/connected`).
    public let isConnected: Bool
    /// How many writes wait for the server.
    public let pendingWriteCount: Int
    /// The locations those writes change, in the order they were made (`/posts/-Nx…`; a
    /// multi-path update lists each of its paths).
    public let pendingWritePaths: [String]

    public init(isConnected: Bool, pendingWriteCount: Int, pendingWritePaths: [String]) {
        self.isConnected = isConnected
        self.pendingWriteCount = pendingWriteCount
        self.pendingWritePaths = pendingWritePaths
    }

    /// True when a pending write was made at `path`, above it or below it.
    public func hasPendingWrites(at path: String) -> Bool {
        let target = Self.normalized(path)
        return pendingWritePaths.contains { written in
            let written = Self.normalized(written)
            return target.hasPrefix(written) || written.hasPrefix(target)
        }
    }

    /// `/a/b/` for `a/b`, `/a/b` or `/a/b/`, so prefixes match whole keys only.
    private static func normalized(_ path: String) -> String {
        let keys = Path.keys(splitting: path)
        return keys.isEmpty ? "/" : "/" + keys.map(\.string).joined(separator: "/") + "/"
    }
}
