import Foundation
import HearthClient
import Observation

/// Signing up, in and out, browsing without an account, and editing one's profile.
@MainActor
@Observable
public final class SessionViewModel {
    /// The signed-in user; nil when signed out.
    public private(set) var user: User?
    /// The last error, in words.
    public private(set) var errorMessage: String?
    public private(set) var isWorking = false

    public var email = ""
    public var password = ""
    public var displayName = ""

    @ObservationIgnored private let client: SocialClient

    public init(client: SocialClient) {
        self.client = client
        user = client.auth.currentUser
    }

    public var isSignedIn: Bool { user != nil }
    public var isAnonymous: Bool { user?.isAnonymous ?? false }

    /// True once a password reset email was asked for (the same whether or not the address
    /// has an account).
    public private(set) var resetEmailSent = false

    /// Makes an account with the email, password and name entered, and its public profile.
    /// Someone browsing anonymously keeps their uid and everything they made: their account
    /// gains the email and password.
    public func signUp() async {
        let name = displayName.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return fail("Enter your name.") }
        guard name.count <= 100 else { return fail("The name is too long.") }
        await perform {
            let address = self.email.trimmingCharacters(in: .whitespaces)
            if self.client.auth.currentUser?.isAnonymous == true {
                try await self.client.auth.linkEmail(address, password: self.password, displayName: name)
            } else {
                try await self.client.auth.createUser(email: address, password: self.password, displayName: name)
            }
            try await self.writeProfile(name: name, picture: nil)
        }
    }

    public func signIn() async {
        await perform {
            try await self.client.auth.signIn(email: self.email.trimmingCharacters(in: .whitespaces), password: self.password)
        }
    }

    /// "Forgot password?": emails a link to choose a new password to the address entered.
    public func sendPasswordReset() async {
        let address = email.trimmingCharacters(in: .whitespaces)
        guard !address.isEmpty else { return fail("Enter your email address.") }
        resetEmailSent = false
        await perform {
            try await self.client.auth.sendPasswordReset(to: address)
            self.resetEmailSent = true
        }
    }

    /// Browses without an account (an anonymous one), shown as "Anonymous".
    public func browseAnonymously() async {
        await perform {
            try await self.client.auth.signInAnonymously()
            try await self.writeProfile(name: "Anonymous", picture: nil)
        }
    }

    public func signOut() async {
        await client.auth.signOut()
        user = nil
        password = ""
    }

    /// The longest bio the rules accept.
    public static let maxBioLength = 300

    /// Changes the display name and/or photo URL, in the account and the public profile, and
    /// the bio (`""` removes it; nil leaves it as it is).
    public func updateProfile(name: String? = nil, pictureURL: String? = nil, bio: String? = nil) async {
        let trimmed = name?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let trimmed, trimmed.isEmpty || trimmed.count > 100 { return fail("Enter a name of 1 to 100 characters.") }
        let about = bio?.trimmingCharacters(in: .whitespacesAndNewlines)
        if let about, about.utf16.count > Self.maxBioLength { return fail("The bio is longer than \(Self.maxBioLength) characters.") }
        await perform {
            let updated = try await self.client.auth.updateProfile(displayName: trimmed, photoURL: pictureURL)
            try await self.writeProfile(name: updated.displayName ?? "Anonymous", picture: updated.photoURL, bio: about)
        }
    }

    /// `people/{uid}`: the name the rules compare with the token, the search index, and the bio.
    private func writeProfile(name: String, picture: String?, bio: String? = nil) async throws {
        let user = try client.requireUser()
        var updates: [String: DatabaseValue] = [
            "full_name": DatabaseValue(name),
            "_search_index/full_name": DatabaseValue(Profile.searchIndex(for: name).fullName),
            "_search_index/reversed_full_name": DatabaseValue(Profile.searchIndex(for: name).reversedFullName),
        ]
        if let picture {
            updates["profile_picture"] = DatabaseValue(picture)
            // The web app's small copy of an earlier photo would no longer be this one.
            updates["profile_thumbnail"] = .null
        }
        if let bio { updates["bio"] = bio.isEmpty ? .null : DatabaseValue(bio) }
        // Anonymous visitors are not searchable.
        if user.isAnonymous {
            updates["_search_index/full_name"] = nil
            updates["_search_index/reversed_full_name"] = nil
        }
        try await client.settle(client.database.root.child("people/\(user.uid)").updateChildValues(updates))
    }

    private func perform(_ work: @escaping () async throws -> Void) async {
        isWorking = true
        errorMessage = nil
        defer {
            isWorking = false
            user = client.auth.currentUser
        }
        do {
            try await work()
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }

    private func fail(_ message: String) {
        errorMessage = message
    }
}
