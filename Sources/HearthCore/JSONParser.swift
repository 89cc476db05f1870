/// Parses JSON request bodies straight into ``Node`` trees, applying Firebase's data rules as it
/// goes: keys are validated (with the line and column of a bad one), arrays become objects keyed
/// `"0"`, `"1"`, …, nulls and empty objects vanish, `.priority`/`.value` become priorities, and
/// `{".sv": …}` placeholders are kept for ``ServerValues`` to resolve.
public struct JSONParser: ~Copyable {
    /// The result of parsing one value.
    public struct Parsed: Sendable {
        /// The parsed value, possibly still holding server-value placeholders.
        public var node: Node
        /// How many levels of objects the value nests (0 for a leaf).
        public var depth: Int
        /// True when the value holds at least one `{".sv": …}` placeholder.
        public var hasServerValues: Bool

        public init(node: Node, depth: Int, hasServerValues: Bool) {
            self.node = node
            self.depth = depth
            self.hasServerValues = hasServerValues
        }

        /// A plain value built in code (its depth is measured; it holds no server values).
        public init(node: Node) {
            self.init(node: node, depth: node.depth, hasServerValues: false)
        }
    }

    /// The longest string value allowed, in UTF-8 bytes (10 MB).
    public static let maxStringBytes = 10 * 1024 * 1024

    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var hasServerValues = false
    private var maxDepthSeen = 0
    private let nestingLimit = 512

    private var progress: ((Int) -> Void)?
    private var nextProgressReport = Int.max
    /// For documents that are not database data (token claims, provider answers): any key.
    private var allowsAnyKey = false

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses one JSON value, calling `progress` with the number of bytes consumed about every
    /// megabyte (for progress bars on large imports).
    public static func parse(
        _ bytes: some Collection<UInt8>,
        progress: @escaping (Int) -> Void
    ) throws(HearthError) -> Parsed {
        try withContiguousBytes(bytes) { (buffer) throws(HearthError) -> Parsed in
            var parser = JSONParser(buffer)
            parser.progress = progress
            parser.nextProgressReport = Self.progressInterval
            parser.skipWhitespace()
            let node = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.position == buffer.count else { throw HearthError.unparseableData }
            progress(buffer.count)
            return Parsed(node: node, depth: parser.maxDepthSeen, hasServerValues: parser.hasServerValues)
        }
    }

    private static let progressInterval = 1 << 20

    @inline(__always)
    private mutating func reportProgress() {
        guard position >= nextProgressReport else { return }
        nextProgressReport = position + Self.progressInterval
        progress?(position)
    }

    /// Parses one JSON value.
    /// - Throws: ``HearthError`` with Firebase's text for malformed JSON or a bad key.
    /// Parses a JSON document that is not database data, such as a token's claims or an
    /// identity provider's answer, whose keys may hold characters database keys may not
    /// (`"google.com"`, `"https://example.com/roles"`). Arrays still become integer-keyed objects.
    public static func parseDocument(_ bytes: some Collection<UInt8>) throws(HearthError) -> Node {
        try withContiguousBytes(bytes) { (buffer) throws(HearthError) -> Node in
            var parser = JSONParser(buffer)
            parser.allowsAnyKey = true
            parser.skipWhitespace()
            let node = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.position == buffer.count else { throw HearthError.unparseableData }
            return node
        }
    }

    public static func parse(_ bytes: some Collection<UInt8>) throws(HearthError) -> Parsed {
        try withContiguousBytes(bytes) { (buffer) throws(HearthError) -> Parsed in
            var parser = JSONParser(buffer)
            parser.skipWhitespace()
            let node = try parser.parseValue(depth: 0)
            parser.skipWhitespace()
            guard parser.position == buffer.count else { throw HearthError.unparseableData }
            return Parsed(node: node, depth: parser.maxDepthSeen, hasServerValues: parser.hasServerValues)
        }
    }

    /// Parses a multi-location update body: an object whose keys are relative paths.
    /// - Returns: each path with its value, in body order (a repeated path keeps its last value).
    /// - Throws: ``HearthError/invalidUpdateObject`` when the body is not such an object.
    public static func parseUpdate(_ bytes: some Collection<UInt8>) throws(HearthError) -> [(path: Path, value: Parsed)] {
        try withContiguousBytes(bytes) { (buffer) throws(HearthError) -> [(path: Path, value: Parsed)] in
            var parser = JSONParser(buffer)
            parser.skipWhitespace()
            guard parser.peek() == UInt8(ascii: "{") else {
                // Tell malformed JSON apart from well-formed JSON that is not an object.
                var probe = JSONParser(buffer)
                probe.skipWhitespace()
                _ = try probe.parseValue(depth: 0)
                probe.skipWhitespace()
                guard probe.position == buffer.count else { throw HearthError.unparseableData }
                throw HearthError.invalidUpdateObject
            }
            var result: [(path: Path, value: Parsed)] = []
            var indexByPath: [Path: Int] = [:]
            try parser.parseMembers { (parser, keyText) throws(HearthError) in
                guard let path = try? Path(parsing: keyText, allowPriority: true), !path.isRoot else {
                    throw HearthError.invalidUpdateObject
                }
                parser.hasServerValues = false
                parser.maxDepthSeen = 0
                let node = try parser.parseValue(depth: 0)
                let parsed = Parsed(node: node, depth: parser.maxDepthSeen, hasServerValues: parser.hasServerValues)
                if let existing = indexByPath[path] {
                    result[existing].value = parsed
                } else {
                    indexByPath[path] = result.count
                    result.append((path, parsed))
                }
            }
            return result
        }
    }

    /// The members of the JSON object in `bytes`, each key (as written, not checked as a
    /// database key) with the byte range of its value, in order, unparsed: for envelopes (such
    /// as the realtime protocol's messages) whose parts are read in different ways. Values are
    /// checked to be well-formed JSON. Throws `unparseableData` when `bytes` is not one object.
    public static func members(ofObject bytes: some Collection<UInt8>) throws(HearthError) -> [(key: String, value: Range<Int>)] {
        try withContiguousBytes(bytes) { (buffer) throws(HearthError) -> [(key: String, value: Range<Int>)] in
            var parser = JSONParser(buffer)
            parser.skipWhitespace()
            guard parser.peek() == UInt8(ascii: "{") else { throw HearthError.unparseableData }
            var members: [(key: String, value: Range<Int>)] = []
            try parser.parseMembers { (parser, key) throws(HearthError) in
                let start = parser.position
                try parser.skipValue(depth: 1)
                members.append((key, start..<parser.position))
            }
            return members
        }
    }

    /// Reads the object that starts here and ends the input: for each member, `value` gets the
    /// key and must read the value, which starts at the parser's position.
    private mutating func parseMembers(
        _ value: (inout JSONParser, String) throws(HearthError) -> Void
    ) throws(HearthError) {
        position += 1  // {
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw HearthError.unparseableData }
                let key = try parseString()
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw HearthError.unparseableData }
                position += 1
                skipWhitespace()
                try value(&self, key)
                skipWhitespace()
                let next = peek()
                position += 1
                if next == UInt8(ascii: ",") { continue }
                if next == UInt8(ascii: "}") { break }
                throw HearthError.unparseableData
            }
        }
        skipWhitespace()
        guard position == bytes.count else { throw HearthError.unparseableData }
    }

    private static func withContiguousBytes<R>(
        _ bytes: some Collection<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>) throws(HearthError) -> R
    ) throws(HearthError) -> R {
        let result: Result<R, HearthError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(HearthError) -> R in try body(buffer) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { buffer throws(HearthError) -> R in try body(buffer) }
    }

    // MARK: - Values

    @inline(__always)
    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(HearthError) -> Node {
        guard let byte = peek() else { throw HearthError.unparseableData }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw HearthError.unparseableData
        }
    }

    /// Moves past one well-formed JSON value without building it (no database rules apply).
    private mutating func skipValue(depth: Int) throws(HearthError) {
        guard let byte = peek() else { throw HearthError.unparseableData }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth <= nestingLimit else { throw HearthError.unparseableData }
            let isObject = byte == UInt8(ascii: "{")
            let close = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
            position += 1
            skipWhitespace()
            if peek() == close {
                position += 1
                return
            }
            while true {
                skipWhitespace()
                if isObject {
                    guard peek() == UInt8(ascii: "\"") else { throw HearthError.unparseableData }
                    _ = try parseString()
                    skipWhitespace()
                    guard peek() == UInt8(ascii: ":") else { throw HearthError.unparseableData }
                    position += 1
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                let next = peek()
                position += 1
                if next == UInt8(ascii: ",") { continue }
                if next == close { return }
                throw HearthError.unparseableData
            }
        case UInt8(ascii: "\""): _ = try parseString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw HearthError.unparseableData
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(HearthError) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw HearthError.unparseableData }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[position + offset] != start[offset] {
            throw HearthError.unparseableData
        }
        position += count
    }

    private mutating func enter(depth: Int) throws(HearthError) {
        guard depth <= nestingLimit else { throw HearthError.unparseableData }
        if depth > maxDepthSeen { maxDepthSeen = depth }
        position += 1
        skipWhitespace()
    }

    private mutating func parseArray(depth: Int) throws(HearthError) -> Node {
        try enter(depth: depth)
        var entries: [(ChildKey, Node)] = []
        if peek() == UInt8(ascii: "]") {
            position += 1
            return .null
        }
        var index = 0
        while true {
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if !value.isNull { entries.append((ChildKey(String(index)), value)) }
            index += 1
            skipWhitespace()
            guard let next = peek() else { throw HearthError.unparseableData }
            position += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "]") { break }
            throw HearthError.unparseableData
        }
        guard !entries.isEmpty else { return .null }
        // Indices were generated in ascending order, which is also Firebase key order.
        return .object(Children(sortedUniqueEntries: entries))
    }

    private mutating func parseObject(depth: Int) throws(HearthError) -> Node {
        try enter(depth: depth)
        var entries: [(ChildKey, Node)] = []
        var priority: Node?
        var bareValue: Node?
        var serverValue: Node?
        var sawOtherKey = false
        var sawNull = false
        if peek() == UInt8(ascii: "}") {
            position += 1
            return .null
        }
        // Room for a small object's keys at once (appending from empty reallocates three times).
        entries.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw HearthError.unparseableData }
            let keyStart = position
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw HearthError.unparseableData }
            position += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            reportProgress()
            switch key {
            case ".priority":
                priority = value
            case ".value":
                bareValue = value
            case ".sv":
                serverValue = value
            default:
                guard allowsAnyKey || Path.isValidKey(key) else { throw keyError(at: keyStart) }
                sawOtherKey = true
                // A null is kept until the end, so that it overrides an earlier value for the key.
                if value.isNull { sawNull = true }
                entries.append((ChildKey(key), value))
            }
            skipWhitespace()
            guard let next = peek() else { throw HearthError.unparseableData }
            position += 1
            if next == UInt8(ascii: ",") { continue }
            if next == UInt8(ascii: "}") { break }
            throw HearthError.unparseableData
        }
        if let serverValue {
            guard !sawOtherKey, bareValue == nil, priority == nil else { throw HearthError.unparseableData }
            hasServerValues = true
            return ServerValues.placeholder(serverValue)
        }
        let resolvedPriority = try Self.priority(from: priority)
        if let bareValue {
            guard !sawOtherKey else { throw HearthError.unparseableData }
            return bareValue.withPriority(resolvedPriority)
        }
        guard !entries.isEmpty else { return .null }
        // Bodies written by Hearth (snapshots, exports) list keys in order: build in O(n).
        var sorted = true
        for index in entries.indices.dropFirst() where ChildKey.compare(entries[index - 1].0, entries[index].0) >= 0 {
            sorted = false
            break
        }
        var children: Children
        if sorted {
            children = Children(sortedUniqueEntries: sawNull ? entries.filter { !$0.1.isNull } : entries)
        } else {
            children = Children(entries: entries)
            if sawNull {
                for (key, value) in children where value.isNull { children.remove(key) }
            }
        }
        return Node.fromChildren(children).withPriority(resolvedPriority)
    }

    static func priority(from node: Node?) throws(HearthError) -> Priority? {
        guard let node else { return nil }
        switch node {
        case .null: return nil
        case .int(let value): return .number(Double(value))
        case .double(let value): return .number(value)
        case .string(let value): return .string(value)
        default: throw HearthError(.invalidData, "Invalid data; priority must be a number, a string or null.")
        }
    }

    private func keyError(at offset: Int) -> HearthError {
        var line = 1
        var column = 1
        for index in 0..<offset {
            if bytes[index] == 0x0A {
                line += 1
                column = 1
            } else if bytes[index] & 0xC0 != 0x80 {
                column += 1
            }
        }
        return HearthError.invalidKey(line: line, column: column)
    }

    // MARK: - Strings

    private mutating func parseString() throws(HearthError) -> String {
        position += 1  // opening quote
        let start = position
        // Fast path: no escapes.
        var highBits: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                guard slice.count <= Self.maxStringBytes else { throw Self.stringTooLong }
                // ASCII needs no validation (and decoding it repairs nothing).
                if highBits < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else { throw HearthError.unparseableData }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw HearthError.unparseableData }
            highBits |= byte
            position += 1
        }
        var buffer = Array(UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard buffer.count <= Self.maxStringBytes else { throw Self.stringTooLong }
                guard let string = String(validating: buffer, as: UTF8.self) else { throw HearthError.unparseableData }
                return string
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { throw HearthError.unparseableData }
                let escaped = bytes[position]
                position += 1
                switch escaped {
                case UInt8(ascii: "\""): buffer.append(0x22)
                case UInt8(ascii: "\\"): buffer.append(0x5C)
                case UInt8(ascii: "/"): buffer.append(0x2F)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if scalar >= 0xD800 && scalar < 0xDC00 {
                        // A high surrogate must be followed by an escaped low surrogate.
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else { throw HearthError.unparseableData }
                        position += 2
                        let low = try parseHex4()
                        guard low >= 0xDC00 && low < 0xE000 else { throw HearthError.unparseableData }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar < 0xE000 {
                        throw HearthError.unparseableData
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw HearthError.unparseableData }
                    buffer.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    throw HearthError.unparseableData
                }
            default:
                if byte < 0x20 { throw HearthError.unparseableData }
                buffer.append(byte)
            }
        }
        throw HearthError.unparseableData
    }

    private mutating func parseHex4() throws(HearthError) -> UInt32 {
        guard position + 4 <= bytes.count else { throw HearthError.unparseableData }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            position += 1
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 55)
            default: throw HearthError.unparseableData
            }
            value = value << 4 | digit
        }
        return value
    }

    static let stringTooLong = HearthError(
        .invalidData, "Invalid data; a string value exceeds the maximum size of 10485760 bytes."
    )

    // MARK: - Numbers

    private mutating func parseNumber() throws(HearthError) -> Node {
        let start = position
        var isInteger = true
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), first >= 48 && first <= 57 else { throw HearthError.unparseableData }
        if first == 48 {
            position += 1
        } else {
            while let byte = peek(), byte >= 48 && byte <= 57 { position += 1 }
        }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let byte = peek(), byte >= 48 && byte <= 57 else { throw HearthError.unparseableData }
            while let byte = peek(), byte >= 48 && byte <= 57 { position += 1 }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { position += 1 }
            guard let byte = peek(), byte >= 48 && byte <= 57 else { throw HearthError.unparseableData }
            while let byte = peek(), byte >= 48 && byte <= 57 { position += 1 }
        }
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
        if isInteger && slice.count <= 18 {
            var value: Int64 = 0
            var negative = false
            for byte in slice {
                if byte == UInt8(ascii: "-") { negative = true; continue }
                value = value * 10 + Int64(byte - 48)
            }
            return .int(negative ? -value : value)
        }
        let text = String(decoding: slice, as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw HearthError.unparseableData }
        return .double(value)
    }
}
