import Foundation
import HearthClient

/// The app's own rules and the demo content: people, posts with photos, comments, stars,
/// follows and a conversation, written through the app's own ViewModels against a running
/// server (so everything passes the app's rules, as a real user's would).
public enum DemoData {
    /// A demo account.
    public struct Account: Sendable, Equatable, Codable {
        public let name: String
        public let email: String
        public let password: String
    }

    /// The app's database rules (`rules/database.rules.json`).
    public static var databaseRules: String { text("rules/database.rules.json") }
    /// The app's storage rules (`rules/storage.rules`).
    public static var storageRules: String { text("rules/storage.rules") }

    /// A file of the `Resources` folder, which the EmbedResources plugin compiles into this module.
    private static func bytes(_ path: String) -> [UInt8] {
        guard let bytes = EmbeddedResources.contents(of: path) else {
            fatalError("the HearthSocial resource \(path) is missing from the build")
        }
        return bytes
    }

    private static func text(_ path: String) -> String {
        String(decoding: bytes(path), as: UTF8.self)
    }

    private static func photo(_ name: String) throws -> ComposeViewModel.PhotoDraft {
        ComposeViewModel.PhotoDraft(full: Data(bytes("demo/\(name).jpg")), thumbnail: Data(bytes("demo/\(name)-thumb.jpg")))
    }

    /// Makes the demo people with new random passwords, and their posts, comments, stars,
    /// follows and a conversation, on the server at `url`.
    /// - Returns: the accounts, to print (their passwords are shown nowhere else).
    @MainActor
    public static func seed(url: URL, emailDomain: String = "demo.hearth") async throws -> [Account] {
        let people = ["Ann Lee", "Bob Martin", "Carol Diaz"]
        var accounts: [Account] = []
        var clients: [SocialClient] = []
        for name in people {
            let account = Account(
                name: name, email: "\(name.split(separator: " ")[0].lowercased())@\(emailDomain)", password: randomPassword())
            let client = SocialClient(url: url)
            let session = SessionViewModel(client: client)
            session.email = account.email
            session.password = account.password
            session.displayName = name
            await session.signUp()
            if let error = session.errorMessage { throw SocialError.failed("\(name): \(error)") }
            accounts.append(account)
            clients.append(client)
        }
        let (ann, bob, carol) = (clients[0], clients[1], clients[2])

        let posts: [(SocialClient, String, String, [String])] = [
            (ann, "Evening at the harbour", "The sun went down behind the lighthouse. #sunset #sea", ["sunset"]),
            (bob, "Up in the Alps", "Three days of walking, no phone signal, perfect. #mountains #hiking", ["mountains", "forest"]),
            (carol, "First swim of the year", "The water was cold but worth it. #beach", ["beach"]),
            (ann, "City lights", "Working late, but what a view. #city #night", ["city"]),
            (bob, "Morning ritual", "Nothing happens before the first cup. #coffee", ["coffee"]),
            (carol, "Weekend plans?", "Looking for a good book and a quiet café. Suggestions welcome!", []),
        ]
        var published: [Post] = []
        for (client, title, body, photos) in posts {
            let compose = ComposeViewModel(client: client)
            compose.title = title
            compose.body = body
            for name in photos { compose.addPhoto(try photo(name)) }
            guard let post = await compose.post() else { throw SocialError.failed(compose.errorMessage ?? "could not post") }
            published.append(post)
        }

        // Comments and likes.
        let comments: [(SocialClient, Int, String)] = [
            (bob, 0, "Wow, the colours!"), (carol, 0, "Where is this?"), (ann, 0, "Honfleur, just before nine."),
            (ann, 1, "Jealous. Which trail?"), (carol, 2, "Brave!"), (ann, 5, "Try the one by the station, they bake their own bread."),
        ]
        for (client, index, text) in comments {
            let detail = PostDetailViewModel(client: client, postID: published[index].id)
            detail.newComment = text
            await detail.addComment()
            if let error = detail.errorMessage { throw SocialError.failed(error) }
        }
        // Likes: each one in both data shapes at once (stars and count, and likes/).
        for (client, index) in [(bob, 0), (carol, 0), (ann, 1), (carol, 1), (ann, 2), (bob, 3), (carol, 3), (carol, 4), (ann, 4)] {
            let detail = PostDetailViewModel(client: client, postID: published[index].id)
            await detail.toggleLike()
            if let error = detail.errorMessage { throw SocialError.failed(error) }
        }

        // Follows: Ann and Bob follow each other; Carol follows Ann.
        for (client, followed) in [(ann, bob), (bob, ann), (carol, ann)] {
            let profile = ProfileViewModel(client: client, uid: followed.auth.currentUser!.uid)
            await profile.toggleFollow()
            if let error = profile.errorMessage { throw SocialError.failed(error) }
        }

        // A conversation.
        let annToBob = ConversationViewModel(client: ann, with: bob.auth.currentUser!.uid)
        let bobToAnn = ConversationViewModel(client: bob, with: ann.auth.currentUser!.uid)
        for (chat, text) in [(annToBob, "Back from the mountains?"), (bobToAnn, "Yes! Legs are sore."), (annToBob, "Coffee tomorrow?")] {
            chat.draft = text
            await chat.send()
            if let error = chat.errorMessage { throw SocialError.failed(error) }
        }

        for client in clients { await client.auth.signOut() }
        return accounts
    }

    private static func randomPassword() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<12).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
