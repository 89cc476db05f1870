import Testing

@testable import HearthHosting

@Suite("Request paths made safe to match and look up")
struct HostingPathTests {
    @Test("Percent-decoded once, slashes collapsed, dot segments resolved, trailing slash kept")
    func normalizes() {
        #expect(HostingPath.normalize("/caf%C3%A9/") == "/café/")
        #expect(HostingPath.normalize("/a%2520b") == "/a%20b")
        #expect(HostingPath.normalize("//a///b") == "/a/b")
        #expect(HostingPath.normalize("/a/./b/../c") == "/a/c")
        #expect(HostingPath.normalize("/a/..") == "/")
        #expect(HostingPath.normalize("/") == "/")
        #expect(HostingPath.normalize("/a/b/") == "/a/b/")
    }

    @Test("Encoded slashes, NUL, bad escapes, bad UTF-8 and escaping the root are refused")
    func refuses() {
        #expect(HostingPath.normalize("/a%2Fb") == nil)
        #expect(HostingPath.normalize("/a%2fb") == nil)
        #expect(HostingPath.normalize("/a%5Cb") == nil)
        #expect(HostingPath.normalize("/a%00b") == nil)
        #expect(HostingPath.normalize("/a%zz") == nil)
        #expect(HostingPath.normalize("/a%4") == nil)
        #expect(HostingPath.normalize("/%FF") == nil)
        #expect(HostingPath.normalize("/../etc/passwd") == nil)
        #expect(HostingPath.normalize("/a/../../etc/passwd") == nil)
        #expect(HostingPath.normalize("/%2E%2E/etc/passwd") == nil)
        #expect(HostingPath.normalize("relative") == nil)
        #expect(HostingPath.normalize("/" + String(repeating: "a", count: HostingPath.maxLength)) == nil)
    }

    @Test("isInside: the root itself and what is under it, nothing beside or above it")
    func inside() {
        #expect(HostingPath.isInside("/srv/site/index.html", root: "/srv/site"))
        #expect(HostingPath.isInside("/srv/site", root: "/srv/site/"))
        #expect(HostingPath.isInside("/srv/site/a/b", root: "/"))
        #expect(!HostingPath.isInside("/srv/site-other/x", root: "/srv/site"))
        #expect(!HostingPath.isInside("/srv/x", root: "/srv/site"))
        #expect(!HostingPath.isInside("/srv/site/../x", root: "/srv/site"))
        #expect(!HostingPath.isInside("srv/site/x", root: "/srv/site"))
    }
}
