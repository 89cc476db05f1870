import Foundation
import HearthClient
import Observation

/// "Delete my account": after the person typed the confirmation word and (for an account with
/// a password) signed in again, the account is deleted; the server then removes everything
/// the person made (posts, photos, comments, likes, follows, conversations, notifications).
@MainActor
@Observable
public final class AccountDeletionViewModel {
    /// What the person types to confirm.
    public static let confirmationWord = "DELETE"

    /// The confirmation as typed.
    public var confirmation = ""
    /// The account's password: a deletion needs a recent sign-in, so the person signs in again.
    public var password = ""
    public private(set) var errorMessage: String?
    public private(set) var isWorking = false
    /// True once the account is gone (the person is signed out).
    public private(set) var isDeleted = false

    @ObservationIgnored private let client: SocialClient

    public init(client: SocialClient) {
        self.client = client
    }

    /// True when the account signs in with a password, which is asked for again.
    public var needsPassword: Bool {
        guard let user = client.auth.currentUser else { return false }
        return !user.isAnonymous && user.email != nil
    }

    /// True when the confirmation (and password, when needed) is entered.
    public var canDelete: Bool {
        confirmation.trimmingCharacters(in: .whitespaces) == Self.confirmationWord && (!needsPassword || !password.isEmpty)
    }

    /// Signs in again (for a password account) and deletes the account.
    public func delete() async {
        guard let user = client.auth.currentUser else { return errorMessage = "Nobody is signed in." }
        guard canDelete else {
            return errorMessage = needsPassword && password.isEmpty
                ? "Enter your password." : "Type \(Self.confirmationWord) to confirm."
        }
        // Writes still on their way would land after the deletion's clean-up began.
        guard client.database.pendingWriteCount(at: client.database.root) == 0 else {
            return errorMessage = "Some of your changes are still being sent. Try again once you are online."
        }
        isWorking = true
        errorMessage = nil
        defer { isWorking = false }
        do {
            if needsPassword, let email = user.email {
                let again = try await client.auth.signIn(email: email, password: password)
                guard again.uid == user.uid else { throw SocialError.failed("That is another account's password.") }
            }
            try await client.auth.deleteAccount()
            password = ""
            isDeleted = true
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }
}
