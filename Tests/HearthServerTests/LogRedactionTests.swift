import Foundation
import HearthServer
import HearthTesting
import Testing

/// Credentials never reach the request log (the console's Logs page) or the access log, whatever
/// the transport carried them in: REST's and event streams' `auth=`, storage's `token=`, an
/// App Check token in a WebSocket's URL, and the client's messages in long-polling URLs, which
/// carry its `auth` requests with their ID tokens.
@Suite("Log redaction")
struct LogRedactionTests {
    @Test func credentialsAnywhereInAQueryAreHidden() {
        let path = HearthResponderTestHooks.loggablePath
        #expect(
            path("/a.json?AUTH=t1&Access_Token=t2&id_token=t3&oobCode=t4&refresh_token=t5&password=t6&key=public&print=pretty")
                == "/a.json?AUTH=***&Access_Token=***&id_token=***&oobCode=***&refresh_token=***&password=***&key=public&print=pretty")
        #expect(path("/v0/b/bucket/o/a.png?alt=media&token=t7") == "/v0/b/bucket/o/a.png?alt=media&token=***")
        #expect(
            path("/v0/b/bucket/o?name=a&upload_id=t8&upload_protocol=resumable")
                == "/v0/b/bucket/o?name=a&upload_id=***&upload_protocol=resumable")
        #expect(path("/.ws?v=5&ns=default&ac=t9") == "/.ws?v=5&ns=default&ac=***")
        // Long-polling: the client's messages ride in d0, d1, …
        #expect(
            path("/.lp?id=abc&pw=t10&ser=3&ns=default&seg0=0&ts0=2&d0=eyJ0Ijoi&seg1=1&ts1=2&d1=ZCJ9")
                == "/.lp?id=abc&pw=***&ser=3&ns=default&seg0=0&ts0=2&d0=***&seg1=1&ts1=2&d1=***")
        #expect(path("/.lp?dframe=t&id=abc&pw=t11") == "/.lp?dframe=t&id=abc&pw=***")
        // Elsewhere a d0 is nobody's message.
        #expect(path("/a.json?d0=x") == "/a.json?d0=x")
        // A percent-encoded name is still the name.
        #expect(path("/a.json?%61uth=t12") == "/a.json?%61uth=***")
    }

    /// Web-safe base64 with `.` padding, as the SDKs encode long-polling segments.
    static func webSafeBase64(_ text: String) -> String {
        String(Data(text.utf8).base64EncodedString().map { character -> Character in
            switch character {
            case "+": "-"
            case "/": "_"
            case "=": "."
            default: character
            }
        })
    }

    @Test func noTransportLeavesACredentialInTheRequestLog() async throws {
        try await withServer { server in
            let token = TestToken.unsigned(uid: "logged-user")
            // REST, and a Server-Sent Events stream, with auth=.
            _ = try await server.request("GET", "/a.json?auth=\(token)")
            let stream = try TestSocket(port: server.port)
            try stream.write("GET /a.json?auth=\(token) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            #expect(await stream.read(untilContaining: "event: put").hasPrefix("HTTP/1.1 200"))
            // A storage download with token=.
            _ = try await server.request("GET", "/v0/b/hearth.appspot.com/o/nothing.png?alt=media&token=download-token-123")
            // A WebSocket with an App Check token in its URL, and an auth request on it.
            let socket = try await RealtimeTestClient.open(server, query: "v=5&ns=default&ac=app-check-token-456")
            _ = try await socket.request("auth", #"{"cred": "\#(token)"}"#)
            try await socket.close()
            // Long-polling, where the auth request rides in the URL.
            let start = try await server.request("GET", "/.lp?start=t&ser=1&cb=7&v=5&ns=default")
            let match = try #require(start.text.firstMatch(of: /pLPCommand\('start','(\w+)','(\w+)'\)/))
            let (id, password) = (String(match.1), String(match.2))
            let frame = Self.webSafeBase64(#"{"t":"d","d":{"r":1,"a":"auth","b":{"cred":"\#(token)"}}}"#)
            let poll = try await server.request("GET", "/.lp?id=\(id)&pw=\(password)&ser=2&ns=default&seg0=0&ts0=1&d0=\(frame)")
            #expect(poll.text.contains(#""s":"ok""#), "the auth request arrived: \(poll.text)")

            let listed = try await server.request("GET", "/.hearth/requests?limit=1000", headers: TestServer.adminHeaders)
            let log = listed.text
            for secret in [token, "download-token-123", "app-check-token-456", password, frame, String(frame.prefix(40))] {
                #expect(!log.contains(secret), "\(secret.prefix(20))… is in the request log")
            }
            for hidden in ["auth=***", "token=***", "d0=***", "pw=***"] {
                #expect(log.contains(hidden), "\(hidden) is not in the request log: \(log.prefix(2000))")
            }
        }
    }
}
