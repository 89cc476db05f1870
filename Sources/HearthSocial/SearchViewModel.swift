import Foundation
import HearthClient
import Observation

/// Search: people by the start of their first or last name (through `_search_index`), posts
/// by hashtag (`hashtags/{tag}`), and recent posts by words in their title or body.
@MainActor
@Observable
public final class SearchViewModel {
    public var text = ""
    public private(set) var people: [Profile] = []
    public private(set) var posts: [Post] = []
    public private(set) var errorMessage: String?
    public private(set) var isSearching = false

    /// Queries shorter than this search nothing (FriendlyPix's web client asks for 3).
    public static let minimumLength = 2
    /// How many recent posts a text search looks through.
    public static let recentPostsSearched = 200

    @ObservationIgnored private let client: SocialClient

    public init(client: SocialClient) {
        self.client = client
    }

    /// Runs the search for ``text``: `#tag` finds posts with that hashtag; other text finds
    /// people whose first or last name starts with it and recent posts containing it.
    public func search() async {
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        errorMessage = nil
        guard query.count >= Self.minimumLength else {
            people = []
            posts = []
            return
        }
        isSearching = true
        defer { isSearching = false }
        do {
            if query.hasPrefix("#") {
                people = []
                posts = try await postsTagged(String(query.dropFirst()))
            } else {
                async let foundPeople = people(named: query)
                async let foundPosts = posts(containing: query)
                (people, posts) = try await (foundPeople, foundPosts)
            }
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }

    private func people(named prefix: String) async throws -> [Profile] {
        let people = client.database.root.child("people")
        var found: [String: Profile] = [:]
        for index in ["_search_index/full_name", "_search_index/reversed_full_name"] {
            let matches = try await people.queryOrdered(byChild: index)
                .queryStarting(atValue: DatabaseValue(prefix)).queryEnding(atValue: DatabaseValue(prefix + "\u{f8ff}"))
                .queryLimited(toFirst: 10).getData()
            for child in matches.children {
                if let profile = child.decoded(Profile.self) { found[profile.id] = profile }
            }
        }
        // Hide people who blocked the searcher.
        if let me = client.uid {
            let blockers = Set(try await client.database.root.child("blocked/\(me)").getData().childKeys)
            found = found.filter { !blockers.contains($0.key) }
        }
        return found.values.sorted { $0.fullName.localizedCaseInsensitiveCompare($1.fullName) == .orderedAscending }
    }

    private func posts(containing words: String) async throws -> [Post] {
        let recent = try await client.database.root.child("posts").queryOrderedByKey()
            .queryLimited(toLast: Self.recentPostsSearched).getData()
        return recent.children.compactMap { $0.decoded(Post.self) }
            .filter { $0.title.localizedCaseInsensitiveContains(words) || $0.body.localizedCaseInsensitiveContains(words) }
            .sorted { $0.id > $1.id }
    }

    private func postsTagged(_ tag: String) async throws -> [Post] {
        guard !tag.isEmpty, tag.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return [] }
        let ids = try await client.database.root.child("hashtags/\(tag)").getData().childKeys
        return try await PostLoader(client: client).posts(ids.sorted(by: >))
    }
}
