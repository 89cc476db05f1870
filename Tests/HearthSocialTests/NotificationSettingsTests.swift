import Foundation
import HearthClient
import HearthSocial
import HearthTesting
import Testing

/// A person's choice of which notifications are pushed: theirs alone, kept, and only booleans of
/// the known kinds.
@Suite("Notification settings") @MainActor
struct NotificationSettingsTests {
    @Test func choicesAreThePersonsOwnAndKept() async throws {
        try await SocialHarness.with { harness in
            let (ann, bob) = (try await harness.user("Ann Lee"), try await harness.user("Bob Martin"))
            let annID = try #require(ann.auth.currentUser?.uid)
            let settings = NotificationSettingsViewModel(client: ann)
            settings.start()
            #expect(NotificationSettingsViewModel.Kind.allCases.allSatisfy { settings.enabled[$0] == true })
            await settings.set(.follow, enabled: false)
            await settings.set(.message, enabled: false)
            #expect(settings.errorMessage == nil)
            #expect(try await harness.admin.root.child("notificationSettings/\(annID)").getData().value(as: [String: Bool].self)
                == ["follow": false, "message": false])
            // Another device of hers sees the same choices.
            let again = NotificationSettingsViewModel(client: ann)
            again.start()
            await eventually { again.enabled[.follow] == false && again.enabled[.message] == false && again.enabled[.like] == true }
            // Turned back on, the entry goes (on is the default).
            await settings.set(.follow, enabled: true)
            #expect(try await harness.admin.root.child("notificationSettings/\(annID)").getData().value(as: [String: Bool].self) == ["message": false])

            // Nobody else reads or writes them; only known kinds, only booleans.
            await #expect(throws: HearthClientError.self) { try await bob.database.root.child("notificationSettings/\(annID)").getData() }
            await #expect(throws: HearthClientError.self) {
                try await bob.database.root.child("notificationSettings/\(annID)/like").setValue(false).acknowledged()
            }
            await #expect(throws: HearthClientError.self) {
                try await ann.database.root.child("notificationSettings/\(annID)/spam").setValue(false).acknowledged()
            }
            await #expect(throws: HearthClientError.self) {
                try await ann.database.root.child("notificationSettings/\(annID)/like").setValue("no").acknowledged()
            }
            #expect(try await harness.admin.root.child("notificationSettings/\(annID)").getData().value(as: [String: Bool].self) == ["message": false])
        }
    }
}
