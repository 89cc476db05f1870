import Testing
@testable import HearthAuth

/// URLs a user is sent on to, read as browsers read them (WHATWG), and their hosts compared
/// with the authorized domains exactly. The refused forms are those where a browser and an
/// RFC 3986 parser (Foundation) could see different hosts.
@Suite struct BrowserURLTests {
    static let domains: Set<String> = ["app.example.com", "localhost", "127.0.0.1", "[::1]"]

    @Test func plainURLsAreReadWithTheirHostAndPort() throws {
        let url = try #require(BrowserURL("HTTPS://App.Example.COM:8443/done?next=%2Fhome#top"))
        #expect(url.scheme == "https")
        #expect(url.host == "app.example.com")
        #expect(url.port == 8443)
        #expect(url.rest == "/done?next=%2Fhome#top")
        #expect(url.isAuthorized(by: Self.domains))
        let bare = try #require(BrowserURL("http://localhost"))
        #expect(bare.host == "localhost" && bare.port == nil && bare.rest == "")
        // What follows the host may hold what it likes (other than the refused characters).
        let query = try #require(BrowserURL("https://app.example.com?@evil.example#@evil.example"))
        #expect(query.host == "app.example.com")
        #expect(query.isAuthorized(by: Self.domains))
        #expect(BrowserURL("https://app.example.com/caf\u{E9}?q=\u{1F525}")?.host == "app.example.com")
    }

    @Test func ipAddressesAreComparedInTheirCanonicalForm() throws {
        let v6 = try #require(BrowserURL("http://[0:0:0:0:0:0:0:1]:9000/x"))
        #expect(v6.host == "::1" && v6.port == 9000)
        #expect(v6.isAuthorized(by: Self.domains))
        #expect(v6.isAuthorized(by: ["::1"]))
        #expect(try #require(BrowserURL("http://[::2]/")).isAuthorized(by: Self.domains) == false)
        #expect(try #require(BrowserURL("http://127.0.0.1:80/")).isAuthorized(by: Self.domains))
        // An IPv4-mapped address reaches 127.0.0.1, but is not written as the authorized one.
        #expect(try #require(BrowserURL("http://[::ffff:127.0.0.1]/")).isAuthorized(by: Self.domains) == false)
    }

    /// Each of these makes a browser go somewhere else than an RFC 3986 reading says, or is
    /// no URL a browser follows to an http(s) page: all are refused outright.
    @Test(arguments: [
        // The issue's own: a browser reads `\` as `/` and goes to evil.example.
        #"http://evil.example\@127.0.0.1/"#,
        #"http://127.0.0.1\evil.example/"#,
        #"https://app.example.com\.evil.example/"#,
        #"https:\\evil.example"#,
        // User info: the host is after the `@`, whichever reader is asked.
        "http://app.example.com@evil.example/",
        "http://evil.example@app.example.com/",
        "http://user:pass@app.example.com/",
        "http://app.example.com:443@evil.example/",
        // Percent-encoding in the host: a browser decodes it.
        "http://app.example.com%2eevil.example/",
        "http://evil%2Eexample/",
        "http://app.example.com%40evil.example/",
        "http://%61pp.example.com/",
        // Tabs, newlines and other whitespace or controls: a browser drops or stops at them.
        "http://app.exa\tmple.com/",
        "http://app.example.com\n.evil.example/",
        "http://evil.example\r\n@app.example.com/",
        " http://app.example.com/",
        "http://app.example.com/ ",
        "http://app.example.com/a b",
        "http://app.example.com\u{0}.evil.example/",
        "http://app.example.com\u{7F}/",
        "http://app.example.com\u{A0}/",
        "http://app.example.com\u{200B}/",
        "http://app.example.com/\u{202E}moc.live",
        "http://app.example.com\u{3000}/",
        // Not two slashes after the scheme: browsers still find a host.
        "//evil.example",
        "http:evil.example",
        "http:/evil.example",
        "http:///evil.example",
        "http:////evil.example",
        // Not http(s).
        "javascript://app.example.com/%0aalert(1)",
        "javascript:alert(1)",
        "data:text/html,hi",
        "ftp://app.example.com/",
        "file:///etc/passwd",
        "app.example.com/done",
        "/done",
        "",
        // Names a browser reads otherwise, or refuses.
        "https://app.example.com./",
        "https://.app.example.com/",
        "https://app..example.com/",
        "https://evil.example.127.0.0.1/",
        "https://evil.com.127.0.0.1/",
        "http://0x7f.0.0.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://2130706433/",
        "http://127.0.0.1.1/",
        "http://256.0.0.1/",
        "http://app.0x10/",
        "http://app.example.com:/",
        "http://app.example.com:99999/",
        "http://app.example.com:80:80/",
        "http://app.example.com:8a/",
        "http://[::1/",
        "http://[127.0.0.1]/",
        "http://[::1%25eth0]/",
        "http://[fe80::1%eth0]/",
        "http://[::1]x/",
        "http://::1/",
        "http://app.ex*ample.com/",
        "http://app.ex\u{E4}mple.com/",
        "http://\u{FF41}pp.example.com/",
        "http://",
        "http:///",
    ])
    func ambiguousOrForeignURLsAreRefused(_ text: String) {
        #expect(BrowserURL(text) == nil, "\(text.debugDescription)")
    }

    /// Hosts that only look like an authorized one are not it: the comparison is exact.
    @Test(arguments: [
        "https://evil.example/",
        "https://app.example.com.evil.example/",
        "https://evilapp.example.com/",
        "https://sub.app.example.com/",
        "https://example.com/",
        "https://127.0.0.1.nip.io/",
        "https://localhost.evil.example/",
        "https://evil-localhost/",
        "http://127.0.0.2/",
        "http://[::2]/",
    ])
    func lookalikeHostsAreNotAuthorized(_ text: String) throws {
        let url = try #require(BrowserURL(text))
        #expect(!url.isAuthorized(by: Self.domains), "\(text)")
    }

    @Test func anyCaseAndPortOfAnAuthorizedHostIsAuthorized() throws {
        for text in ["http://APP.EXAMPLE.COM/", "https://App.Example.Com:1/x", "http://LocalHost:9000", "http://127.0.0.1:0/"] {
            #expect(try #require(BrowserURL(text)).isAuthorized(by: Self.domains), "\(text)")
        }
        // Domains are compared in any case too.
        #expect(try #require(BrowserURL("https://app.example.com/")).isAuthorized(by: ["App.Example.COM"]))
    }

    @Test func overlongURLsAreRefused() {
        let path = String(repeating: "a", count: BrowserURL.maxLength)
        #expect(BrowserURL("https://app.example.com/" + path) == nil)
        #expect(BrowserURL("https://" + String(repeating: "a", count: 64) + ".example.com/") == nil)
    }
}
