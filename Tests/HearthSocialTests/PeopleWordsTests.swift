import HearthClient
import HearthSocial
import Testing

/// The words the web app's unit tests check (Tests/WebUnit/people-words.test.mjs), so both
/// apps say the same.
@Suite("People in words")
struct PeopleWordsTests {
    @Test func oneTwoAndThreePeopleAreNamedAndMoreAreCountedAfterTwo() {
        #expect(PeopleWords.phrase([]) == "")
        #expect(PeopleWords.phrase(["Carol"]) == "Carol")
        #expect(PeopleWords.phrase(["Carol", "Bob"]) == "Carol and Bob")
        #expect(PeopleWords.phrase(["Carol", "Bob", "Dan"]) == "Carol, Bob and Dan")
        #expect(PeopleWords.phrase(["Carol", "Bob", "Dan", "Eve"]) == "Carol, Bob and 2 others")
        #expect(PeopleWords.phrase(["Carol", "Bob", "Dan"], total: 5) == "Carol, Bob and 3 others")
        #expect(PeopleWords.phrase(["Carol", "Bob"], total: 3) == "Carol, Bob and 1 other")
        #expect(PeopleWords.phrase(["", "Bob"]) == "Someone and Bob")
    }

    @Test func likersAreNewestFirstAndTheSameTimeByUID() {
        let likes = [("a", 10), ("b", 30), ("c", 20), ("e", 30)].map { Like(postID: "p", uid: $0.0, timestamp: Int64($0.1)) }
        #expect(PeopleWords.likers(likes) == ["b", "e", "c", "a"])
        #expect(PeopleWords.likers([]) == [])
    }

    @Test func theLikeLineNamesTheNewestTheReaderFirstAsYou() {
        let names = ["a": "Ann", "b": "Bob", "c": "Carol", "d": "Dan", "e": "Eve"]
        let nameOf = { (uid: String) in names[uid] ?? "Someone" }
        #expect(PeopleWords.likedBy([], nameOf: nameOf) == "")
        #expect(PeopleWords.likedBy(["c"], nameOf: nameOf) == "Liked by Carol")
        #expect(PeopleWords.likedBy(["c", "b"], nameOf: nameOf) == "Liked by Carol and Bob")
        #expect(PeopleWords.likedBy(["c", "b", "a", "d", "e"], nameOf: nameOf) == "Liked by Carol, Bob and 3 others")
        #expect(PeopleWords.likedBy(["c", "b", "a"], nameOf: nameOf, reader: "a") == "Liked by you, Carol and Bob")
        #expect(PeopleWords.likedBy(["a"], nameOf: nameOf, reader: "a") == "Liked by you")
        #expect(PeopleWords.likedBy(["c", "b", "e", "d"], nameOf: nameOf, reader: "x") == "Liked by Carol, Bob and 2 others")
    }
}
