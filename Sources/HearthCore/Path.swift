/// A location in the tree: a list of validated keys. The root is the empty path.
public struct Path: Hashable, Sendable, CustomStringConvertible {
    /// The keys from the root down.
    public private(set) var keys: [ChildKey]

    /// The deepest a path plus the data written at it may reach.
    public static let maxDepth = 32
    /// The longest a key may be, in UTF-8 bytes.
    public static let maxKeyBytes = 768

    /// The root.
    public static let root = Path(keys: [])

    /// A path of already-validated keys.
    public init(keys: [ChildKey]) { self.keys = keys }

    /// Parses a `/`-separated path, ignoring empty segments, and validates every key.
    ///
    /// - Parameter allowPriority: whether the last segment may be `.priority`.
    /// - Throws: ``HearthError/invalidPathToken`` for a forbidden character, an overlong key or
    ///   a path deeper than ``maxDepth``.
    public init(parsing text: String, allowPriority: Bool = false) throws(HearthError) {
        let keys = Self.keys(splitting: text)
        for (index, key) in keys.enumerated() {
            let isLast = index == keys.count - 1
            if allowPriority && isLast && key.string == ".priority" { continue }
            guard Self.isValidKey(key.string) else { throw .invalidPathToken }
        }
        guard keys.count <= Self.maxDepth else { throw .invalidPathToken }
        self.keys = keys
    }

    /// The keys of a `/`-separated path, empty segments ignored, not validated.
    ///
    /// Splits at the "/" scalar, not at "/" characters: a "/" followed by a combining mark is
    /// one Character in Swift but still ends a key.
    public static func keys(splitting text: String) -> [ChildKey] {
        text.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).map { ChildKey(String($0)) }
    }

    /// True when `key` may name a child: 1–768 UTF-8 bytes, none of `. $ # [ ] /`, no controls.
    public static func isValidKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        guard !utf8.isEmpty, utf8.count <= maxKeyBytes else { return false }
        for byte in utf8 where isForbiddenKeyByte(byte) { return false }
        return true
    }

    /// Bytes that may not appear in a key.
    @inline(__always)
    static func isForbiddenKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0...31, 127, UInt8(ascii: "."), UInt8(ascii: "$"), UInt8(ascii: "#"),
            UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// True for the root.
    public var isRoot: Bool { keys.isEmpty }
    /// The number of keys.
    public var count: Int { keys.count }
    /// The last key, if any.
    public var last: ChildKey? { keys.last }
    /// The first key, if any.
    public var first: ChildKey? { keys.first }

    /// True when the path ends in the `.priority` pseudo-key.
    public var isPriorityPath: Bool { keys.last?.string == ".priority" }

    /// The parent, or nil at the root.
    public var parent: Path? {
        keys.isEmpty ? nil : Path(keys: Array(keys.dropLast()))
    }

    /// This path extended by one key.
    public func child(_ key: ChildKey) -> Path { Path(keys: keys + [key]) }

    /// This path extended by another.
    public func appending(_ other: Path) -> Path { Path(keys: keys + other.keys) }

    /// The path without its first `n` keys.
    public func dropFirst(_ n: Int) -> Path { Path(keys: Array(keys.dropFirst(n))) }

    /// True when `other` equals this path or lies below it.
    public func contains(_ other: Path) -> Bool {
        other.keys.count >= keys.count && other.keys.starts(with: keys)
    }

    /// `/a/b` form; the root is `/`.
    public var description: String {
        keys.isEmpty ? "/" : "/" + keys.map(\.string).joined(separator: "/")
    }
}

extension Path: TreeKey {
    /// Orders paths key by key, a path before its descendants.
    public static func compare(_ lhs: Path, _ rhs: Path) -> Int {
        for (left, right) in zip(lhs.keys, rhs.keys) {
            let order = ChildKey.compare(left, right)
            if order != 0 { return order }
        }
        return lhs.keys.count - rhs.keys.count
    }
}
