import HearthEngine
import NIOCore

/// Reads a `multipart/…` body (RFC 2046 §5.1) as it arrives, in pieces of any size: the parts
/// between `--boundary` lines, each as its header fields, then its content. Free of I/O.
///
/// What it holds is bounded: a part's header section (``maxHeaderBytes``), and less than a
/// delimiter's length of content kept back in case a delimiter starts there. The preamble and
/// the epilogue are skipped.
struct MultipartReader {
    enum Event: Equatable {
        /// A header field of the current part.
        case header(name: String, value: String)
        /// The next piece of the current part's content.
        case content(ByteBuffer)
        /// The current part's content is complete.
        case partEnd
    }

    /// The body is not multipart data with this boundary.
    struct Malformed: Error, Equatable {
        let reason: String
    }

    /// The longest header section a part may have.
    static let maxHeaderBytes = 16 * 1024

    private enum State {
        case preamble
        /// Just after a delimiter: `--` (the close), or padding and a line break (a part).
        case afterDelimiter
        case headers
        case content
        case epilogue
    }

    /// `CRLF--boundary`: what ends a part's content.
    private let delimiter: [UInt8]
    private var state = State.preamble
    /// Bytes received and not yet read. It starts with a line break, so that a delimiter at
    /// the very start of the body is found like any other.
    private var pending = ByteBuffer(bytes: [13, 10])

    init(boundary: String) {
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    /// Body bytes given to ``read(_:)`` so far.
    private var given: Int64 = 0

    /// How far into the body the reader has got: the bytes it has read past, content handed
    /// out included, not those it keeps back in case a delimiter starts there.
    var position: Int64 {
        // `pending` started with a line break that is not the body's: once it is read past,
        // what is left of `pending` is all the body's.
        max(0, given - Int64(pending.readableBytes))
    }

    /// The bytes the closing delimiter (`CRLF--boundary--`) takes: what follows the last
    /// content byte at least.
    var closingDelimiterLength: Int { delimiter.count + 2 }

    /// True once the closing delimiter (`--boundary--`) was read.
    var isClosed: Bool {
        if case .epilogue = state { return true }
        return false
    }

    /// Takes the next piece of the body.
    /// - Returns: what it completes, in order.
    /// - Throws: ``Malformed`` when the body is not multipart data.
    mutating func read(_ piece: ByteBuffer) throws(Malformed) -> [Event] {
        given += Int64(piece.readableBytes)
        if pending.readableBytes == 0 {
            pending = piece
        } else {
            // A new buffer: content already handed out shares the old one's storage, which
            // writing to it would copy whole.
            var joined = ByteBufferAllocator().buffer(capacity: pending.readableBytes + piece.readableBytes)
            joined.writeImmutableBuffer(pending)
            joined.writeImmutableBuffer(piece)
            pending = joined
        }
        var events: [Event] = []
        while try step(&events) {}
        return events
    }

    /// Reads what the current state can; false when it needs more bytes.
    private mutating func step(_ events: inout [Event]) throws(Malformed) -> Bool {
        switch state {
        case .preamble:
            guard let start = find(delimiter) else {
                // Keep only what could be the start of a delimiter.
                pending.moveReaderIndex(forwardBy: max(0, pending.readableBytes - (delimiter.count - 1)))
                return false
            }
            pending.moveReaderIndex(forwardBy: start + delimiter.count)
            state = .afterDelimiter
            return true
        case .afterDelimiter:
            let bytes = pending.readableBytesView
            guard bytes.count >= 2 else { return false }
            if bytes.starts(with: [UInt8(ascii: "-"), UInt8(ascii: "-")]) {
                state = .epilogue
                return true
            }
            // Transport padding (spaces and tabs), then the line break.
            let padding = bytes.prefix { $0 == 32 || $0 == 9 }.count
            guard padding + 2 <= bytes.count else {
                guard padding < 256 else { throw Malformed(reason: "padding after a boundary is too long") }
                return false
            }
            let lineBreak = bytes.dropFirst(padding).prefix(2)
            guard lineBreak.elementsEqual([13, 10]) else { throw Malformed(reason: "a boundary must end its line") }
            pending.moveReaderIndex(forwardBy: padding + 2)
            state = .headers
            return true
        case .headers:
            let bytes = pending.readableBytesView
            if bytes.starts(with: [13, 10]) {
                // No header fields.
                pending.moveReaderIndex(forwardBy: 2)
                state = .content
                return true
            }
            guard let end = find([13, 10, 13, 10]) else {
                guard pending.readableBytes <= Self.maxHeaderBytes else { throw Malformed(reason: "a part's headers are too long") }
                return false
            }
            guard end <= Self.maxHeaderBytes else { throw Malformed(reason: "a part's headers are too long") }
            let section = Array(bytes.prefix(end))
            for line in section.split(separator: 10, omittingEmptySubsequences: false) {
                events.append(try Self.header(line.last == 13 ? line.dropLast() : line[...]))
            }
            pending.moveReaderIndex(forwardBy: end + 4)
            state = .content
            return true
        case .content:
            if let end = find(delimiter) {
                if end > 0, let content = pending.readSlice(length: end) { events.append(.content(content)) }
                pending.moveReaderIndex(forwardBy: delimiter.count)
                events.append(.partEnd)
                state = .afterDelimiter
                return true
            }
            // Everything but what could be the start of a delimiter.
            let sure = pending.readableBytes - (delimiter.count - 1)
            if sure > 0, let content = pending.readSlice(length: sure) { events.append(.content(content)) }
            return false
        case .epilogue:
            pending.moveReaderIndex(forwardBy: pending.readableBytes)
            return false
        }
    }

    /// One `Name: value` line of a header section.
    private static func header(_ line: ArraySlice<UInt8>) throws(Malformed) -> Event {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
            throw Malformed(reason: "a header line has no name")
        }
        let name = line[..<colon]
        // A token: visible ASCII without separators that matter here.
        guard name.allSatisfy({ $0 > 32 && $0 < 127 }) else { throw Malformed(reason: "a header name must be ASCII") }
        let value = line[(colon + 1)...].drop { $0 == 32 || $0 == 9 }
        let trimmed = value.reversed().drop { $0 == 32 || $0 == 9 }.reversed()
        return .header(name: String(decoding: name, as: UTF8.self), value: String(decoding: trimmed, as: UTF8.self))
    }

    /// Where `needle` first starts in the unread bytes, as an offset from the reader index.
    private func find(_ needle: [UInt8]) -> Int? {
        pending.withUnsafeReadableBytes { bytes -> Int? in
            guard bytes.count >= needle.count, let first = needle.first else { return nil }
            var index = 0
            let last = bytes.count - needle.count
            while index <= last {
                guard let next = bytes[index...last].firstIndex(of: first) else { return nil }
                var matched = 1
                while matched < needle.count && bytes[next + matched] == needle[matched] { matched += 1 }
                if matched == needle.count { return next }
                index = next + 1
            }
            return nil
        }
    }
}
