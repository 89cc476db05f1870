import Testing

@testable import HearthHosting

@Suite("firebase.json's hosting section")
struct HostingConfigurationTests {
    private func read(_ json: String) throws -> HostingConfiguration {
        try HostingConfiguration(firebaseJSON: Array(json.utf8))
    }

    /// The error reading `json` gives.
    private func problem(_ json: String) -> HostingConfigurationError? {
        do throws(HostingConfigurationError) {
            _ = try HostingConfiguration(firebaseJSON: Array(json.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test("Firebase's full example reads with every feature")
    func fullExample() throws {
        let configuration = try read(
            """
            {
              // Comments are allowed, as the Firebase CLI allows them.
              "database": {"rules": "database.rules.json"},
              "hosting": {
                "public": "dist/app",
                "ignore": ["firebase.json", "**/.*", "**/node_modules/**"],
                "redirects": [
                  {"source": "/foo", "destination": "/bar", "type": 301},
                  {"source": "/firebase/**", "destination": "https://firebase.google.com/", "type": 302},
                  {"regex": "/blog/(?P<post>.+)", "destination": "https://blog.myapp.com/:post"},
                ],
                "rewrites": [
                  {"source": "/bigben", "function": "bigben"},
                  {"source": "/api/**", "function": {"functionId": "api", "region": "europe-west1", "pinTag": true}},
                  {"source": "**", "destination": "/index.html"}
                ],
                "headers": [
                  {"source": "**/*.@(eot|otf|ttf|ttc|woff|font.css)", "headers": [{"key": "Access-Control-Allow-Origin", "value": "*"}]},
                  {"regex": ".+/\\\\w+\\\\.(jpg|jpeg|gif|png)$", "headers": [{"key": "Cache-Control", "value": "max-age=7200"}]}
                ],
                "cleanUrls": true,
                "trailingSlash": false,
                "appAssociation": "NONE",
                "predeploy": ["npm run build"]
              }
            }
            """)
        let site = try #require(configuration.sites.first)
        #expect(configuration.sites.count == 1)
        #expect(site.publicFolder == "dist/app")
        #expect(site.ignore.map(\.pattern) == ["firebase.json", "**/.*", "**/node_modules/**"])
        #expect(site.redirects.map(\.status) == [301, 302, 301])
        #expect(site.rewrites.map(\.target) == [
            .function(name: "bigben", region: nil), .function(name: "api", region: "europe-west1"), .path("/index.html"),
        ])
        #expect(site.headers.count == 2)
        #expect(site.headers[0].headers == [HostingHeader(name: "Access-Control-Allow-Origin", value: "*")])
        #expect(site.cleanUrls)
        #expect(site.trailingSlash == false)
        #expect(site.appAssociation == .none)
    }

    @Test("Defaults: Firebase's ignore list, no clean URLs, trailing slash unset")
    func defaults() throws {
        let site = try #require(try read(#"{"hosting": {"public": "public"}}"#).sites.first)
        #expect(site.ignore.map(\.pattern) == HostingSite.defaultIgnore)
        #expect(site.isIgnored("firebase.json"))
        #expect(site.isIgnored(".env"))
        #expect(site.isIgnored(".git/config"))
        #expect(site.isIgnored("a/node_modules/b/c.js"))
        #expect(!site.isIgnored("index.html"))
        #expect(!site.cleanUrls)
        #expect(site.trailingSlash == nil)
        #expect(site.appAssociation == .auto)
    }

    @Test("Several sites, each named by site or target, chosen by host name")
    func severalSites() throws {
        let configuration = try read(
            """
            {"hosting": [
              {"site": "main", "public": "main"},
              {"target": "blog", "public": "blog"},
              {"site": "docs-site", "public": "docs"}
            ]}
            """)
        #expect(configuration.sites.map(\.publicFolder) == ["main", "blog", "docs"])
        #expect(configuration.site(forHost: "blog.example.com").publicFolder == "blog")
        #expect(configuration.site(forHost: "blog.localhost:9000").publicFolder == "blog")
        #expect(configuration.site(forHost: "docs-site.web.app").publicFolder == "docs")
        #expect(configuration.site(forHost: "www.example.com").publicFolder == "main")
        #expect(configuration.site(forHost: nil).publicFolder == "main")
        #expect(configuration.site(forHost: "127.0.0.1:9000").publicFolder == "main")
        // The server's own map comes first.
        let hosts = ["docs.example.org": "docs-site", "www.example.com": "blog"]
        #expect(configuration.site(forHost: "DOCS.example.org:443", hostSites: hosts).publicFolder == "docs")
        #expect(configuration.site(forHost: "www.example.com", hostSites: hosts).publicFolder == "blog")
        #expect(configuration.site(forHost: "[::1]:9000").publicFolder == "main")
    }

    @Test("Invalid JSON is refused")
    func invalidJSON() {
        #expect(problem(#"{"hosting": {"public": "public""#)?.code == .invalidJSON)
        #expect(problem("")?.code == .invalidJSON)
        #expect(problem("[]")?.code == .wrongType)
    }

    @Test("Each wrong type names its key")
    func wrongTypes() {
        let cases: [(String, String)] = [
            (#"{"hosting": 3}"#, "hosting"),
            (#"{"hosting": {"public": 1}}"#, "hosting.public"),
            (#"{"hosting": {"public": "p", "cleanUrls": 1}}"#, "hosting.cleanUrls"),
            (#"{"hosting": {"public": "p", "trailingSlash": "yes"}}"#, "hosting.trailingSlash"),
            (#"{"hosting": {"public": "p", "ignore": "x"}}"#, "hosting.ignore"),
            (#"{"hosting": {"public": "p", "ignore": ["a", 2]}}"#, "hosting.ignore[1]"),
            (#"{"hosting": {"public": "p", "rewrites": {}}}"#, "hosting.rewrites"),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "**", "destination": "/i.html"}, "x"]}}"#, "hosting.rewrites[1]"),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": 5, "destination": "/i.html"}]}}"#, "hosting.rewrites[0].source"),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "a"}, {"source": "b", "function": 7}]}}"#, "hosting.rewrites[0].destination"),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "b", "function": 7}]}}"#, "hosting.rewrites[0].function"),
            (#"{"hosting": {"public": "p", "redirects": [{"source": "/a", "destination": "/b", "type": "301"}]}}"#, "hosting.redirects[0].type"),
            (#"{"hosting": {"public": "p", "headers": [{"source": "**", "headers": [{"key": "X", "value": 1}]}]}}"#, "hosting.headers[0].headers[0].value"),
            (#"{"hosting": [{"site": "a", "public": "a"}, {"site": "b", "public": 2}]}"#, "hosting[1].public"),
        ]
        for (json, keyPath) in cases {
            let error = problem(json)
            #expect(error?.keyPath == keyPath, "\(json): \(String(describing: error))")
        }
    }

    @Test("Bad values name their key: globs, regexes, redirect types, names")
    func badValues() {
        let cases: [(String, String, HostingConfigurationError.Code)] = [
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "**", "destination": "/i.html"}, {"source": "/a", "destination": "/a"}, {"regex": "(a", "destination": "/i.html"}]}}"#, "hosting.rewrites[2].regex", .invalidValue),
            (#"{"hosting": {"public": "p", "rewrites": [{"regex": "(a)\\1", "destination": "/i.html"}]}}"#, "hosting.rewrites[0].regex", .invalidValue),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "!**", "destination": "/i.html"}]}}"#, "hosting.rewrites[0].source", .invalidValue),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "", "destination": "/i.html"}]}}"#, "hosting.rewrites[0].source", .invalidValue),
            (#"{"hosting": {"public": "p", "redirects": [{"source": "/a", "destination": "/b", "type": 304}]}}"#, "hosting.redirects[0].type", .invalidValue),
            (#"{"hosting": {"public": "p", "redirects": [{"source": "/a", "destination": "/b", "type": 301.5}]}}"#, "hosting.redirects[0].type", .wrongType),
            (#"{"hosting": {"public": "p", "redirects": [{"source": "/a"}]}}"#, "hosting.redirects[0].destination", .missingKey),
            (#"{"hosting": {"public": "p", "redirects": [{"source": "/a", "regex": "a", "destination": "/b"}]}}"#, "hosting.redirects[0]", .invalidValue),
            (#"{"hosting": {"public": "p", "redirects": [{"destination": "/b"}]}}"#, "hosting.redirects[0].source", .missingKey),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "/a", "destination": "/b", "function": "f"}]}}"#, "hosting.rewrites[0]", .invalidValue),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "/a", "destination": "/../etc/passwd"}]}}"#, "hosting.rewrites[0].destination", .invalidValue),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "/a", "function": "bad name"}]}}"#, "hosting.rewrites[0].function", .invalidValue),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "/a", "function": {"region": "x"}}]}}"#, "hosting.rewrites[0].function.functionId", .missingKey),
            (#"{"hosting": {"public": "p", "headers": [{"source": "**", "headers": [{"key": "Bad Name", "value": "x"}]}]}}"#, "hosting.headers[0].headers[0].key", .invalidValue),
            (#"{"hosting": {"public": "p", "headers": [{"source": "**", "headers": [{"key": "X", "value": "a\nb"}]}]}}"#, "hosting.headers[0].headers[0].value", .invalidValue),
            (#"{"hosting": {"public": "p", "headers": [{"source": "**"}]}}"#, "hosting.headers[0].headers", .missingKey),
            (#"{"hosting": {"public": "p", "appAssociation": "MAYBE"}}"#, "hosting.appAssociation", .invalidValue),
            (#"{"hosting": {"public": "/etc"}}"#, "hosting.public", .invalidValue),
            (#"{"hosting": {"public": "../outside"}}"#, "hosting.public", .invalidValue),
            (#"{"hosting": {}}"#, "hosting.public", .missingKey),
            (#"{"database": {}}"#, "hosting", .missingKey),
            (#"{"hosting": []}"#, "hosting", .invalidValue),
            (#"{"hosting": [{"public": "a"}, {"site": "b", "public": "b"}]}"#, "hosting[0].site", .missingKey),
            (#"{"hosting": [{"site": "a", "public": "a"}, {"site": "a", "public": "b"}]}"#, "hosting[1]", .invalidValue),
            (#"{"hosting": {"public": "p", "cleanURLs": true}}"#, "hosting.cleanURLs", .unknownKey),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "**", "destination": "/i.html", "typo": 1}]}}"#, "hosting.rewrites[0].typo", .unknownKey),
        ]
        for (json, keyPath, code) in cases {
            let error = problem(json)
            #expect(error?.keyPath == keyPath && error?.code == code, "\(json): \(String(describing: error))")
        }
    }

    @Test("i18n, Cloud Run, Dynamic Links and web frameworks are refused clearly")
    func unsupported() {
        let cases: [(String, String)] = [
            (#"{"hosting": {"public": "p", "i18n": {"root": "/localized"}}}"#, "hosting.i18n"),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "**", "run": {"serviceId": "s"}}]}}"#, "hosting.rewrites[0].run"),
            (#"{"hosting": {"public": "p", "rewrites": [{"source": "/l/**", "dynamicLinks": true}]}}"#, "hosting.rewrites[0].dynamicLinks"),
            (#"{"hosting": {"source": "."}}"#, "hosting.source"),
        ]
        for (json, keyPath) in cases {
            let error = problem(json)
            #expect(error?.code == .unsupported && error?.keyPath == keyPath, "\(json): \(String(describing: error))")
        }
        #expect(problem(#"{"hosting": {"public": "p", "i18n": {"root": "/l"}}}"#)?.description.contains("i18n") == true)
    }
}
