import FuzzSupport
import HearthCore
import HearthProtocol
import HearthRules

@testable import HearthEngine
@testable import HearthServer

/// The realtime protocol's own layers above WebSocket: text frames (NUL-separated in the
/// input) reassembled into messages (chunk counts, keep-alives, the size limit), and each
/// message read as a client message (envelopes, requests, paths, query objects, data). What
/// the server would send back about a message (an error, a revoked listen echoing the query
/// object) must be valid JSON, and any message must come back whole from its own frames.
@main
struct RealtimeFuzz {
    static func main() {
        Fuzzer.run { bytes in
            var assembler = RealtimeFrameAssembler(maxMessageBytes: 1 << 16)
            for frame in bytes.split(separator: 0, omittingEmptySubsequences: false) {
                let received: RealtimeFrameAssembler.Received
                do throws(RealtimeFrameError) {
                    received = try assembler.receive(Fuzzer.text(Array(frame)))
                } catch {
                    expectJSON(RealtimeServerMessage.error(RealtimeProtocolError(error).description))
                    return  // the connection closes
                }
                guard case .message(let text) = received else { continue }
                checkFrames(of: text)
                do throws(RealtimeProtocolError) {
                    check(try RealtimeClientMessage.parse(text))
                } catch {
                    expectJSON(RealtimeServerMessage.error(error.description))
                    return
                }
            }
        }
    }

    /// A message split into frames comes back whole.
    static func checkFrames(of message: String) {
        var assembler = RealtimeFrameAssembler(maxMessageBytes: 1 << 20)
        var whole: String?
        for frame in RealtimeFrames.frames(for: message) {
            Fuzzer.expect(frame.utf16.count <= RealtimeFrames.maxFrameLength, "a frame of \(frame.utf16.count) units")
            if case .message(let text)? = try? assembler.receive(frame) { whole = text }
        }
        // A message that is a bare number is a chunk count (or a keep-alive) on the wire.
        if message.utf8.count > 6 || Int(message) == nil {
            Fuzzer.expect(whole == message, "the frames of a message do not rebuild it")
        }
    }

    static func check(_ message: RealtimeClientMessage) {
        switch message {
        case .ping, .control: break
        case .rejected(let id, let error):
            let status = RealtimeStatus(error)
            expectJSON(RealtimeServerMessage.response(id: id, status: status.status, data: .string(status.message)))
        case .request(let id, let request):
            expectJSON(RealtimeServerMessage.response(id: id, status: "ok", data: .null))
            switch request {
            case .listen(let path, let view, _), .unlisten(let path, let view), .get(let path, let view):
                expectJSON(RealtimeServerMessage.listenRevoked(path: path, queryObject: view.queryObject))
                expectJSON(RealtimeServerMessage.dataPush(path: path, encodedData: Array("null".utf8), tag: view.tag))
                _ = RuleQuery(view.query)
            case .put(let path, let data, _), .onDisconnectPut(let path, let data):
                expectJSON(RealtimeServerMessage.dataPush(
                    path: path, encodedData: JSONWriter.bytes(data.node, format: .init(export: true))))
            case .merge(let path, let entries), .onDisconnectMerge(let path, let entries):
                let object = entries.map { ResolvedWrite.UpdateEntry(path: $0.path, value: $0.value.node) }
                expectJSON(RealtimeServerMessage.dataPush(
                    path: path, encodedData: JSONWriter.updateObject(object, format: .init(export: true)), merge: true))
            case .auth, .unauth, .appCheck, .stats, .onDisconnectCancel, .unknown: break
            }
        }
    }

    static func expectJSON(_ message: [UInt8]) {
        Fuzzer.expect(
            (try? JSONParser.members(ofObject: message)) != nil,
            "the server would send invalid JSON: \(String(decoding: message, as: UTF8.self))")
    }
}
