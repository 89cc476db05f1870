import Foundation
import HearthServer
import HearthTesting
import Testing

/// A change too large for one stream event cancels the stream (`cancel`) with Firebase's text.
@Suite("Stream limits")
struct StreamLimitTests {
    static let tooLarge = #"event: cancel\#ndata: "The specified payload is too large, please request a location with less data.""#

    @Test func oversizeChangeCancelsTheStream() async throws {
        try await TestServer.with(configure: { $0.maxStreamEventBytes = 1000 }) { (server: TestServer) async throws in
            let stream = try RawHTTPConnection(
                port: server.port, request: "GET /big.json HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n"
            )
            let opening = await stream.read { $0.contains("\"path\":\"/\"") }
            #expect(opening.contains("text/event-stream; charset=utf-8"))
            #expect(opening.contains(#"data: {"path":"/","data":null}"#))

            // A small change is delivered; a large one ends the stream with cancel.
            #expect(try await server.request("PUT", "/big/a.json", body: "1").status == 200)
            let small = await stream.read { $0.contains(#""path":"/a""#) }
            #expect(small.contains(#"data: {"path":"/a","data":1}"#))
            let large = "\"" + String(repeating: "x", count: 2000) + "\""
            #expect(try await server.request("PUT", "/big/b.json", body: large).status == 200)
            let ending = await stream.read { $0.contains("event: cancel") && $0.hasSuffix("0\r\n\r\n") }
            #expect(ending.contains(Self.tooLarge))
            #expect(!ending.contains("xxxx"))
        }
    }

    @Test func oversizeInitialValueIsRefused() async throws {
        try await TestServer.with(configure: { $0.maxStreamEventBytes = 1000 }) { (server: TestServer) async throws in
            let large = "\"" + String(repeating: "y", count: 2000) + "\""
            #expect(try await server.request("PUT", "/huge.json", body: large).status == 200)
            let stream = try RawHTTPConnection(
                port: server.port, request: "GET /huge.json HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n"
            )
            let response = await stream.read { $0.contains("event: cancel") }
            #expect(response.contains(Self.tooLarge))
            #expect(!response.contains("yyyy"))
        }
    }
}
