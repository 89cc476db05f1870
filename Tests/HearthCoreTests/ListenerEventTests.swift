@testable import HearthCore
import Testing

@Suite("Listener events")
struct ListenerEventTests {
    @Test func anUpdateAboveThatReplacesTheLocationIsAPutNotAnEmptyKeyedPatch() throws {
        let write = ResolvedWrite.update(path("/"), [
            .init(path: path("posts/p1"), value: .null),
            .init(path: path("feed/u/p1"), value: .null),
        ])
        #expect(write.event(forListenerAt: path("/posts/p1")) == .put(path: .root, data: .null))
        // Below the replaced location: the part of the value there.
        let replaced = ResolvedWrite.update(path("/"), [.init(path: path("posts"), value: try node(#"{"p1":1}"#))])
        #expect(replaced.event(forListenerAt: path("/posts/p1")) == .put(path: .root, data: .int(1)))
    }

    @Test func anUpdateAboveThatChangesChildrenIsAPatchOfThem() throws {
        let write = ResolvedWrite.update(path("/"), [
            .init(path: path("posts/p1/starCount"), value: .int(1)),
            .init(path: path("posts/p1/stars/u"), value: .bool(true)),
            .init(path: path("other"), value: .int(2)),
        ])
        #expect(write.event(forListenerAt: path("/posts/p1")) == .patch(path: .root, entries: [
            .init(path: path("starCount"), value: .int(1)), .init(path: path("stars/u"), value: .bool(true)),
        ]))
        #expect(write.event(forListenerAt: path("/elsewhere")) == nil)
    }
}
