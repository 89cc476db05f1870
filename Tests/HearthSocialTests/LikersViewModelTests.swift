import HearthClient
import HearthSocial
import Testing

@Suite("Who liked a post") @MainActor
struct LikersViewModelTests {
    @Test func theLineAndTheListAreLiveNewestFirstWithTheReaderAsYou() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let carol = try await harness.user("Carol")
            let post = try await PostViewModelTests.publish(ann, "Sunset")
            let annsView = LikersViewModel(client: ann, postID: post.id)
            annsView.start()
            #expect(annsView.line == "")
            for person in [bob, carol] {
                let detail = PostDetailViewModel(client: person, postID: post.id)
                detail.start()
                await eventually { detail.post != nil }
                await detail.toggleLike()
                #expect(detail.errorMessage == nil)
            }
            await eventually("both likes, newest first") { annsView.line == "Liked by Carol and Bob" }
            #expect(annsView.total == 2)
            #expect(annsView.likers.isEmpty, "names are listed only while the list is open")

            // Bob sees his own like as "you", first.
            let bobsView = LikersViewModel(client: bob, postID: post.id)
            bobsView.start()
            await eventually("Bob's line") { bobsView.line == "Liked by you and Carol" }
            await bobsView.openList()
            #expect(bobsView.likers.map(\.name) == ["Carol", "Bob"])
            #expect(bobsView.likers.map(\.isReader) == [false, true])
            #expect(bobsView.moreCount == 0)

            // Carol takes hers back: both views follow.
            let carols = PostDetailViewModel(client: carol, postID: post.id)
            carols.start()
            await eventually { carols.isLiked }
            await carols.toggleLike()
            await eventually("the unlike") { annsView.line == "Liked by Bob" && bobsView.likers.map(\.name) == ["Bob"] }
            bobsView.closeList()
            #expect(bobsView.likers.isEmpty)
        }
    }

    @Test func aLongListSaysHowManyMoreAndADeletedPostShowsNothing() async throws {
        try await SocialHarness.with { harness in
            let ann = try await harness.user("Ann")
            let post = try await PostViewModelTests.publish(ann, "Popular")
            var people: [SocialClient] = []
            for name in ["Bob", "Carol", "Dan"] {
                let person = try await harness.user(name)
                let detail = PostDetailViewModel(client: person, postID: post.id)
                detail.start()
                await eventually { detail.post != nil }
                await detail.toggleLike()
                people.append(person)
            }
            let view = LikersViewModel(client: ann, postID: post.id, maxListed: 2)
            view.start()
            await eventually("three likes") { view.line == "Liked by Dan, Carol and Bob" }
            #expect(view.total == 3)
            await view.openList()
            #expect(view.likers.map(\.name) == ["Dan", "Carol"])
            #expect(view.moreCount == 1)
            // The post deleted with its likes: nobody is listed.
            let detail = PostDetailViewModel(client: ann, postID: post.id)
            detail.start()
            await eventually { detail.post != nil }
            await detail.deletePost()
            #expect(detail.errorMessage == nil)
            await eventually("the likes gone") { view.line == "" && view.total == 0 && view.likers.isEmpty }
        }
    }
}
