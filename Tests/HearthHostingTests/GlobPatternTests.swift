import Testing

@testable import HearthHosting

@Suite("Glob patterns as Firebase Hosting reads sources")
struct GlobPatternTests {
    private func glob(_ pattern: String, _ options: GlobPattern.Options = []) throws -> GlobPattern {
        try GlobPattern(pattern, options: options)
    }

    @Test("* matches within one segment, ** across segments")
    func starsAndGlobstars() throws {
        let star = try glob("/*.html")
        #expect(star.matches("/index.html"))
        #expect(!star.matches("/blog/index.html"))
        let deep = try glob("**/*.html")
        #expect(deep.matches("/index.html"))
        #expect(deep.matches("/a/b/c.html"))
        #expect(!deep.matches("/a/b/c.htm"))
        let everything = try glob("**")
        #expect(everything.matches("/"))
        #expect(everything.matches("/a"))
        #expect(everything.matches("/a/b/c"))
        let middle = try glob("/a/**/z")
        #expect(middle.matches("/a/z"))
        #expect(middle.matches("/a/b/c/z"))
        #expect(!middle.matches("/a/b/c/y"))
        // `**` inside a segment is a plain star.
        let inside = try glob("/a**b")
        #expect(inside.matches("/axyb"))
        #expect(!inside.matches("/ax/yb"))
    }

    @Test("? matches one character, never a slash")
    func questionMark() throws {
        let pattern = try glob("/file?.txt")
        #expect(pattern.matches("/file1.txt"))
        #expect(!pattern.matches("/file.txt"))
        #expect(!pattern.matches("/file12.txt"))
        #expect(!(try glob("/a?b")).matches("/a/b"))
    }

    @Test("A source without a leading slash is made absolute, and slashes are collapsed")
    func slasher() throws {
        #expect(try glob("foo.html").matches("/foo.html"))
        #expect(try glob("//foo//bar").matches("/foo/bar"))
        #expect(try glob("\\foo").matches("/foo"))
    }

    @Test("A trailing slash on the path matches a pattern without one")
    func trailingSlash() throws {
        #expect(try glob("/about").matches("/about/"))
        #expect(!(try glob("/about/")).matches("/about"))
    }

    @Test("Braces expand, nested and as numeric ranges")
    func braces() throws {
        let pattern = try glob("/{blog,news}/*.{html,htm}")
        #expect(pattern.matches("/blog/a.html"))
        #expect(pattern.matches("/news/a.htm"))
        #expect(!pattern.matches("/other/a.html"))
        let nested = try glob("/{a,{b,c}d}")
        #expect(nested.matches("/a") && nested.matches("/bd") && nested.matches("/cd"))
        #expect(!nested.matches("/b"))
        let range = try glob("/v{1..3}/x")
        #expect(range.matches("/v2/x"))
        #expect(!range.matches("/v4/x"))
        // Without a comma or range, braces are literal (as in minimatch).
        #expect(try glob("/{a}").matches("/{a}"))
    }

    @Test("The extglobs @(…) and ?(…) of Firebase's examples")
    func extglobs() throws {
        let fonts = try glob("**/*.@(eot|otf|ttf|ttc|woff|font.css)")
        #expect(fonts.matches("/fonts/a.woff"))
        #expect(fonts.matches("/a.font.css"))
        #expect(!fonts.matches("/a.css"))
        let optional = try glob("/page?(.html)")
        #expect(optional.matches("/page"))
        #expect(optional.matches("/page.html"))
        #expect(!optional.matches("/page.htm"))
    }

    @Test("Character classes: ranges, negation, POSIX names, never a slash")
    func classes() throws {
        let pattern = try glob("/[a-c]x")
        #expect(pattern.matches("/bx"))
        #expect(!pattern.matches("/dx"))
        #expect(try glob("/[!a-c]x").matches("/dx"))
        #expect(!(try glob("/[^a-c]x")).matches("/ax"))
        #expect(try glob("/v[[:digit:]]").matches("/v7"))
        #expect(!(try glob("/v[[:digit:]]")).matches("/vx"))
        #expect(try glob("/[]]").matches("/]"))
        // An unclosed bracket is a literal.
        #expect(try glob("/[abc").matches("/[abc"))
    }

    @Test("Wildcards skip hidden names unless the pattern names the dot, or dot files are on")
    func dotFiles() throws {
        #expect(!(try glob("**")).matches("/.well-known/assetlinks.json"))
        #expect(!(try glob("/*")).matches("/.env"))
        #expect(try glob("/.*").matches("/.env"))
        #expect(try glob("/.well-known/**").matches("/.well-known/assetlinks.json"))
        #expect(try glob("**", [.dotFiles]).matches("/.well-known/assetlinks.json"))
    }

    @Test("Relative patterns with dot files, as the ignore list reads them")
    func ignoreList() throws {
        let hidden = try glob("**/.*", [.relative, .dotFiles])
        #expect(hidden.matches(".env"))
        #expect(hidden.matches("a/b/.DS_Store"))
        #expect(!hidden.matches("a/b/c.txt"))
        let modules = try glob("**/node_modules/**", [.relative, .dotFiles])
        #expect(modules.matches("node_modules/x/index.js"))
        #expect(modules.matches("app/node_modules/y.js"))
        let config = try glob("firebase.json", [.relative, .dotFiles])
        #expect(config.matches("firebase.json"))
        #expect(!config.matches("sub/firebase.json"))
        #expect(try glob("a\\*b", [.relative]).matches("a*b"))
        #expect(!(try glob("a\\*b", [.relative])).matches("axb"))
    }

    @Test("Capture segments, for redirect sources")
    func captures() throws {
        let one = try glob("/users/:id/profile", [.captures])
        #expect(one.captures(in: "/users/42/profile") == ["id": "42"])
        #expect(one.captures(in: "/users/42/other") == nil)
        #expect(one.captures(in: "/users//profile") == nil)
        let rest = try glob("/blog/:post*", [.captures])
        #expect(rest.captures(in: "/blog/2024/01/hello") == ["post": "2024/01/hello"])
        #expect(rest.captures(in: "/blog") == ["post": ""])
        let plus = try glob("/docs/:page+", [.captures])
        #expect(plus.captures(in: "/docs") == nil)
        #expect(plus.captures(in: "/docs/a/b") == ["page": "a/b"])
        #expect(one.captureNames == ["id"])
        // Without the option, `:id` is a literal segment.
        #expect(!(try glob("/users/:id")).matches("/users/42"))
        #expect(try glob("/users/:id").matches("/users/:id"))
    }

    @Test("Negations and the other extglobs are refused with a reason")
    func refused() throws {
        #expect(throws: GlobPatternError.self) { try GlobPattern("!**/*.html") }
        #expect(throws: GlobPatternError.self) { try GlobPattern("/*(a|b)") }
        #expect(throws: GlobPatternError.self) { try GlobPattern("/+(a|b)") }
        #expect(throws: GlobPatternError.self) { try GlobPattern("/a!(b)") }
        #expect(throws: GlobPatternError.self) { try GlobPattern("/[[:nothing:]]") }
        #expect(throws: GlobPatternError.self) { try GlobPattern("/{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}") }
    }

    @Test("A pattern made to backtrack still matches in a bounded number of steps")
    func noBlowUp() throws {
        let stars = try glob("/*a*a*a*a*a*a*a*a*b")
        let long = "/" + String(repeating: "a", count: 3000)
        #expect(!stars.matches(long))
        let globstars = try glob("/**/a/**/a/**/a/**/a/**/b")
        let deep = "/" + Array(repeating: "a", count: 400).joined(separator: "/")
        #expect(!globstars.matches(deep))
    }
}
