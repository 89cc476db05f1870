import Foundation
import HearthTesting
import Testing

/// Every rule of the Firebase iOS database quickstart's real rules file, enforced by a real
/// server: for each rule, a request it allows and one it denies, sent by the users it is about.
@Suite("Quickstart rules, rule by rule")
struct QuickstartRulesTests {
    typealias Scene = RulesScene
    static let file = "quickstart-ios-database.rules.json"

    /// Alice's profile and post p1 with Bob's comment, as the quickstart app stores them.
    static let seed = """
        {"users": {"alice": {"username": "alice"}, "bob": {"username": "bob"}},
         "posts": {"p1": {"uid": "alice", "author": "alice", "title": "Hi", "body": "First", "starCount": 0}},
         "user-posts": {"alice": {"p1": {"uid": "alice", "author": "alice", "title": "Hi", "body": "First", "starCount": 0}}},
         "post-comments": {"p1": {"c1": {"uid": "bob", "author": "bob", "text": "Welcome"}}}}
        """

    static func with(_ body: (Scene) async throws -> Void) async throws {
        try await Scene.with(file, seed: seed, body)
    }

    static func post(_ uid: String, title: String = "A title") -> String {
        #"{"uid": "\#(uid)", "author": "\#(uid)", "title": "\#(title)", "body": "Text", "starCount": 0}"#
    }

    @Test func aProfileIsReadAndWrittenOnlyByItsOwner() async throws {
        try await Self.with { scene in
            // users/$UID ".read": "auth.uid == $UID"
            try await scene.readable("/users/alice", as: Scene.alice)
            try await scene.unreadable("/users/alice", as: Scene.bob)
            try await scene.unreadable("/users/alice", as: Scene.signedOut)
            // users/$UID ".write": "auth.uid == $UID"
            try await scene.allowed("PUT", "/users/alice/username", #""alice2""#, as: Scene.alice)
            try await scene.denied("PUT", "/users/alice/username", #""bob""#, as: Scene.bob)
            // Rules are not filters: nobody lists all users.
            try await scene.unreadable("/users", as: Scene.alice)
        }
    }

    @Test func postsAreReadByAnyoneAndWrittenBySignedInUsers() async throws {
        try await Self.with { scene in
            // posts ".read": true
            let posts = try await scene.readable("/posts", as: Scene.signedOut) as? [String: Any]
            #expect(posts?.keys.sorted() == ["p1"])
            // posts ".write": "auth.uid != null"
            try await scene.allowed("PUT", "/posts/p2", Self.post("bob"), as: Scene.bob)
            try await scene.denied("PUT", "/posts/p3", Self.post("bob"), as: Scene.signedOut)
        }
    }

    @Test func aPostsUIDIsTheAuthorsAndFixedOnceSet() async throws {
        try await Self.with { scene in
            // posts/$POSTID/uid ".validate": "(data.exists() && data.val() == newData.val()) || newData.val() == auth.uid"
            try await scene.allowed("PUT", "/posts/p2", Self.post("bob"), as: Scene.bob)
            try await scene.denied("PUT", "/posts/p3", Self.post("alice"), as: Scene.bob)
            // An edit that keeps the uid passes, whoever makes it (the rule checks only the uid).
            try await scene.allowed("PUT", "/posts/p1", Self.post("alice", title: "Edited"), as: Scene.alice)
            try await scene.denied("PUT", "/posts/p1/uid", #""carol""#, as: Scene.bob)
        }
    }

    @Test func usersStarOnlyForThemselves() async throws {
        try await Self.with { scene in
            // posts/$POSTID/stars/$UID ".validate": "auth.uid == $UID"
            try await scene.allowed("PATCH", "/posts/p1", #"{"stars/bob": true, "starCount": 1}"#, as: Scene.bob)
            try await scene.denied("PUT", "/posts/p1/stars/alice", "true", as: Scene.bob)
            // Unstarring deletes, and .validate does not run on deletes.
            try await scene.allowed("PATCH", "/posts/p1", #"{"stars/bob": null, "starCount": 0}"#, as: Scene.bob)
        }
    }

    @Test func userPostsAreReadByAnyoneAndWrittenByTheirOwner() async throws {
        try await Self.with { scene in
            // user-posts ".read": true
            try await scene.readable("/user-posts/alice", as: Scene.signedOut)
            // user-posts/$UID/$POSTID ".write": "auth.uid == $UID"
            try await scene.allowed("PUT", "/user-posts/bob/p2", Self.post("bob"), as: Scene.bob)
            try await scene.denied("PUT", "/user-posts/alice/p2", Self.post("bob"), as: Scene.bob)
        }
    }

    @Test func aNewUserPostCarriesItsOwnersUID() async throws {
        try await Self.with { scene in
            // user-posts/$UID/$POSTID ".validate": "data.exists() || newData.child('uid').val() == auth.uid"
            try await scene.denied("PUT", "/user-posts/bob/p3", Self.post("alice"), as: Scene.bob)
            try await scene.denied("PUT", "/user-posts/bob/p4", #"{"title": "no uid"}"#, as: Scene.bob)
            // An existing entry may be edited without restating the uid.
            try await scene.allowed("PUT", "/user-posts/alice/p1/title", #""Edited""#, as: Scene.alice)
        }
    }

    @Test func theAppsNewPostUpdateIsAllOrNothing() async throws {
        try await Self.with { scene in
            // The quickstart writes /posts/$key and /user-posts/$uid/$key in one updateChildValues.
            try await scene.allowed(
                "PATCH", "/", #"{"posts/p5": \#(Self.post("bob")), "user-posts/bob/p5": \#(Self.post("bob"))}"#, as: Scene.bob)
            try await scene.denied(
                "PATCH", "/", #"{"posts/p6": \#(Self.post("bob")), "user-posts/alice/p6": \#(Self.post("bob"))}"#, as: Scene.bob)
            #expect(try await scene.stored("/posts/p6") == "null")
        }
    }

    @Test func commentsAreReadByAnyoneAndWrittenBySignedInUsersAsThemselves() async throws {
        try await Self.with { scene in
            // post-comments ".read": true
            let comments = try await scene.readable("/post-comments/p1", as: Scene.signedOut) as? [String: Any]
            #expect(comments?.keys.sorted() == ["c1"])
            // post-comments ".write": "auth.uid != null"
            try await scene.allowed("PUT", "/post-comments/p1/c2", #"{"uid": "alice", "author": "alice", "text": "Thanks"}"#, as: Scene.alice)
            try await scene.denied("PUT", "/post-comments/p1/c3", #"{"uid": "alice", "text": "Thanks"}"#, as: Scene.signedOut)
            // post-comments/$POSTID/$COMMENTID/uid ".validate": the writer's uid, fixed once set
            try await scene.denied("PUT", "/post-comments/p1/c4", #"{"uid": "bob", "text": "Forged"}"#, as: Scene.alice)
            try await scene.denied("PUT", "/post-comments/p1/c1/uid", #""alice""#, as: Scene.carol)
            try await scene.allowed("PUT", "/post-comments/p1/c1/text", #""Edited""#, as: Scene.carol)
        }
    }
}
