import Foundation
import HearthCore

/// An account trigger's event as a Swift function receives it: the account made or deleted.
public struct AccountChangeEvent: Sendable {
    /// The event's stable ID (the same at every delivery).
    public var id: String
    /// When the account was made, or deleted, in milliseconds since the epoch.
    public var time: Int64
    public var change: AccountTrigger.Change
    public var uid: String
    public var email: String?
    public var emailVerified: Bool
    public var displayName: String?
    public var photoURL: String?
    public var phoneNumber: String?
    public var disabled: Bool
    /// The account's custom claims (an object, or `.null`).
    public var customClaims: Node
    /// Its ways in (`password`, `google.com`, …).
    public var providerIDs: [String]

    /// Reads an account CloudEvent.
    public init(_ event: CloudEvent) throws {
        guard let change = AccountTrigger.Change(eventType: event.type) else {
            throw FunctionError.invalidEvent("not an account event: \(event.type)")
        }
        guard let data = try? JSONSerialization.jsonObject(with: Data(event.data)) as? [String: Any], let uid = data["uid"] as? String else {
            throw FunctionError.invalidEvent("an account event's data has no uid")
        }
        id = event.id
        time = event.time
        self.change = change
        self.uid = uid
        email = data["email"] as? String
        emailVerified = data["emailVerified"] as? Bool ?? false
        displayName = data["displayName"] as? String
        photoURL = data["photoURL"] as? String
        phoneNumber = data["phoneNumber"] as? String
        disabled = data["disabled"] as? Bool ?? false
        customClaims = (data["customClaims"]).flatMap { try? DatabaseChangeEvent.node($0) } ?? .null
        providerIDs = (data["providerData"] as? [[String: Any]] ?? []).compactMap { $0["providerId"] as? String }
    }
}

extension FunctionDefinition {
    /// A Swift function run when an account is made or deleted (Firebase's `auth.user().onCreate`
    /// and `onDelete`, by `change`).
    public static func onAccount(
        _ change: AccountTrigger.Change, name: String, policy: DeliveryPolicy = DeliveryPolicy(),
        _ handler: @escaping @Sendable (AccountChangeEvent) async throws -> Void
    ) -> FunctionDefinition {
        FunctionDefinition(
            name: name, trigger: .account(AccountTrigger(change: change)),
            invoker: SwiftFunctionInvoker { event in try await handler(AccountChangeEvent(event)) }, policy: policy)
    }
}
