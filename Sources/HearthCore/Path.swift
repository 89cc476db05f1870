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
        // "/" is one byte in UTF-8 and never part of another scalar's bytes, so splitting the
        // bytes at it is splitting the scalars, and every segment is valid UTF-8 of its own.
        let split = text.utf8.withContiguousStorageIfAvailable { bytes -> [ChildKey] in
            var keys: [ChildKey] = []
            var start = 0
            var index = 0
            while index <= bytes.count {
                if index == bytes.count || bytes[index] == UInt8(ascii: "/") {
                    if start < index {
                        keys.append(ChildKey(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)))
                    }
                    start = index + 1
                }
                index += 1
            }
            return keys
        }
        return split ?? text.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true).map { ChildKey(String($0)) }
    }

    /// True when `key` may name a child: 1–768 UTF-8 bytes, none of `. $ # [ ] /`, no controls.
    public static func isValidKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        guard !utf8.isEmpty, utf8.count <= maxKeyBytes else { return false }
        if let valid = utf8.withContiguousStorageIfAvailable({ !$0.contains(where: isForbiddenKeyByte) }) { return valid }
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
    public func child(_ key: ChildKey) -> Path {
        // One allocation (`keys + [key]` makes two): rules walk paths a key at a time.
        var extended: [ChildKey] = []
        extended.reserveCapacity(keys.count + 1)
        extended.append(contentsOf: keys)
        extended.append(key)
        return Path(keys: extended)
    }

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
        guard !keys.isEmpty else { return "/" }
        // Written once into a string of the right size (every log record names its path).
        var length = 0
        for key in keys { length += 1 + key.string.utf8.count }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var offset = 0
            for key in keys {
                buffer[offset] = UInt8(ascii: "/")
                offset += 1
                offset = buffer[offset...].initialize(fromContentsOf: key.string.utf8)
            }
            return offset
        }
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
