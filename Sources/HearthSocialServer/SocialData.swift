import HearthCore

/// The social app's database as its server-side jobs use it: the newest committed values, and
/// multi-path updates made with the server's authority (the rules do not apply to them).
///
/// The jobs read, decide and write; a write that depends on what was read names those values
/// in `expecting`, and is refused with ``SocialDataConflict`` when another writer changed them
/// in between (the job reads again and retries).
public protocol SocialData: Sendable {
    /// The newest committed value at `path` (`.null` when there is none).
    func value(at path: Path) async throws -> Node

    /// Sets each path to its value in one atomic write (`.null` deletes), only while every path
    /// in `expecting` still holds its value.
    /// - Throws: ``SocialDataConflict`` when one does not; the store's error when it fails.
    func update(_ values: [Path: Node], expecting: [Path: Node]) async throws
}

/// A conditional update found a value changed since it was read.
public struct SocialDataConflict: Error, Equatable {
    /// The first path whose value changed.
    public var path: Path

    public init(path: Path) {
        self.path = path
    }
}

extension SocialData {
    /// Sets each path to its value in one atomic write (`.null` deletes).
    public func update(_ values: [Path: Node]) async throws {
        try await update(values, expecting: [:])
    }
}

extension Path {
    /// A path from keys taken from the data itself (already valid keys).
    static func of(_ keys: String...) -> Path {
        Path(keys: keys.map(ChildKey.init))
    }

    /// This path with `keys` below it.
    func with(_ keys: String...) -> Path {
        Path(keys: self.keys + keys.map(ChildKey.init))
    }
}

extension Node {
    /// The string this node holds, ignoring a priority; nil for anything else.
    var string: String? {
        if case .string(let text) = unprioritized { return text }
        return nil
    }

    /// The children's keys, in order.
    var keys: [String] {
        children.map { $0.map(\.key.string) } ?? []
    }

    /// The children, as (key, value), in order.
    var entries: [(key: String, value: Node)] {
        children.map { $0.map { (key: $0.key.string, value: $0.value) } } ?? []
    }

    /// The child at the given keys.
    func at(_ keys: String...) -> Node {
        child(at: Path(keys: keys.map(ChildKey.init)))
    }
}
