import HearthClient
import HearthSocial
import Testing

/// The grouping the web app's unit tests check (Tests/WebUnit/notification-groups.test.mjs),
/// and a live list grouped.
@Suite("Notification groups")
struct NotificationGroupTests {
    static let t: Int64 = 1_800_000_000_000
    static let hour: Int64 = 60 * 60 * 1000

    static func note(
        _ id: String, _ type: ActivityNotification.Kind, _ from: String, _ name: String, _ post: String?, _ time: Int64, read: Bool = true
    ) -> ActivityNotification {
        ActivityNotification(id: id, type: type, from: from, name: name, post: post, timestamp: ServerTimestamp(milliseconds: time), read: read)
    }

    @Test func likesAndCommentsOnOnePostGroupInTheListsOrder() {
        let t = Self.t
        let groups = NotificationGroup.grouping([
            Self.note("l-carol", .like, "carol", "Carol", "p1", t + 50),
            Self.note("c-dan", .comment, "dan", "Dan", "p1", t + 40),
            Self.note("l-bob", .like, "bob", "Bob", "p1", t + 30),
            Self.note("f-eve", .follow, "eve", "Eve", nil, t + 20),
            Self.note("c-ann", .comment, "ann", "Ann", "p1", t + 10),
            Self.note("l-x", .like, "x", "Xena", "p2", t + 5),
        ])
        #expect(groups.map(\.id) == ["l-bob", "c-ann", "f-eve", "l-x"])
        #expect(groups.map { $0.members.map(\.id) } == [["l-carol", "l-bob"], ["c-dan", "c-ann"], ["f-eve"], ["l-x"]])
        #expect(groups.map { "\($0.who) \($0.what)" } == [
            "Carol and Bob liked your post", "Dan and Ann commented on your post", "Eve started following you", "Xena liked your post",
        ])
        #expect(groups.map(\.timestamp.milliseconds) == [t + 50, t + 40, t + 20, t + 5])
        #expect(groups.map(\.post) == ["p1", "p1", nil, "p2"])
    }

    @Test func moreThanThreeAreCountedAndOnePersonTwiceIsNamedOnce() {
        var notes = ["Carol", "Bob", "Dan", "Eve"].enumerated().map { index, name in
            Self.note("c\(index)", .comment, name.lowercased(), name, "p", Self.t - Int64(index))
        }
        notes.append(Self.note("c-again", .comment, "carol", "Carol", "p", Self.t - 10))
        let groups = NotificationGroup.grouping(notes)
        #expect(groups.count == 1)
        #expect(groups.first?.who == "Carol, Bob and 2 others")
        #expect(groups.first?.members.count == 5)
        #expect(groups.first?.people.map(\.uid) == ["carol", "bob", "dan", "eve"])
    }

    @Test func aGroupIsUnreadWhenAnyMemberIsAndFollowsAreNeverGrouped() {
        let t = Self.t
        let groups = NotificationGroup.grouping([
            Self.note("a", .like, "a", "A", "p", t + 2), Self.note("b", .like, "b", "B", "p", t + 1, read: false),
            Self.note("c", .like, "c", "C", "q", t), Self.note("f1", .follow, "d", "D", nil, t - 1), Self.note("f2", .follow, "e", "E", nil, t - 2),
        ])
        #expect(groups.map(\.isUnread) == [true, false, false, false])
        #expect(groups.map(\.id) == ["b", "c", "f1", "f2"])
    }

    @Test func notificationsFurtherApartThanTheWindowAreSeparateNews() {
        let t = Self.t
        let notes = [
            Self.note("new", .like, "a", "A", "p", t), Self.note("hour", .like, "b", "B", "p", t - Self.hour),
            Self.note("old", .like, "c", "C", "p", t - NotificationGroup.window - 1),
        ]
        #expect(NotificationGroup.grouping(notes).map { $0.members.map(\.id) } == [["new", "hour"], ["old"]])
        #expect(NotificationGroup.grouping(notes, window: Self.hour - 1).map { $0.members.map(\.id) } == [["new"], ["hour"], ["old"]])
    }

    @Test func aNewerMemberJoiningKeepsTheGroupsID() {
        let before = NotificationGroup.grouping([Self.note("b", .like, "b", "B", "p", Self.t)])
        let after = NotificationGroup.grouping([Self.note("c", .like, "c", "C", "p", Self.t + 1), Self.note("b", .like, "b", "B", "p", Self.t)])
        #expect(before.map(\.id) == ["b"])
        #expect(after.map(\.id) == ["b"])
        #expect(after.first?.who == "C and B")
    }

    @Test func mentionsAboutOnePostGroupAndAMissingNameReadsSomeone() {
        let groups = NotificationGroup.grouping([
            Self.note("m1", .mention, "a", "Ann", "p", Self.t + 1), Self.note("m2", .mention, "b", "", "p", Self.t),
        ])
        #expect(groups.map { "\($0.who) \($0.what)" } == ["Ann and Someone mentioned you"])
    }
}

@Suite("Notification list, grouped") @MainActor
struct GroupedNotificationListTests {
    @Test func likesOnOnePostAreOneEntryThatStaysWhenMoreJoin() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let list = NotificationListViewModel(client: ann)
            list.start()
            var ids: [String] = []
            for (index, name) in ["Bob", "Carol", "Dan"].enumerated() {
                let person = try await harness.user(name)
                let detail = PostDetailViewModel(client: person, postID: post.id)
                detail.start()
                await eventually { detail.post != nil }
                await detail.toggleLike()
                await eventually("\(name)'s like") { list.notifications.count == index + 1 }
                ids.append(try #require(list.groups.first?.id))
            }
            #expect(list.groups.count == 1)
            #expect(list.groups.first.map { "\($0.who) \($0.what)" } == "Dan, Carol and Bob liked your post")
            #expect(Set(ids).count == 1, "the entry keeps its identity as people join it")
            #expect(list.groups.first?.isUnread == true)
            await list.markAllRead()
            await eventually("read") { list.groups.first?.isUnread == false }
        }
    }
}
