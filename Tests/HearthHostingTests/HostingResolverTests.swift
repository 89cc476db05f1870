import Testing

@testable import HearthHosting

@Suite("Resolving requests in Firebase Hosting's order of precedence")
struct HostingResolverTests {
    /// A site read from `hosting` JSON.
    private func site(_ hosting: String) throws -> HostingSite {
        try #require(try HostingConfiguration(firebaseJSON: Array(#"{"hosting": \#(hosting)}"#.utf8)).sites.first)
    }

    private func resolve(
        _ path: String, method: String = "GET", query: String? = nil, site: HostingSite, files: [String]
    ) async throws -> HostingDecision {
        try await HostingResolver(site: site).resolve(
            HostingRequest(method: method, path: path, query: query), files: HostingFileSet(files))
    }

    private func action(
        _ path: String, method: String = "GET", query: String? = nil, site: HostingSite, files: [String]
    ) async throws -> HostingDecision.Action {
        try await resolve(path, method: method, query: query, site: site, files: files).action
    }

    // MARK: - Precedence

    @Test("The reserved namespace comes first, whatever the configuration says")
    func reservedFirst() async throws {
        let site = try site(#"{"public": "p", "redirects": [{"source": "**", "destination": "/x"}], "rewrites": [{"source": "**", "destination": "/index.html"}]}"#)
        #expect(try await action("/__/firebase/init.js", site: site, files: ["__/firebase/init.js"]) == .reserved("/__/firebase/init.js"))
        #expect(try await action("/__/auth/handler", site: site, files: []) == .reserved("/__/auth/handler"))
        #expect(try await action("/a/../__/x", site: site, files: []) == .reserved("/__/x"))
        // `/__x` is not the namespace.
        #expect(try await action("/__x", site: site, files: []) == .redirect(location: "/x", status: 301))
    }

    @Test("A configured redirect wins over a file at the same path (Firebase's documented order)")
    func redirectBeforeStatic() async throws {
        let site = try site(#"{"public": "p", "redirects": [{"source": "/old.html", "destination": "/new.html", "type": 302}]}"#)
        #expect(try await action("/old.html", site: site, files: ["old.html", "new.html"]) == .redirect(location: "/new.html", status: 302))
    }

    @Test("A file wins over a rewrite; the first matching rewrite wins over later ones")
    func staticBeforeRewrites() async throws {
        let site = try site(
            #"{"public": "p", "rewrites": [{"source": "/app/**", "destination": "/app.html"}, {"source": "**", "destination": "/index.html"}]}"#)
        let files = ["index.html", "app.html", "logo.svg"]
        #expect(try await action("/logo.svg", site: site, files: files) == .file("logo.svg", status: 200))
        #expect(try await action("/app/settings", site: site, files: files) == .file("app.html", status: 200))
        #expect(try await action("/anything/else", site: site, files: files) == .file("index.html", status: 200))
    }

    @Test("404.html answers with 404 when nothing matches; without it, the server's 404")
    func notFound() async throws {
        let site = try site(#"{"public": "p"}"#)
        #expect(try await action("/missing", site: site, files: ["404.html"]) == .file("404.html", status: 404))
        #expect(try await action("/missing", site: site, files: []) == .notFound)
        #expect(try await action("/missing", method: "POST", site: site, files: []) == .notFound)
    }

    @Test("A rewrite to a missing file is a 404, not another rewrite: rewrites cannot loop")
    func oneRewritePass() async throws {
        let site = try site(
            #"{"public": "p", "rewrites": [{"source": "/a", "destination": "/b"}, {"source": "/b", "destination": "/a"}, {"source": "**", "destination": "/a"}]}"#)
        #expect(try await action("/a", site: site, files: []) == .notFound)
        #expect(try await action("/b", site: site, files: ["404.html"]) == .file("404.html", status: 404))
        #expect(try await action("/zzz", site: site, files: []) == .notFound)
        // A destination that is itself only reachable by a rewrite is still not rewritten again.
        let chained = try self.site(#"{"public": "p", "rewrites": [{"source": "/x", "destination": "/y"}, {"source": "/y", "destination": "/z.html"}]}"#)
        #expect(try await action("/x", site: chained, files: ["z.html"]) == .notFound)
        #expect(try await action("/y", site: chained, files: ["z.html"]) == .file("z.html", status: 200))
    }

    @Test("A rewrite to a folder serves its index.html")
    func rewriteToFolder() async throws {
        let site = try site(#"{"public": "p", "rewrites": [{"source": "/docs/**", "destination": "/manual/"}]}"#)
        #expect(try await action("/docs/x", site: site, files: ["manual/index.html"]) == .file("manual/index.html", status: 200))
    }

    // MARK: - Functions and methods

    @Test("A function rewrite gets every method; files answer only GET and HEAD")
    func methods() async throws {
        let site = try site(
            #"{"public": "p", "rewrites": [{"source": "/api/**", "function": {"functionId": "api", "region": "europe-west1"}}, {"source": "/hook", "function": "hook"}, {"source": "**", "destination": "/index.html"}]}"#)
        let files = ["index.html", "style.css"]
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] {
            #expect(try await action("/api/users/1", method: method, site: site, files: files) == .function(name: "api", region: "europe-west1"))
        }
        #expect(try await action("/hook", method: "post", site: site, files: files) == .function(name: "hook", region: nil))
        #expect(try await action("/style.css", method: "HEAD", site: site, files: files) == .file("style.css", status: 200))
        #expect(try await action("/style.css", method: "POST", site: site, files: files) == .methodNotAllowed)
        #expect(try await action("/spa/route", method: "DELETE", site: site, files: files) == .methodNotAllowed)
        // A file at the function's path wins (exact-match static content comes before rewrites).
        #expect(try await action("/api/doc.html", method: "GET", site: site, files: ["api/doc.html"]) == .file("api/doc.html", status: 200))
    }

    // MARK: - Redirects

    @Test("Redirects: glob captures, regex groups, query kept, external destinations")
    func redirects() async throws {
        let site = try site(
            """
            {"public": "p", "redirects": [
              {"source": "/blog/:post*", "destination": "https://blog.example.com/:post*"},
              {"source": "/users/:id/profile", "destination": "/users/:id/newProfile", "type": 308},
              {"regex": "^/shop/(\\\\d+)/(?P<slug>[a-z-]+)$", "destination": "/store/:slug?id=:1", "type": 307},
              {"source": "/firebase/**", "destination": "https://firebase.google.com:443/", "type": 302},
              {"source": "/{a,b}.html", "destination": "/c.html"}
            ]}
            """)
        #expect(try await action("/blog/2024/hello", site: site, files: [])
            == .redirect(location: "https://blog.example.com/2024/hello", status: 301))
        #expect(try await action("/users/42/profile", query: "tab=1", site: site, files: [])
            == .redirect(location: "/users/42/newProfile?tab=1", status: 308))
        #expect(try await action("/shop/12/red-shoes", query: "ref=x", site: site, files: [])
            == .redirect(location: "/store/red-shoes?id=12&ref=x", status: 307))
        #expect(try await action("/firebase/docs", site: site, files: [])
            == .redirect(location: "https://firebase.google.com:443/", status: 302))
        #expect(try await action("/b.html", site: site, files: ["b.html"]) == .redirect(location: "/c.html", status: 301))
        // Captured text is encoded as a URL carries it.
        #expect(try await action("/blog/caf%C3%A9%20au%20lait", site: site, files: [])
            == .redirect(location: "https://blog.example.com/caf%C3%A9%20au%20lait", status: 301))
        // Redirects apply to every method.
        #expect(try await action("/users/1/profile", method: "POST", site: site, files: [])
            == .redirect(location: "/users/1/newProfile", status: 308))
    }

    // MARK: - cleanUrls and trailingSlash

    @Test("trailingSlash absent: a folder with index.html gets a slash; files are served as asked")
    func trailingSlashAbsent() async throws {
        let site = try site(#"{"public": "p"}"#)
        let files = ["index.html", "about/index.html", "page.html"]
        #expect(try await action("/", site: site, files: files) == .file("index.html", status: 200))
        #expect(try await action("/about", query: "q=1", site: site, files: files) == .redirect(location: "/about/?q=1", status: 301))
        #expect(try await action("/about/", site: site, files: files) == .file("about/index.html", status: 200))
        #expect(try await action("/about/index.html", site: site, files: files) == .file("about/index.html", status: 200))
        #expect(try await action("/page.html", site: site, files: files) == .file("page.html", status: 200))
        #expect(try await action("/page", site: site, files: files) == .notFound)
        #expect(try await action("/page.html/", site: site, files: files) == .notFound)
    }

    @Test("trailingSlash true adds a slash to folders and clean URLs; false removes it")
    func trailingSlashSet() async throws {
        let files = ["index.html", "about/index.html", "page.html", "style.css"]
        let adding = try site(#"{"public": "p", "trailingSlash": true}"#)
        #expect(try await action("/about", site: adding, files: files) == .redirect(location: "/about/", status: 301))
        #expect(try await action("/about/", site: adding, files: files) == .file("about/index.html", status: 200))
        #expect(try await action("/style.css", site: adding, files: files) == .file("style.css", status: 200))
        let removing = try site(#"{"public": "p", "trailingSlash": false}"#)
        #expect(try await action("/about/", site: removing, files: files) == .redirect(location: "/about", status: 301))
        #expect(try await action("/about", site: removing, files: files) == .file("about/index.html", status: 200))
        #expect(try await action("/", site: removing, files: files) == .file("index.html", status: 200))
    }

    @Test("cleanUrls: /page serves page.html, /page.html redirects to /page, /dir/index.html to /dir")
    func cleanUrls() async throws {
        let site = try site(#"{"public": "p", "cleanUrls": true}"#)
        let files = ["index.html", "page.html", "docs/index.html", "docs/intro.html"]
        #expect(try await action("/page", site: site, files: files) == .file("page.html", status: 200))
        #expect(try await action("/page.html", query: "a=b", site: site, files: files) == .redirect(location: "/page?a=b", status: 301))
        #expect(try await action("/docs/index.html", site: site, files: files) == .redirect(location: "/docs", status: 301))
        #expect(try await action("/index.html", site: site, files: files) == .redirect(location: "/", status: 301))
        // A folder is served without adding a slash when URLs are clean.
        #expect(try await action("/docs", site: site, files: files) == .file("docs/index.html", status: 200))
        #expect(try await action("/docs/intro", site: site, files: files) == .file("docs/intro.html", status: 200))
        #expect(try await action("/page/", site: site, files: files) == .notFound)
    }

    @Test("cleanUrls with trailingSlash true and false")
    func cleanUrlsWithTrailingSlash() async throws {
        let files = ["page.html", "docs/index.html"]
        let adding = try site(#"{"public": "p", "cleanUrls": true, "trailingSlash": true}"#)
        #expect(try await action("/page.html", site: adding, files: files) == .redirect(location: "/page/", status: 301))
        #expect(try await action("/page", site: adding, files: files) == .redirect(location: "/page/", status: 301))
        #expect(try await action("/page/", site: adding, files: files) == .file("page.html", status: 200))
        #expect(try await action("/docs", site: adding, files: files) == .redirect(location: "/docs/", status: 301))
        let removing = try site(#"{"public": "p", "cleanUrls": true, "trailingSlash": false}"#)
        #expect(try await action("/page/", site: removing, files: files) == .redirect(location: "/page", status: 301))
        #expect(try await action("/page", site: removing, files: files) == .file("page.html", status: 200))
        #expect(try await action("/docs/", site: removing, files: files) == .redirect(location: "/docs", status: 301))
    }

    // MARK: - Headers

    @Test("Every matching headers rule applies in order, a later value replacing an earlier one")
    func headers() async throws {
        let site = try site(
            """
            {"public": "p", "headers": [
              {"source": "**", "headers": [{"key": "X-Frame-Options", "value": "SAMEORIGIN"}, {"key": "X-Everywhere", "value": "1"}]},
              {"source": "**/*.@(js|css)", "headers": [{"key": "Cache-Control", "value": "max-age=31536000"}]},
              {"regex": "\\\\.css$", "headers": [{"key": "x-frame-options", "value": "DENY"}]}
            ], "rewrites": [{"source": "/api", "function": "api"}]}
            """)
        let files = ["app.js", "style.css", "index.html"]
        let css = try await resolve("/style.css", site: site, files: files)
        #expect(css.headers == [
            HostingHeader(name: "x-frame-options", value: "DENY"), HostingHeader(name: "X-Everywhere", value: "1"),
            HostingHeader(name: "Cache-Control", value: "max-age=31536000"),
        ])
        let html = try await resolve("/index.html", site: site, files: files)
        #expect(html.header("cache-control") == "max-age=3600")
        #expect(html.header("X-Frame-Options") == "SAMEORIGIN")
        // A function's answer gets the owner's headers but no default caching.
        let api = try await resolve("/api", method: "POST", site: site, files: files)
        #expect(api.header("X-Everywhere") == "1")
        #expect(api.header("Cache-Control") == nil)
    }

    @Test("The 404 page gets the headers of the request's path and of /404.html")
    func notFoundHeaders() async throws {
        let site = try site(#"{"public": "p", "headers": [{"source": "/404.html", "headers": [{"key": "Cache-Control", "value": "no-store"}]}]}"#)
        let decision = try await resolve("/missing", site: site, files: ["404.html"])
        #expect(decision.action == .file("404.html", status: 404))
        #expect(decision.header("Cache-Control") == "no-store")
    }

    // MARK: - Files and paths

    @Test("Ignored files are not served, even when asked for by name")
    func ignoredFiles() async throws {
        let site = try site(#"{"public": ".", "ignore": ["firebase.json", "**/.*", "**/node_modules/**", "secret/**"]}"#)
        let files = ["firebase.json", ".env", "a/.git/config", "node_modules/x.js", "secret/key.txt", "index.html"]
        for path in ["/firebase.json", "/.env", "/a/.git/config", "/node_modules/x.js", "/secret/key.txt"] {
            #expect(try await action(path, site: site, files: files) == .notFound, "\(path)")
        }
        #expect(try await action("/index.html", site: site, files: files) == .file("index.html", status: 200))
    }

    @Test("Unsafe paths are bad requests; encoded names are served decoded")
    func paths() async throws {
        let site = try site(#"{"public": "p", "rewrites": [{"source": "**", "destination": "/index.html"}]}"#)
        let files = ["index.html", "café.html"]
        #expect(try await action("/a%2Fb", site: site, files: files) == .badRequest)
        #expect(try await action("/../etc/passwd", site: site, files: files) == .badRequest)
        #expect(try await action("/a%00", site: site, files: files) == .badRequest)
        #expect(try await action("/caf%C3%A9.html", site: site, files: files) == .file("café.html", status: 200))
        #expect(try await action("//index.html", site: site, files: files) == .file("index.html", status: 200))
    }

    @Test("Files are looked up through the lookup, which may fail")
    func lookupFailure() async throws {
        struct Broken: HostingFileLookup {
            struct Failure: Error {}
            func isFile(_ path: String) async throws -> Bool { throw Failure() }
        }
        let site = try site(#"{"public": "p"}"#)
        await #expect(throws: Broken.Failure.self) {
            try await HostingResolver(site: site).resolve(HostingRequest(path: "/x"), files: Broken())
        }
    }
}
