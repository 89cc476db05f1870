/// Writes ``Node`` trees as JSON text, the way Firebase's REST API renders them.
///
/// Objects whose keys are all array indices render as arrays when the largest index is less
/// than twice the number of children (missing indices become `null`). Integral numbers render
/// without a fraction. With ``Format/export`` priorities are included and arrays are not made.
/// Output can be flushed to a sink in chunks, so exporting a large tree needs little memory.
public struct JSONWriter {
    /// How values are rendered.
    public struct Format: Sendable, Hashable {
        /// Indent with two spaces and put `" : "` between keys and values.
        public var pretty: Bool
        /// Include `.priority` and `.value`, and never turn objects into arrays.
        public var export: Bool

        public init(pretty: Bool = false, export: Bool = false) {
            self.pretty = pretty
            self.export = export
        }

        /// Compact output without priorities.
        public static let compact = Format()
    }

    /// The bytes written and not yet flushed.
    public private(set) var output: [UInt8] = []
    private let format: Format
    private let flushThreshold: Int
    private let sink: ((ArraySlice<UInt8>) throws -> Void)?
    /// Leaf and object nodes written so far (for progress reports).
    public private(set) var nodesWritten = 0

    /// A writer that keeps everything in ``output``.
    public init(format: Format = .compact) {
        self.format = format
        self.flushThreshold = .max
        self.sink = nil
        // Most answers are small: one allocation instead of several regrowths.
        output.reserveCapacity(128)
    }

    /// A writer that hands `sink` a chunk whenever about `chunkSize` bytes are ready.
    public init(format: Format, chunkSize: Int = 1 << 16, sink: @escaping (ArraySlice<UInt8>) throws -> Void) {
        self.format = format
        self.flushThreshold = chunkSize
        self.sink = sink
        output.reserveCapacity(chunkSize + 1024)
    }

    /// Renders a node to bytes in one go.
    public static func bytes(_ node: Node, format: Format = .compact) -> [UInt8] {
        var writer = JSONWriter(format: format)
        writer.write(node)
        return writer.output
    }

    /// Appends `value` to `output` as a JSON string, quoted and escaped (for callers that
    /// assemble a document around values they already hold as JSON).
    public static func appendString(_ value: String, to output: inout [UInt8]) {
        var writer = JSONWriter(adopting: [])
        swap(&writer.output, &output)
        writer.appendString(value)
        swap(&writer.output, &output)
    }

    private init(adopting output: [UInt8]) {
        self.format = .compact
        self.flushThreshold = .max
        self.sink = nil
        self.output = output
    }

    /// Renders a node to a string in one go.
    public static func string(_ node: Node, format: Format = .compact) -> String {
        String(decoding: bytes(node, format: format), as: UTF8.self)
    }

    /// Writes one node.
    public mutating func write(_ node: Node) {
        writeNode(node, indent: 0)
    }

    /// Writes one node, flushing full chunks to the sink.
    public mutating func writeFlushing(_ node: Node) throws {
        try withFlushing { writer in writer.writeNode(node, indent: 0) }
    }

    /// Hands everything still buffered to the sink.
    public mutating func flush() throws {
        guard let sink, !output.isEmpty else { return }
        try sink(output[...])
        output.removeAll(keepingCapacity: true)
    }

    private var pendingError: (any Error)?

    private mutating func withFlushing(_ body: (inout JSONWriter) -> Void) throws {
        body(&self)
        if let error = pendingError { throw error }
        try flush()
    }

    @inline(__always)
    private mutating func maybeFlush() {
        guard sink != nil, output.count >= flushThreshold, pendingError == nil else { return }
        do { try flush() } catch { pendingError = error }
    }

    // MARK: - Nodes

    private mutating func writeNode(_ node: Node, indent: Int) {
        nodesWritten += 1
        switch node {
        case .null:
            append("null")
        case .bool(let value):
            append(value ? "true" : "false")
        case .int(let value):
            appendInteger(value)
        case .double(let value):
            appendDouble(value)
        case .string(let value):
            appendString(value)
        case .object(let children):
            writeObject(children, priority: nil, indent: indent)
        case .prioritized(let inner, let priority):
            guard format.export else {
                writeNode(inner, indent: indent)
                return
            }
            if case .object(let children) = inner {
                writeObject(children, priority: priority, indent: indent)
            } else {
                openObject()
                writeKey(".value", indent: indent + 1, first: true)
                writeNode(inner, indent: indent + 1)
                writeKey(".priority", indent: indent + 1, first: false)
                writePriority(priority)
                closeObject(indent: indent)
            }
        }
        maybeFlush()
    }

    private mutating func writeObject(_ children: Children, priority: Priority?, indent: Int) {
        if !format.export, Self.arrayLength(children) != nil {
            output.append(UInt8(ascii: "["))
            var next = 0
            for (key, value) in children {
                let index = key.arrayIndex!
                while next < index {
                    writeArraySeparator(indent: indent + 1, first: next == 0)
                    append("null")
                    next += 1
                }
                writeArraySeparator(indent: indent + 1, first: next == 0)
                writeNode(value, indent: indent + 1)
                next += 1
            }
            if format.pretty { newline(indent: indent) }
            output.append(UInt8(ascii: "]"))
            return
        }
        openObject()
        var first = true
        if let priority {
            writeKey(".priority", indent: indent + 1, first: true)
            writePriority(priority)
            first = false
        }
        // In order without an iterator (whose stack is an allocation per object).
        children.forEachInOrder { key, value in
            writeKey(key.string, indent: indent + 1, first: first)
            writeNode(value, indent: indent + 1)
            first = false
        }
        closeObject(indent: indent)
    }

    /// The array length when `children` renders as an array, else nil.
    public static func arrayLength(_ children: Children) -> Int? {
        guard let first = children.first, let last = children.last,
            first.key.arrayIndex != nil, let maxIndex = last.key.arrayIndex,
            maxIndex < 2 * children.count
        else { return nil }
        // Integer keys sort numerically, but a spelling such as "07" is not an array index.
        for (key, _) in children where key.arrayIndex == nil { return nil }
        return maxIndex + 1
    }

    private mutating func writePriority(_ priority: Priority) {
        switch priority {
        case .number(let value): appendDouble(value)
        case .string(let value): appendString(value)
        }
    }

    private mutating func openObject() {
        output.append(UInt8(ascii: "{"))
    }

    private mutating func closeObject(indent: Int) {
        if format.pretty { newline(indent: indent) }
        output.append(UInt8(ascii: "}"))
    }

    private mutating func writeKey(_ key: String, indent: Int, first: Bool) {
        if !first { output.append(UInt8(ascii: ",")) }
        if format.pretty { newline(indent: indent) }
        appendString(key)
        if format.pretty { append(" : ") } else { output.append(UInt8(ascii: ":")) }
    }

    private mutating func writeArraySeparator(indent: Int, first: Bool) {
        if !first { output.append(UInt8(ascii: ",")) }
        if format.pretty { newline(indent: indent) }
    }

    private mutating func newline(indent: Int) {
        output.append(0x0A)
        for _ in 0..<indent { append("  ") }
    }

    // MARK: - Scalars

    @inline(__always)
    private mutating func append(_ text: StaticString) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func appendInteger(_ value: Int64) {
        if value == 0 {
            output.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // scratch space for 20 digits
        withUnsafeMutableBytes(of: &digits) { scratch in
            var index = scratch.count
            while magnitude > 0 {
                index -= 1
                scratch[index] = UInt8(magnitude % 10) + 48
                magnitude /= 10
            }
            if value < 0 { output.append(UInt8(ascii: "-")) }
            output.append(contentsOf: scratch[index...])
        }
    }

    private mutating func appendDouble(_ value: Double) {
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
            appendInteger(Int64(value))
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }

    private mutating func appendString(_ value: String) {
        // Borrowed bytes where the string holds them contiguously (native and small strings).
        if value.utf8.withContiguousStorageIfAvailable({ appendString(utf8: $0) }) == nil {
            var value = value
            value.withUTF8 { appendString(utf8: $0) }
        }
    }

    private mutating func appendString(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        output.append(UInt8(ascii: "\""))
        var runStart = 0
        var index = 0
        while index < bytes.count {
            // Eight bytes at a time while none of them needs escaping (most text has none).
            if index + 8 <= bytes.count,
                !Self.mayNeedEscaping(UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self))
            {
                index += 8
                continue
            }
            let byte = bytes[index]
            index += 1
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            let position = index - 1
            if runStart < position { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position])) }
            runStart = index
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            default:
                append("\\u00")
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            }
        }
        if runStart < bytes.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        output.append(UInt8(ascii: "\""))
    }

    /// False when none of the eight bytes of `word` is below 0x20, `"` or `\` (true may be
    /// wrong only the safe way: the bytes are then looked at one by one).
    @inline(__always)
    static func mayNeedEscaping(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        return (control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs)) != 0
    }
}

extension Node: CustomStringConvertible {
    /// The node as compact JSON.
    public var description: String { JSONWriter.string(self) }
}
