import Foundation
import HearthTesting
import Testing

/// Every rule of FriendlyPix's real `database.rules.json`, enforced by a real server: for each
/// `.read`, `.write`, `.validate` and `.indexOn`, a request it allows and one it denies, sent
/// by the users the rule is about. (A constant `true` or `false` rule has one side only; its
/// test shows that side and the boundary of what it grants.)
@Suite("FriendlyPix rules, rule by rule")
struct FriendlyPixRulesTests {
    typealias Scene = RulesScene
    static let file = "friendlypix-web-database-rules.json"

    /// Alice's post p1 (with Bob's comment and like), as FriendlyPix stores them; Dave is
    /// blocked by Alice.
    static let seed = """
        {"posts": {"p1": {"author": {"uid": "alice", "full_name": "Alice"}, "text": "hello #sun",
                          "timestamp": 1, "client": "web"}},
         "people": {"alice": {"full_name": "Alice", "posts": {"p1": true},
                              "_search_index": {"full_name": "alice", "reversed_full_name": "ecila"}},
                    "bob": {"full_name": "Bob", "_search_index": {"full_name": "bob", "reversed_full_name": "bob"}}},
         "comments": {"p1": {"c1": {"author": {"uid": "bob", "full_name": "Bob"}, "text": "nice", "timestamp": 2}}},
         "likes": {"p1": {"bob": 3}},
         "feed": {"alice": {"p1": true}},
         "hashtags": {"sun": {"p1": true}},
         "admins": {"root": {"email": "root@example.com"}},
         "blocking": {"alice": {"dave": true}},
         "blocked": {"dave": {"alice": true}}}
        """

    static func with(_ body: (Scene) async throws -> Void) async throws {
        try await Scene.with(file, seed: seed, body)
    }

    /// A post as the web client writes it, by `uid` named `name`, with `extra` fields.
    static func post(_ uid: String, _ name: String, text: String = "a post", extra: String = "") -> String {
        #"{"author": {"uid": "\#(uid)", "full_name": "\#(name)"}, "text": "\#(text)", "timestamp": {".sv": "timestamp"}, "client": "web"\#(extra)}"#
    }

    /// A comment by `uid` named `name`, with `extra` fields.
    static func comment(_ uid: String, _ name: String, text: String = "nice", extra: String = "", authorExtra: String = "") -> String {
        #"{"author": {"uid": "\#(uid)", "full_name": "\#(name)"\#(authorExtra)}, "text": "\#(text)", "timestamp": {".sv": "timestamp"}\#(extra)}"#
    }

    static let now = #"{".sv": "timestamp"}"#

    // MARK: - Root and admins

    @Test func rootReadAndWriteNeedTheAdminClaim() async throws {
        try await Self.with { scene in
            // ".read": "auth.token.admin === true"
            try await scene.readable("/", as: Scene.adminClaim)
            try await scene.unreadable("/", as: Scene.alice)
            // ".write": "auth.token.admin === true": it cascades over hashtags' ".write": false.
            try await scene.allowed("PUT", "/hashtags/sun/p9", "true", as: Scene.adminClaim)
            try await scene.denied("PUT", "/hashtags/sun/p8", "true", as: Scene.alice)
        }
    }

    @Test func rootOtherChildrenFailValidationEvenForAnAdminClaim() async throws {
        try await Self.with { scene in
            // "$other": {".validate": false}: .validate binds everyone rules bind…
            try await scene.denied("PUT", "/junk", "1", as: Scene.adminClaim)
            // …but not the admin credential, which rules do not bind at all.
            try await scene.allowed("PUT", "/junk", "1", as: Scene.adminCredential)
        }
    }

    @Test func adminsListIsClosedToUsers() async throws {
        try await Self.with { scene in
            // admins ".read": "false" and ".write": "false": only the root's admin grant reaches it.
            try await scene.unreadable("/admins", as: Scene.alice)
            try await scene.readable("/admins", as: Scene.adminClaim)
            try await scene.denied("PUT", "/admins/alice/email", #""alice@example.com""#, as: Scene.alice)
            try await scene.allowed("PUT", "/admins/carol/email", #""carol@example.com""#, as: Scene.adminClaim)
        }
    }

    @Test func adminEmailsAreStrings() async throws {
        try await Self.with { scene in
            // admins/$index/email ".validate": "newData.isString()"
            try await scene.allowed("PUT", "/admins/x/email", #""x@example.com""#, as: Scene.adminClaim)
            try await scene.denied("PUT", "/admins/y/email", "5", as: Scene.adminClaim)
        }
    }

    // MARK: - Feed

    @Test func aFeedIsReadAndWrittenOnlyByItsOwner() async throws {
        try await Self.with { scene in
            // feed/$uid ".read": "auth.uid === $uid"
            let feed = try await scene.readable("/feed/alice", as: Scene.alice) as? [String: Any]
            #expect(feed?["p1"] as? Bool == true)
            try await scene.unreadable("/feed/alice", as: Scene.bob)
            // feed/$uid ".write": "auth.uid === $uid"
            try await scene.allowed("PUT", "/feed/bob/p1", "true", as: Scene.bob)
            try await scene.denied("PUT", "/feed/alice/p1", "null", as: Scene.bob)
        }
    }

    @Test func aFeedEntryIsTrueAndNamesAnExistingPost() async throws {
        try await Self.with { scene in
            // feed/$uid/$postId ".validate": "newData.val() === true && …child('posts').child($postId).exists()"
            try await scene.allowed("PUT", "/feed/carol/p1", "true", as: Scene.carol)
            try await scene.denied("PUT", "/feed/carol/p9", "true", as: Scene.carol)
            try await scene.denied("PUT", "/feed/carol/p1", #""yes""#, as: Scene.carol)
        }
    }

    // MARK: - Posts

    @Test func publicListsAreReadableByAnyone() async throws {
        try await Self.with { scene in
            // ".read": true on posts, comments, hashtags, likes, followers and people…
            for path in ["/posts", "/comments/p1", "/hashtags", "/likes/p1", "/followers", "/people/bob"] {
                try await scene.readable(path, as: Scene.signedOut)
            }
            // …grants those lists only, not the root above them nor private siblings.
            try await scene.unreadable("/", as: Scene.signedOut)
            try await scene.unreadable("/feed/alice", as: Scene.signedOut)
        }
    }

    @Test func postsAreIndexedByAuthorAndTimestamp() async throws {
        try await Self.with { scene in
            // posts ".indexOn": ["author/uid", "timestamp"]
            let mine = try await scene.readable("/posts", query: #"?orderBy=%22author/uid%22&equalTo=%22alice%22"#, as: Scene.bob)
            #expect((mine as? [String: Any])?.keys.sorted() == ["p1"])
            try await scene.readable("/posts", query: #"?orderBy=%22timestamp%22&limitToLast=10"#, as: Scene.bob)
            try await scene.unindexed("/posts", orderBy: "text", as: Scene.bob)
        }
    }

    @Test func anyoneMayPostButOnlyTheAuthorMayEditOrDelete() async throws {
        try await Self.with { scene in
            // posts/$postId ".write": "!data.exists() || data.exists() && auth.uid === data.child('author').child('uid').val()"
            try await scene.allowed("PUT", "/posts/p2", Self.post("bob", "Bob"), as: Scene.bob)
            try await scene.denied("PUT", "/posts/p1/text", #""taken over""#, as: Scene.bob)
            try await scene.denied("DELETE", "/posts/p1", as: Scene.bob)
            try await scene.allowed("PUT", "/posts/p1/text", #""edited""#, as: Scene.alice)
            try await scene.allowed("DELETE", "/posts/p1", as: Scene.alice)
        }
    }

    @Test func aPostNeedsAnAuthorAndText() async throws {
        try await Self.with { scene in
            // posts/$postId ".validate": "newData.child('author').child('uid').exists() && newData.child('text').exists()"
            try await scene.allowed("PUT", "/posts/p2", Self.post("bob", "Bob"), as: Scene.bob)
            try await scene.denied(
                "PUT", "/posts/p3", #"{"author": {"uid": "bob", "full_name": "Bob"}, "timestamp": {".sv": "timestamp"}}"#, as: Scene.bob)
            try await scene.denied("PUT", "/posts/p4", #"{"text": "who wrote this?"}"#, as: Scene.bob)
        }
    }

    @Test func postTextIsAStringUnder2000Characters() async throws {
        try await Self.with { scene in
            // text ".validate": "newData.isString() && newData.val().length < 2000"
            try await scene.allowed("PUT", "/posts/p2", Self.post("bob", "Bob", text: String(repeating: "x", count: 1999)), as: Scene.bob)
            try await scene.denied("PUT", "/posts/p3", Self.post("bob", "Bob", text: String(repeating: "x", count: 2000)), as: Scene.bob)
            try await scene.denied("PUT", "/posts/p1/text", "42", as: Scene.alice)
        }
    }

    @Test func postTimestampsAreServerTime() async throws {
        try await Self.with { scene in
            // timestamp ".validate": "newData.val() === now"
            try await scene.allowed("PUT", "/posts/p1/timestamp", Self.now, as: Scene.alice)
            try await scene.denied("PUT", "/posts/p1/timestamp", "1700000000000", as: Scene.alice)
        }
    }

    @Test func postClientIsAKnownPlatform() async throws {
        try await Self.with { scene in
            // client ".validate": "newData.val() === 'web' || … 'ios' || … 'android'"
            try await scene.allowed("PUT", "/posts/p1/client", #""ios""#, as: Scene.alice)
            try await scene.allowed("PUT", "/posts/p1/client", #""android""#, as: Scene.alice)
            try await scene.denied("PUT", "/posts/p1/client", #""tv""#, as: Scene.alice)
        }
    }

    @Test func onlyTheAdminCredentialSanitizesOrModeratesPosts() async throws {
        try await Self.with { scene in
            // sanitized and moderated ".validate": "false"
            try await scene.denied("PUT", "/posts/p1/sanitized", "true", as: Scene.alice)
            try await scene.denied("PUT", "/posts/p1/moderated", "true", as: Scene.alice)
            try await scene.denied("PUT", "/posts/p2", Self.post("bob", "Bob", extra: #", "moderated": true"#), as: Scene.bob)
            try await scene.allowed("PUT", "/posts/p1/sanitized", "true", as: Scene.adminCredential)
            try await scene.allowed("PUT", "/posts/p1/moderated", "true", as: Scene.adminCredential)
        }
    }

    @Test func nobodyPostsAsSomeoneElse() async throws {
        try await Self.with { scene in
            // author/uid ".validate": "auth.uid === newData.val()"
            try await scene.allowed("PUT", "/posts/p2", Self.post("bob", "Bob"), as: Scene.bob)
            try await scene.denied("PUT", "/posts/p3", Self.post("alice", "Alice"), as: Scene.bob)
        }
    }

    @Test func thePostersNameIsTheirOwnOrAnonymous() async throws {
        try await Self.with { scene in
            // author/full_name ".validate": "auth.token.name === newData.val() || (auth.token.name === null && newData.val() === 'Anonymous')"
            try await scene.allowed("PUT", "/posts/p2", Self.post("bob", "Bob"), as: Scene.bob)
            try await scene.denied("PUT", "/posts/p3", Self.post("bob", "Robert"), as: Scene.bob)
            try await scene.allowed("PUT", "/posts/p4", Self.post("anon", "Anonymous"), as: Scene.nameless)
            try await scene.denied("PUT", "/posts/p5", Self.post("anon", "Bob"), as: Scene.nameless)
            // Someone with a name cannot hide behind 'Anonymous'.
            try await scene.denied("PUT", "/posts/p6", Self.post("bob", "Anonymous"), as: Scene.bob)
        }
    }

    @Test func aPostersPictureIsFreeButDoesNotExcuseTheRest() async throws {
        try await Self.with { scene in
            // author/profile_picture ".validate": "true"
            try await scene.allowed("PUT", "/posts/p1/author/profile_picture", #""https://example.com/a.png""#, as: Scene.alice)
            try await scene.allowed("PUT", "/posts/p1/author/profile_picture", "7", as: Scene.alice)
            // The constant rule says nothing about the picture's owner: the post's .write still does.
            try await scene.denied("PUT", "/posts/p1/author/profile_picture", #""https://example.com/b.png""#, as: Scene.bob)
        }
    }

    // MARK: - Comments

    @Test func commentsAreIndexedByAuthor() async throws {
        try await Self.with { scene in
            // comments/$postId ".indexOn": "author/uid"
            let bobs = try await scene.readable("/comments/p1", query: #"?orderBy=%22author/uid%22&equalTo=%22bob%22"#, as: Scene.carol)
            #expect((bobs as? [String: Any])?.keys.sorted() == ["c1"])
            try await scene.unindexed("/comments/p1", orderBy: "text", as: Scene.carol)
        }
    }

    @Test func thePostsAuthorDeletesItsCommentsOnlyWithThePost() async throws {
        try await Self.with { scene in
            // comments/$postId ".write": "!newData.exists() && auth.uid === <post author> && !<post exists afterwards>"
            try await scene.denied("DELETE", "/comments/p1", as: Scene.alice)
            try await scene.denied("PATCH", "/", #"{"posts/p1": null, "comments/p1": null}"#, as: Scene.bob)
            try await scene.allowed("PATCH", "/", #"{"posts/p1": null, "comments/p1": null, "likes/p1": null}"#, as: Scene.alice)
            #expect(try await scene.stored("/comments/p1") == "null")
        }
    }

    @Test func commentsBelongToAnExistingPost() async throws {
        try await Self.with { scene in
            // comments/$postId ".validate": "root.child('posts').child($postId).exists()"
            try await scene.allowed("PUT", "/comments/p1/c2", Self.comment("carol", "Carol"), as: Scene.carol)
            try await scene.denied("PUT", "/comments/p9/c2", Self.comment("carol", "Carol"), as: Scene.carol)
        }
    }

    @Test func commentersWriteTheirOwnCommentsUnlessBlocked() async throws {
        try await Self.with { scene in
            // comments/$postId/$commentId ".write": "(new || own) && blocked/<me>/<post author> !== true"
            try await scene.allowed("PUT", "/comments/p1/c2", Self.comment("carol", "Carol"), as: Scene.carol)
            try await scene.denied("PUT", "/comments/p1/c1/text", #""rewritten""#, as: Scene.carol)
            try await scene.allowed("PUT", "/comments/p1/c1/text", #""edited""#, as: Scene.bob)
            try await scene.allowed("DELETE", "/comments/p1/c1", as: Scene.bob)
            // Alice blocked Dave: he cannot comment on her post.
            try await scene.denied("PUT", "/comments/p1/c3", Self.comment("dave", "Dave"), as: Scene.dave)
            // Signed out, auth.uid is null: child(null) is an error, which counts as false.
            try await scene.denied("PUT", "/comments/p1/c4", Self.comment("carol", "Carol"), as: Scene.signedOut)
        }
    }

    @Test func commentTextIsAStringUnder2000Characters() async throws {
        try await Self.with { scene in
            // comments/…/text ".validate": "newData.isString() && newData.val().length < 2000"
            try await scene.allowed("PUT", "/comments/p1/c1/text", #""short""#, as: Scene.bob)
            try await scene.denied("PUT", "/comments/p1/c1/text", "\"\(String(repeating: "y", count: 2000))\"", as: Scene.bob)
            try await scene.denied("PUT", "/comments/p1/c1/text", "true", as: Scene.bob)
        }
    }

    @Test func onlyTheAdminCredentialSanitizesOrModeratesComments() async throws {
        try await Self.with { scene in
            // comments/…/sanitized and moderated ".validate": "false"
            try await scene.denied("PUT", "/comments/p1/c1/sanitized", "true", as: Scene.bob)
            try await scene.denied("PUT", "/comments/p1/c2", Self.comment("carol", "Carol", extra: #", "moderated": true"#), as: Scene.carol)
            try await scene.allowed("PUT", "/comments/p1/c1/sanitized", "true", as: Scene.adminCredential)
            try await scene.allowed("PUT", "/comments/p1/c1/moderated", "true", as: Scene.adminCredential)
        }
    }

    @Test func commentTimestampsAreServerTime() async throws {
        try await Self.with { scene in
            // comments/…/timestamp ".validate": "newData.val() === now"
            try await scene.allowed("PUT", "/comments/p1/c1/timestamp", Self.now, as: Scene.bob)
            try await scene.denied("PUT", "/comments/p1/c1/timestamp", "2", as: Scene.bob)
        }
    }

    @Test func commentersCommentAsThemselvesUnderTheirOwnName() async throws {
        try await Self.with { scene in
            // comments/…/author/uid ".validate": "auth.uid === newData.val()"
            try await scene.denied("PUT", "/comments/p1/c2", Self.comment("bob", "Bob"), as: Scene.carol)
            // comments/…/author/full_name: own name, or 'Anonymous' without one
            try await scene.denied("PUT", "/comments/p1/c2", Self.comment("carol", "Caroline"), as: Scene.carol)
            try await scene.allowed("PUT", "/comments/p1/c2", Self.comment("anon", "Anonymous"), as: Scene.nameless)
            try await scene.denied("PUT", "/comments/p1/c3", Self.comment("anon", "Carol"), as: Scene.nameless)
            // comments/…/author/profile_picture ".validate": "true"
            try await scene.allowed(
                "PUT", "/comments/p1/c4", Self.comment("carol", "Carol", authorExtra: #", "profile_picture": "https://example.com/c.png""#),
                as: Scene.carol)
        }
    }

    @Test func commentsHaveNoOtherFields() async throws {
        try await Self.with { scene in
            // comments/…/author/$other and comments/…/$other ".validate": false
            try await scene.denied(
                "PUT", "/comments/p1/c2", Self.comment("carol", "Carol", authorExtra: #", "email": "carol@example.com""#), as: Scene.carol)
            try await scene.denied("PUT", "/comments/p1/c2", Self.comment("carol", "Carol", extra: #", "stars": 100"#), as: Scene.carol)
            try await scene.allowed("PUT", "/comments/p1/c2", Self.comment("carol", "Carol"), as: Scene.carol)
        }
    }

    // MARK: - Hashtags and likes

    @Test func hashtagsAreWrittenOnlyByAdmins() async throws {
        try await Self.with { scene in
            // hashtags ".write": false (".read": true is in publicListsAreReadableByAnyone)
            try await scene.denied("PUT", "/hashtags/moon/p1", "true", as: Scene.alice)
            try await scene.allowed("PUT", "/hashtags/moon/p1", "true", as: Scene.adminCredential)
        }
    }

    @Test func thePostsAuthorDeletesItsLikesOnlyWithThePost() async throws {
        try await Self.with { scene in
            // likes/$postId ".write": like comments/$postId's
            try await scene.denied("DELETE", "/likes/p1", as: Scene.alice)
            try await scene.denied("PATCH", "/", #"{"posts/p1": null, "likes/p1": null}"#, as: Scene.bob)
            try await scene.allowed("PATCH", "/", #"{"posts/p1": null, "likes/p1": null, "comments/p1": null}"#, as: Scene.alice)
        }
    }

    @Test func likesBelongToAnExistingPost() async throws {
        try await Self.with { scene in
            // likes/$postId ".validate": "root.child('posts').child($postId).exists()"
            try await scene.allowed("PUT", "/likes/p1/carol", Self.now, as: Scene.carol)
            try await scene.denied("PUT", "/likes/p9/carol", Self.now, as: Scene.carol)
        }
    }

    @Test func usersLikeOnlyForThemselvesAndOnlyOnce() async throws {
        try await Self.with { scene in
            // likes/$postId/$uid ".write": "auth.uid === $uid"
            try await scene.allowed("PUT", "/likes/p1/carol", Self.now, as: Scene.carol)
            try await scene.denied("PUT", "/likes/p1/dave", Self.now, as: Scene.carol)
            // A like is one key per user: liking again replaces it, it never counts twice.
            try await scene.allowed("PUT", "/likes/p1/carol", Self.now, as: Scene.carol)
            let likes = try await scene.readable("/likes/p1", query: "?shallow=true", as: Scene.signedOut) as? [String: Any]
            #expect(likes?.keys.sorted() == ["bob", "carol"])
            try await scene.allowed("DELETE", "/likes/p1/bob", as: Scene.bob)
        }
    }

    @Test func aLikeIsStampedWithServerTime() async throws {
        try await Self.with { scene in
            // likes/$postId/$uid ".validate": "newData.val() === now"
            try await scene.allowed("PUT", "/likes/p1/carol", Self.now, as: Scene.carol)
            try await scene.denied("PUT", "/likes/p1/carol", "true", as: Scene.carol)
        }
    }

    // MARK: - Followers and people

    @Test func usersFollowOnlyAsThemselvesAndBothSidesAtOnce() async throws {
        try await Self.with { scene in
            // followers/$followedUid/$followerUid ".write": "auth.uid === $followerUid"
            try await scene.allowed("PATCH", "/", #"{"followers/alice/bob": true, "people/bob/following/alice": true}"#, as: Scene.bob)
            try await scene.denied("PATCH", "/", #"{"followers/alice/carol": true, "people/carol/following/alice": true}"#, as: Scene.bob)
            // ".validate": "newData.val() === true && …people/$followerUid/following/$followedUid exists"
            try await scene.denied("PUT", "/followers/alice/carol", "true", as: Scene.carol)
            try await scene.denied("PATCH", "/", #"{"followers/alice/carol": "yes", "people/carol/following/alice": true}"#, as: Scene.carol)
        }
    }

    @Test func peopleAreIndexedForSearch() async throws {
        try await Self.with { scene in
            // people ".indexOn": ["_search_index/full_name", "_search_index/reversed_full_name"]
            let found = try await scene.readable(
                "/people", query: #"?orderBy=%22_search_index/full_name%22&startAt=%22al%22&endAt=%22al%EF%A3%BF%22"#, as: Scene.carol)
            #expect((found as? [String: Any])?.keys.sorted() == ["alice"])
            try await scene.readable("/people", query: #"?orderBy=%22_search_index/reversed_full_name%22&limitToFirst=5"#, as: Scene.carol)
            try await scene.unindexed("/people", orderBy: "full_name", as: Scene.carol)
        }
    }

    @Test func aProfileIsWrittenOnlyByItsOwner() async throws {
        try await Self.with { scene in
            // people/$uid ".write": "auth.uid === $uid"
            try await scene.allowed("PATCH", "/people/carol", #"{"full_name": "Carol"}"#, as: Scene.carol)
            try await scene.denied("PATCH", "/people/alice", #"{"full_name": "Carol"}"#, as: Scene.carol)
        }
    }

    @Test func aProfileNameIsTheUsersOwn() async throws {
        try await Self.with { scene in
            // people/$uid/full_name ".validate": own name claim, or 'Anonymous' without one
            try await scene.allowed("PUT", "/people/carol/full_name", #""Carol""#, as: Scene.carol)
            try await scene.denied("PUT", "/people/carol/full_name", #""Queen Carol""#, as: Scene.carol)
            try await scene.allowed("PUT", "/people/anon/full_name", #""Anonymous""#, as: Scene.nameless)
            try await scene.denied("PUT", "/people/anon/full_name", #""Alice""#, as: Scene.nameless)
        }
    }

    @Test func aProfilePictureIsFreeForItsOwner() async throws {
        try await Self.with { scene in
            // people/$uid/profile_picture ".validate": "true"
            try await scene.allowed("PUT", "/people/carol/profile_picture", #""https://example.com/c.png""#, as: Scene.carol)
            try await scene.denied("PUT", "/people/alice/profile_picture", #""https://example.com/c.png""#, as: Scene.carol)
        }
    }

    @Test func aProfileListsOnlyExistingPosts() async throws {
        try await Self.with { scene in
            // people/$uid/posts/$postId ".validate": "newData.val() === true && posts/$postId exists"
            try await scene.allowed("PUT", "/people/alice/posts/p1", "true", as: Scene.alice)
            try await scene.denied("PUT", "/people/alice/posts/p9", "true", as: Scene.alice)
            try await scene.denied("PUT", "/people/alice/posts/p1", "1", as: Scene.alice)
        }
    }

    @Test func searchIndexEntriesAreStrings() async throws {
        try await Self.with { scene in
            // people/$uid/_search_index/full_name and reversed_full_name ".validate": "newData.isString()"
            try await scene.allowed(
                "PUT", "/people/carol/_search_index", #"{"full_name": "carol", "reversed_full_name": "lorac"}"#, as: Scene.carol)
            try await scene.denied("PUT", "/people/carol/_search_index/full_name", "1", as: Scene.carol)
            try await scene.denied("PUT", "/people/carol/_search_index/reversed_full_name", "false", as: Scene.carol)
        }
    }

    @Test func followingMatchesTheFollowersList() async throws {
        try await Self.with { scene in
            // people/$uid/following/$followedUid ".validate": "followers/$followedUid/$uid === true"
            try await scene.denied("PUT", "/people/carol/following/alice", "true", as: Scene.carol)
            try await scene.allowed("PATCH", "/", #"{"people/carol/following/alice": true, "followers/alice/carol": true}"#, as: Scene.carol)
        }
    }

    // MARK: - Blocking

    @Test func blockingIsWrittenByTheBlockerOnBothSides() async throws {
        try await Self.with { scene in
            // blocking/$blockerUid ".write" and blocked/$blockedUid/$blockerUid ".write": "auth.uid === <blocker>"
            try await scene.allowed("PATCH", "/", #"{"blocking/alice/bob": true, "blocked/bob/alice": true}"#, as: Scene.alice)
            try await scene.denied("PATCH", "/", #"{"blocking/alice/carol": true, "blocked/carol/alice": true}"#, as: Scene.bob)
            try await scene.denied("PUT", "/blocked/carol/alice", "true", as: Scene.bob)
        }
    }

    @Test func blockingEntriesAreTrueAndInSync() async throws {
        try await Self.with { scene in
            // blocking/$blockerUid/$blockedUid ".validate": "newData.val() === true && blocked/$blockedUid/$blockerUid exists"
            try await scene.denied("PUT", "/blocking/alice/bob", "true", as: Scene.alice)
            try await scene.denied("PATCH", "/", #"{"blocking/alice/bob": "yes", "blocked/bob/alice": true}"#, as: Scene.alice)
            // blocked/$blockedUid/$blockerUid ".validate": "newData.val() === true && blocking/$blockerUid/$blockedUid exists"
            try await scene.denied("PUT", "/blocked/bob/alice", "true", as: Scene.alice)
            try await scene.denied("PATCH", "/", #"{"blocking/alice/bob": true, "blocked/bob/alice": 1}"#, as: Scene.alice)
            try await scene.allowed("PATCH", "/", #"{"blocking/alice/bob": true, "blocked/bob/alice": true}"#, as: Scene.alice)
        }
    }

    @Test func theBlockerAndTheBlockedMayReadTheirEntries() async throws {
        try await Self.with { scene in
            // blocking/$blockerUid ".read": "auth.uid === $blockerUid"
            try await scene.readable("/blocking/alice", as: Scene.alice)
            try await scene.unreadable("/blocking/alice", as: Scene.carol)
            // blocking/$blockerUid/$blockedUid ".read": "auth.uid === $blockedUid"
            try await scene.readable("/blocking/alice/dave", as: Scene.dave)
            try await scene.unreadable("/blocking/alice/dave", as: Scene.carol)
            // blocked/$blockedUid ".read": "auth.uid === $blockedUid"
            try await scene.readable("/blocked/dave", as: Scene.dave)
            try await scene.unreadable("/blocked/dave", as: Scene.carol)
            // blocked/$blockedUid/$blockerUid ".read": "auth.uid === $blockerUid"
            try await scene.readable("/blocked/dave/alice", as: Scene.alice)
            try await scene.unreadable("/blocked/dave/alice", as: Scene.carol)
            // Rules are not filters: Dave may read his entry, not the list it is in.
            try await scene.unreadable("/blocking", as: Scene.dave)
        }
    }

    // MARK: - Flags and privacy

    @Test func postFlagsAreOnePerUserOnExistingPosts() async throws {
        try await Self.with { scene in
            // postFlags/$postId ".validate": "root.child('posts').child($postId).exists()"
            try await scene.allowed("PUT", "/postFlags/p1/carol", "true", as: Scene.carol)
            try await scene.denied("PUT", "/postFlags/p9/carol", "true", as: Scene.carol)
            // postFlags/$postId/$uid ".write": "auth.uid === $uid"
            try await scene.denied("PUT", "/postFlags/p1/bob", "true", as: Scene.carol)
            // postFlags/$postId/$uid ".validate": "newData.val() === true"
            try await scene.denied("PUT", "/postFlags/p1/carol", #""spam""#, as: Scene.carol)
            // postFlags/$postId/$uid ".read": "auth.uid === $uid"
            try await scene.readable("/postFlags/p1/carol", as: Scene.carol)
            try await scene.unreadable("/postFlags/p1/carol", as: Scene.alice)
        }
    }

    @Test func commentFlagsAreOnePerUserOnExistingComments() async throws {
        try await Self.with { scene in
            // commentFlags/$postId ".validate": post exists; commentFlags/$postId/$commentId ".validate": comment exists
            try await scene.allowed("PUT", "/commentFlags/p1/c1/carol", "true", as: Scene.carol)
            try await scene.denied("PUT", "/commentFlags/p9/c1/carol", "true", as: Scene.carol)
            try await scene.denied("PUT", "/commentFlags/p1/c9/carol", "true", as: Scene.carol)
            // commentFlags/…/$uid ".write": "auth.uid === $uid" and ".validate": "newData.val() === true"
            try await scene.denied("PUT", "/commentFlags/p1/c1/bob", "true", as: Scene.carol)
            try await scene.denied("PUT", "/commentFlags/p1/c1/carol", "1", as: Scene.carol)
            // commentFlags/…/$uid ".read": "auth.uid === $uid"
            try await scene.readable("/commentFlags/p1/c1/carol", as: Scene.carol)
            try await scene.unreadable("/commentFlags/p1/c1/carol", as: Scene.bob)
        }
    }

    @Test func privacySettingsAreTheOwnersAndBooleans() async throws {
        try await Self.with { scene in
            // privacy/$uid ".write" and ".read": "auth.uid === $uid"
            try await scene.allowed(
                "PUT", "/privacy/alice", #"{"data_processing": true, "content": false, "social": true}"#, as: Scene.alice)
            try await scene.denied("PUT", "/privacy/alice/social", "false", as: Scene.bob)
            try await scene.readable("/privacy/alice", as: Scene.alice)
            try await scene.unreadable("/privacy/alice", as: Scene.bob)
            // data_processing, content and social ".validate": "newData.isBoolean()"
            for field in ["data_processing", "content", "social"] {
                try await scene.denied("PUT", "/privacy/alice/\(field)", #""yes""#, as: Scene.alice)
            }
            // privacy/$uid/$other ".validate": "false"
            try await scene.denied("PUT", "/privacy/alice/ads", "true", as: Scene.alice)
        }
    }
}
