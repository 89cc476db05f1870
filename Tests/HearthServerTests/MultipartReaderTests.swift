import NIOCore
import Testing

@testable import HearthEngine
@testable import HearthServer

/// Hearth's multipart reader: parts, headers and content, whatever pieces the body arrives in.
@Suite("Multipart reader")
struct MultipartReaderTests {
    static let body = Array(
        "preamble\r\n--b0undary\r\nContent-Type: application/json; charset=utf-8\r\nX-Extra:  v  \r\n\r\n{\"name\":\"a\"}"
            .utf8)
        + Array("\r\n--b0undary \t\r\nContent-Type: image/png\r\n\r\n".utf8) + Array("\r\n--b0undar\r\n-\r".utf8) + [0, 255]
        + Array("\r\n--b0undary--\r\nepilogue".utf8)

    /// The events, with consecutive content joined.
    static func read(_ pieces: [[UInt8]], boundary: String = "b0undary") throws -> (events: [String], closed: Bool) {
        var reader = MultipartReader(boundary: boundary)
        var events: [String] = []
        var content: [UInt8]?
        for piece in pieces {
            for event in try reader.read(ByteBuffer(bytes: piece)) {
                switch event {
                case .content(let bytes): content = (content ?? []) + Array(bytes.readableBytesView)
                case .header(let name, let value):
                    events.append("\(name)=\(value)")
                case .partEnd:
                    events.append("content \(content ?? [])")
                    content = nil
                }
            }
        }
        return (events, reader.isClosed)
    }

    @Test func partsHeadersAndContentInOneRead() throws {
        let (events, closed) = try Self.read([Self.body])
        #expect(events == [
            "Content-Type=application/json; charset=utf-8", "X-Extra=v", "content \(Array(#"{"name":"a"}"#.utf8))",
            "Content-Type=image/png", "content \(Array("\r\n--b0undar\r\n-\r".utf8) + [0, 255])",
        ])
        #expect(closed)
    }

    @Test func theSameInAnyPieces() throws {
        let whole = try Self.read([Self.body])
        for split in 0...Self.body.count {
            let pieces = [Array(Self.body[..<split]), Array(Self.body[split...])]
            #expect(try Self.read(pieces) == whole, "split at \(split)")
        }
        #expect(try Self.read(Self.body.map { [$0] }) == whole)
    }

    @Test func aPartWithoutHeadersAndAnEmptyContent() throws {
        let (events, closed) = try Self.read([Array("--x\r\n\r\n\r\n--x\r\nA: 1\r\n\r\n\r\n--x--".utf8)], boundary: "x")
        #expect(events == ["content []", "A=1", "content []"])
        #expect(closed)
    }

    @Test(arguments: [
        "--b\r\n\u{E9}: x\r\n\r\n", "--b\r\nno colon\r\n\r\n", "--b\r\n: empty name\r\n\r\n", "--bX\r\n", "--b \t x\r\n",
    ])
    func malformedBodiesAreRefused(_ text: String) {
        #expect(throws: MultipartReader.Malformed.self) { try Self.read([Array(text.utf8)], boundary: "b") }
    }

    @Test func headersPastTheLimitAreRefused() {
        let long = Array("--b\r\nA: ".utf8) + Array(repeating: UInt8(ascii: "a"), count: MultipartReader.maxHeaderBytes + 1)
        #expect(throws: MultipartReader.Malformed.self) { try Self.read([long], boundary: "b") }
    }
}
