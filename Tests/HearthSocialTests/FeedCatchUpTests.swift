import Foundation
import HearthClient
import HearthSocial
import Testing

@Suite("Home feed catch-up") @MainActor
struct FeedCatchUpTests {
    @Test func laterStartsWriteOnlyWhatIsNewAndNothingWhenNothingIs() async throws {
        try await SocialHarness.with { harness in
            // Given Bob following Ann (both sides, written by an admin: no feed entries yet)
            let ann = try await harness.user("Ann")
            let bob = try await harness.user("Bob")
            let annUID = try #require(ann.auth.currentUser?.uid)
            let bobUID = try #require(bob.auth.currentUser?.uid)
            let before = try await PostViewModelTests.publish(ann, "Before")
            try await harness.admin.root.updateChildValues([
                "followers/\(annUID)/\(bobUID)": true, "people/\(bobUID)/following/\(annUID)": true,
            ]).acknowledged()
            let markers = FeedCatchUpMarkers()

            // The first start catches up in full: her post's entry is written.
            let first = FeedViewModel(client: bob, markers: markers)
            await first.start()
            await eventually("Ann's post in Bob's feed") { first.posts.map(\.id) == [before.id] }
            #expect(first.entriesWritten == 1)
            #expect(markers.marker(for: bobUID)?.following == [annUID])
            first.stop()

            // A later start with nothing new writes nothing.
            let second = FeedViewModel(client: bob, markers: markers)
            await second.start()
            await eventually { !second.isLoading }
            #expect(second.posts.map(\.id) == [before.id])
            #expect(second.entriesWritten == 0)
            second.stop()

            // A post of hers written while the feed was closed is added by the next start, alone.
            let after = try await PostViewModelTests.publish(ann, "After")
            let third = FeedViewModel(client: bob, markers: markers)
            await third.start()
            #expect(third.entriesWritten == 1)
            await eventually("the new post in Bob's feed") { third.posts.map(\.id) == [after.id, before.id] }
            #expect(try await harness.admin.root.child("feed/\(bobUID)").getData().childKeys.sorted() == [after.id, before.id].sorted())
            #expect(third.entriesWritten == 1)
            third.stop()
        }
    }
}
