/// The name of one child in the tree, ordered the way the Firebase Realtime Database orders keys.
///
/// Keys that parse as 32-bit signed integers come first, compared numerically (equal numbers
/// put the shorter spelling first, so `"7"` sorts before `"007"`); every other key follows,
/// compared by UTF-16 code units as Firebase's clients do.
///
/// Keys are equal when their code units are, as in Firebase: `"é"` (U+00E9) and `"e\u{301}"`
/// are two keys, although Swift's `String` calls them equal.
public struct ChildKey: Hashable, Sendable, CustomStringConvertible {
    /// The key's text.
    public let string: String

    /// Wraps a key without validating it; use ``validated(_:)`` for input from outside.
    public init(_ string: String) {
        self.string = string
    }

    public var description: String { string }

    /// The key's value when it is an integer key (`-?0*\d{1,10}` within `Int32`), else `nil`.
    public var integerValue: Int32? {
        // Borrowed bytes (native and small strings): this runs in every comparison of two keys
        // that may be integers, such as push IDs, which start with "-".
        if let value = string.utf8.withContiguousStorageIfAvailable(Self.parseInteger) { return value }
        return Array(string.utf8).withUnsafeBufferPointer(Self.parseInteger)
    }

    static func parseInteger(_ utf8: UnsafeBufferPointer<UInt8>) -> Int32? {
        var index = 0
        let end = utf8.count
        guard index < end else { return nil }
        var negative = false
        if utf8[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        // Leading zeros are allowed and do not count towards the ten-digit limit.
        while end - index > 1, utf8[index] == 48 { index += 1 }
        guard index < end, end - index <= 10 else { return nil }
        var value: Int64 = 0
        while index < end {
            let byte = utf8[index]
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int64(byte - 48)
            index += 1
        }
        if negative { value = -value }
        guard value >= Int64(Int32.min) && value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }

    /// The index of `"0"` and of integers without leading zeros: the keys that may render as array indices.
    public var arrayIndex: Int? {
        let utf8 = string.utf8
        guard let first = utf8.first, first >= 48 && first <= 57 else { return nil }
        if first == 48 { return utf8.count == 1 ? 0 : nil }
        guard utf8.count <= 9 else { return nil }
        var value = 0
        for byte in utf8 {
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int(byte - 48)
        }
        return value
    }
}

extension ChildKey {
    public static func == (lhs: ChildKey, rhs: ChildKey) -> Bool {
        let left = lhs.string.utf8
        let right = rhs.string.utf8
        guard left.count == right.count else { return false }
        let borrowed = left.withContiguousStorageIfAvailable { l in
            right.withContiguousStorageIfAvailable { r in l.elementsEqual(r) }
        }
        if let borrowed, let equal = borrowed { return equal }
        return left.elementsEqual(right)
    }

    public func hash(into hasher: inout Hasher) {
        let utf8 = string.utf8
        if utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            Array(utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
        hasher.combine(0xFF as UInt8)
    }
}

extension ChildKey: Comparable {
    public static func < (lhs: ChildKey, rhs: ChildKey) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// Three-way comparison in Firebase key order: negative, zero or positive.
    public static func compare(_ lhs: ChildKey, _ rhs: ChildKey) -> Int {
        // Borrow both keys' bytes (native and small strings hold them contiguously): comparisons
        // run in every tree lookup and insert, and walking `String.UTF8View` costs far more.
        let borrowed = lhs.string.utf8.withContiguousStorageIfAvailable { left in
            rhs.string.utf8.withContiguousStorageIfAvailable { right in compare(left, right) }
        }
        if let borrowed, let result = borrowed { return result }
        return Array(lhs.string.utf8).withUnsafeBufferPointer { left in
            Array(rhs.string.utf8).withUnsafeBufferPointer { right in compare(left, right) }
        }
    }

    private static func compare(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Int {
        let leftMaybeInt = left.first.map(Self.startsInteger) ?? false
        let rightMaybeInt = right.first.map(Self.startsInteger) ?? false
        if leftMaybeInt || rightMaybeInt {
            let leftInt = leftMaybeInt ? parseInteger(left) : nil
            let rightInt = rightMaybeInt ? parseInteger(right) : nil
            switch (leftInt, rightInt) {
            case let (l?, r?):
                if l != r { return l < r ? -1 : 1 }
                if left.count != right.count { return left.count < right.count ? -1 : 1 }
                // Same number and length but different text ("-0" and "00"): still distinct keys.
                return compareUTF16Order(left, right)
            case (.some, nil): return -1
            case (nil, .some): return 1
            case (nil, nil): break
            }
        }
        return compareUTF16Order(left, right)
    }

    private static func startsInteger(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || (byte >= 48 && byte <= 57)
    }
}

/// Compares two strings by UTF-16 code units, the order Firebase's clients use, while reading
/// UTF-8 bytes. UTF-8 byte order equals code point order; the two orders differ only where a
/// character above U+FFFF meets one in U+E000–U+FFFF, which is handled at the first difference.
func compareUTF16Order(_ lhs: String, _ rhs: String) -> Int {
    // Borrow the bytes where the strings hold them contiguously (native and small strings):
    // `withUTF8` would need mutable copies, a retain and release per string on every compare.
    let borrowed = lhs.utf8.withContiguousStorageIfAvailable { l in
        rhs.utf8.withContiguousStorageIfAvailable { r in compareUTF16Order(l, r) }
    }
    if let borrowed, let result = borrowed { return result }
    var lhs = lhs
    var rhs = rhs
    return lhs.withUTF8 { l in rhs.withUTF8 { r in compareUTF16Order(l, r) } }
}

private func compareUTF16Order(_ l: UnsafeBufferPointer<UInt8>, _ r: UnsafeBufferPointer<UInt8>) -> Int {
    let common = min(l.count, r.count)
    var index = 0
    while index < common && l[index] == r[index] { index += 1 }
    if index == common {
        return l.count == r.count ? 0 : (l.count < r.count ? -1 : 1)
    }
    let lb = l[index]
    let rb = r[index]
    // Both bytes ASCII, or neither starts a 4-byte sequence: byte order is UTF-16 order.
    if lb < 0xEE || rb < 0xEE { return lb < rb ? -1 : 1 }
    var start = index
    while start > 0 && (l[start] & 0xC0) == 0x80 { start -= 1 }
    let lu = utf16Units(l, from: start)
    let ru = utf16Units(r, from: start)
    if lu.0 != ru.0 { return lu.0 < ru.0 ? -1 : 1 }
    if lu.1 != ru.1 { return lu.1 < ru.1 ? -1 : 1 }
    return lb < rb ? -1 : 1
}

/// Decodes the code point starting at `offset` and returns its first and second UTF-16 units.
private func utf16Units(_ bytes: UnsafeBufferPointer<UInt8>, from offset: Int) -> (UInt32, UInt32) {
    let b0 = UInt32(bytes[offset])
    func cont(_ i: Int) -> UInt32 { offset + i < bytes.count ? UInt32(bytes[offset + i]) & 0x3F : 0 }
    let scalar: UInt32
    if b0 < 0x80 {
        scalar = b0
    } else if b0 < 0xE0 {
        scalar = ((b0 & 0x1F) << 6) | cont(1)
    } else if b0 < 0xF0 {
        scalar = ((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2)
    } else {
        scalar = ((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3)
    }
    if scalar < 0x10000 { return (scalar, 0) }
    let v = scalar - 0x10000
    return (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
}
