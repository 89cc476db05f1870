import NIOCore

/// Splits a Server-Sent Events body into events (`event:` and `data:` lines ended by a blank
/// line), as the bytes arrive in pieces of any size. Memory is bounded: an event larger than
/// `maxEventBytes` is an error.
struct EventStreamParser {
    struct Event: Equatable {
        var name: String
        var data: String
    }

    let maxEventBytes: Int
    private var pending: [UInt8] = []
    /// How far `pending` has been searched for a blank line (so big events are not rescanned).
    private var scanned = 0

    init(maxEventBytes: Int = 256 << 20) {
        self.maxEventBytes = maxEventBytes
    }

    /// The events completed by `buffer`.
    mutating func feed(_ buffer: ByteBuffer) throws -> [Event] {
        pending += buffer.readableBytesView
        var events: [Event] = []
        while let end = Self.blankLine(in: pending, from: max(0, scanned - 3)) {
            let block = pending[..<end.start]
            if let event = Self.event(from: block) { events.append(event) }
            pending.removeFirst(end.end)
            scanned = 0
        }
        scanned = pending.count
        if pending.count > maxEventBytes {
            throw HearthClientError(.unexpectedResponse, "A stream event is larger than \(maxEventBytes) bytes.")
        }
        return events
    }

    /// Where the first blank line (`\n\n` or `\r\n\r\n`) is: the event's end and where the
    /// next one starts.
    private static func blankLine(in bytes: [UInt8], from start: Int) -> (start: Int, end: Int)? {
        var index = start
        while index < bytes.count {
            if bytes[index] == 10 {
                if index + 1 < bytes.count, bytes[index + 1] == 10 { return (index, index + 2) }
                if index + 2 < bytes.count, bytes[index + 1] == 13, bytes[index + 2] == 10 { return (index, index + 3) }
            }
            index += 1
        }
        return nil
    }

    private static func event(from block: ArraySlice<UInt8>) -> Event? {
        var name = "message"
        var data: [String] = []
        for line in block.split(separator: 10, omittingEmptySubsequences: true) {
            var text = String(decoding: line, as: UTF8.self)
            if text.hasSuffix("\r") { text.removeLast() }
            if text.hasPrefix(":") { continue }
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            var value = parts.count > 1 ? String(parts[1]) : ""
            if value.hasPrefix(" ") { value.removeFirst() }
            switch parts[0] {
            case "event": name = value
            case "data": data.append(value)
            default: break
            }
        }
        guard !data.isEmpty || name != "message" else { return nil }
        return Event(name: name, data: data.joined(separator: "\n"))
    }
}
