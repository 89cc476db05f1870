import Foundation
import HearthTesting
import Testing

@testable import HearthEngine
@testable import HearthServer

/// Server inputs that `scripts/fuzz` found mishandled: each gets Firebase's error, not a crash.
@Suite("Fuzz regressions: server")
struct ServerFuzzRegressionTests {
    /// `fuzz-multipart`: `Content-Type: ;` on an upload trapped in the content type check and
    /// took the whole server down; it is a 400 in Firebase Storage's error shape.
    @Test func anUploadWithAContentTypeOfOnlyASemicolonIsA400() async throws {
        try await withServer { server in
            let result = try await server.request(
                "POST", "/v0/b/hearth.appspot.com/o?uploadType=media&name=a.txt", data: Data("hello".utf8),
                headers: ["Content-Type": ";"])
            #expect(result.status == 400, "\(result.text)")
            let body = try JSONSerialization.jsonObject(with: result.body) as? [String: Any]
            let error = body?["error"] as? [String: Any]
            #expect(error?["code"] as? Int == 400, "\(result.text)")
            #expect(error?["message"] as? String == #"Invalid content type: ";"."#, "\(result.text)")
            // The server is still up.
            #expect(try await server.request("GET", "/.json").status == 200)
        }
    }

    /// `fuzz-multipart`: a part's header name with a byte past ASCII indexed past the end of
    /// MultipartKit's table of header name characters and took the server down; Hearth reads
    /// multipart bodies itself now (``MultipartReader``), and such a body is a 400.
    @Test func aMultipartPartHeaderNameWithANonASCIIByteIsA400() async throws {
        try await withServer { server in
            var body = Data("--b\r\n".utf8)
            body += Data([0xE2, 0x01, 0xBF]) + Data(": x\r\n\r\n{}\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n--b--".utf8)
            let result = try await server.request(
                "POST", "/v0/b/hearth.appspot.com/o?name=a.txt", data: body,
                headers: ["X-Goog-Upload-Protocol": "multipart", "Content-Type": "multipart/related; boundary=b"])
            #expect(result.status == 400, "\(result.text)")
            let error = (try JSONSerialization.jsonObject(with: result.body) as? [String: Any])?["error"] as? [String: Any]
            #expect(error?["message"] as? String == "Malformed multipart body.", "\(result.text)")
            #expect(try await server.request("GET", "/.json").status == 200)
        }
    }

    /// An encoded "/" followed by an encoded combining mark (`%2F%CC%81`) decodes to one
    /// Character; it must still be refused rather than split a key in two.
    @Test func anEncodedSlashBeforeACombiningMarkIsRefused() async throws {
        try await withServer { server in
            let result = try await server.request("PUT", "/a%2F%CC%81b.json", body: "1")
            #expect(result.status == 400, "\(result.text)")
            #expect(result.text.contains("Invalid path"), "\(result.text)")
            #expect(try await server.request("GET", "/a.json").text == "null")
        }
    }

    /// An unsigned emulator token whose `exp` is too large for milliseconds in an `Int64`
    /// (`1e300`) trapped converting it; it is a token that never expires.
    @Test func anUnsignedTokenWithAHugeExpirySignsIn() async throws {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let token = part(#"{"alg":"none","typ":"JWT"}"#) + "." + part(#"{"sub":"bob","user_id":"bob","exp":1e300}"#) + "."
        #expect(RequestAuth.milliseconds(seconds: 1e300) == .max)
        #expect(RequestAuth.milliseconds(seconds: -1e300) == .min)
        #expect(RequestAuth.milliseconds(seconds: 1_700_000_000.5) == 1_700_000_000_500)
        try await withServer { server in
            let result = try await server.request("GET", "/.json?auth=\(token)")
            #expect(result.status == 200, "\(result.text)")
        }
    }
}
