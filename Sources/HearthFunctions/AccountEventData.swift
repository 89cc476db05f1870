import Foundation
import HearthAuth
import HearthCore

/// An account as account triggers' events carry it: the JSON form of Firebase's
/// `google.events.firebase.auth.v1.AuthEventData` (no password hash, no sessions).
enum AccountEventData {
    static func json(_ user: UserRecord) -> [UInt8] {
        var fields: [String: Any] = [
            "uid": user.uid, "emailVerified": user.emailVerified, "disabled": user.disabled,
        ]
        fields["email"] = user.email
        fields["displayName"] = user.displayName
        fields["photoURL"] = user.photoURL
        fields["phoneNumber"] = user.phoneNumber
        var metadata = ["createTime": CloudEvent.timestamp(user.createdAt)]
        metadata["lastSignInTime"] = user.lastLoginAt.map(CloudEvent.timestamp)
        fields["metadata"] = metadata
        let providers = user.providerEntries.map { entry -> [String: String] in
            var info = ["uid": entry.rawID, "providerId": entry.providerID]
            info["email"] = entry.email
            info["displayName"] = entry.displayName
            info["photoURL"] = entry.photoURL
            return info
        }
        if !providers.isEmpty { fields["providerData"] = providers }
        if user.customClaims.children != nil,
            let claims = try? JSONSerialization.jsonObject(with: Data(JSONWriter.bytes(user.customClaims)))
        {
            fields["customClaims"] = claims
        }
        return Array((try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8))
    }
}
