import Foundation
import Testing

@testable import HearthHosting

@Suite("Regex sources: RE2 syntax, run by ICU under a step budget")
struct HostingRegexTests {
    @Test("A regex is searched for in the path unless anchored")
    func search() throws {
        let images = try HostingRegex(#".+/\w+\.(jpg|jpeg|gif|png)$"#)
        #expect(images.matches("/assets/photo.jpg"))
        #expect(!images.matches("/assets/photo.jpg.txt"))
        #expect(try HostingRegex("blog").matches("/my/blog/post"))
        #expect(!(try HostingRegex("^/blog")).matches("/my/blog/post"))
    }

    @Test("Numbered and named groups are captured; RE2's (?P<name>) is accepted")
    func groups() throws {
        let numbered = try HostingRegex(#"^/users/(\d+)/profile$"#)
        #expect(numbered.captures(in: "/users/42/profile") == ["0": "/users/42/profile", "1": "42"])
        let named = try HostingRegex(#"^/blog/(?P<post>.+)$"#)
        #expect(named.groupNames == ["post"])
        #expect(named.captures(in: "/blog/a/b")?["post"] == "a/b")
        let icuNamed = try HostingRegex(#"^/x/(?<rest>.*)$"#)
        #expect(icuNamed.captures(in: "/x/yz")?["rest"] == "yz")
        // A group that took no part is left out.
        #expect(try HostingRegex("^/a(b)?$").captures(in: "/a") == ["0": "/a"])
    }

    @Test("What RE2 refuses is refused: backreferences, lookaround, atomic groups, possessive quantifiers")
    func refused() {
        for pattern in [#"(a)\1"#, #"(?<x>a)\k<x>"#, "a(?=b)", "a(?!b)", "(?<=a)b", "(?<!a)b", "(?>a+)b", "a++", "a*+", "a?+", "a{2}+"] {
            #expect(throws: GlobPatternError.self, "\(pattern)") { try HostingRegex(pattern) }
        }
        // Inside a class these are ordinary characters.
        #expect((try? HostingRegex("[+?*]+")) != nil)
        #expect((try? HostingRegex(#"[\1]"#)) != nil)
    }

    @Test("An invalid expression is refused")
    func invalid() {
        #expect(throws: GlobPatternError.self) { try HostingRegex("(unclosed") }
        #expect(throws: GlobPatternError.self) { try HostingRegex("[a-") }
    }

    @Test("Catastrophic backtracking ends at the step budget as no match")
    func budget() throws {
        let evil = try HostingRegex(#"^/(\w+\s?)*$"#)
        let path = "/" + String(repeating: "a", count: 64) + "!"
        let start = ContinuousClock.now
        let (result, exhausted) = evil.firstMatch(in: path)
        #expect(result == nil)
        #expect(exhausted)
        #expect(ContinuousClock.now - start < .seconds(5))
        // Ordinary inputs still match.
        #expect(evil.matches("/aaaa"))
        #expect(!evil.firstMatch(in: "/aaaa!").exhausted)
    }
}
