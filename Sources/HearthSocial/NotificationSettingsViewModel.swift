import Foundation
import HearthClient
import Observation

/// Which kinds of notification a person wants pushed to their devices when the app is closed
/// (`notificationSettings/{uid}/{kind}`; every kind is on until turned off). The server reads
/// these choices before each push; the notifications list in the app shows everything anyway.
@MainActor
@Observable
public final class NotificationSettingsViewModel {
    /// A kind of notification, in the order the settings screen lists them.
    public enum Kind: String, CaseIterable, Sendable {
        case follow, like, comment, mention, message

        /// What the switch says.
        public var label: String {
            switch self {
            case .follow: "New followers"
            case .like: "Likes of your posts"
            case .comment: "Comments on your posts"
            case .mention: "Mentions of you"
            case .message: "Direct messages"
            }
        }
    }

    /// On or off, per kind (on until loaded or turned off).
    public private(set) var enabled: [Kind: Bool] = Dictionary(uniqueKeysWithValues: Kind.allCases.map { ($0, true) })
    public private(set) var errorMessage: String?

    @ObservationIgnored private let client: SocialClient
    @ObservationIgnored private var listener: Task<Void, Never>?

    public init(client: SocialClient) {
        self.client = client
    }

    isolated deinit {
        listener?.cancel()
    }

    /// Listens to the person's choices.
    public func start() {
        stop()
        guard let uid = client.uid else { return errorMessage = SocialError.notSignedIn.description }
        listener = watchValue(client.database.root.child("notificationSettings/\(uid)").query, for: self) { model, snapshot in
            var enabled: [Kind: Bool] = [:]
            for kind in Kind.allCases { enabled[kind] = (try? snapshot.childSnapshot(forPath: kind.rawValue).value(as: Bool.self)) ?? true }
            model.enabled = enabled
        } fail: { model, message in
            model.errorMessage = message
        }
    }

    public func stop() {
        listener?.cancel()
        listener = nil
    }

    /// Turns `kind` on or off (on is stored as no entry: the default).
    public func set(_ kind: Kind, enabled on: Bool) async {
        errorMessage = nil
        do {
            let uid = try client.requireUser().uid
            enabled[kind] = on
            let entry = client.database.root.child("notificationSettings/\(uid)/\(kind.rawValue)")
            try await client.settle(on ? entry.removeValue() : entry.setValue(false))
        } catch {
            errorMessage = SocialError.words(for: error)
        }
    }
}
