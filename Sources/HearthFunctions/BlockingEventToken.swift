import Foundation
import HearthAuth
import HearthCore

/// The token a blocking function is called with, as Firebase's Auth emulator makes it: an
/// unsigned JWT (`alg: none`) whose claims describe the event (`event_type`, `user_record`,
/// `sign_in_method`, …). Firebase's functions SDKs read it without checking a signature when
/// `FIREBASE_AUTH_EMULATOR_HOST` is set, as Hearth sets it for its functions; functions are
/// reached on loopback only, and webhooks get the request signed (Standard Webhooks).
enum BlockingEventToken {
    /// The JWT for `event`, sent to `audience` (the function's URL).
    static func make(_ event: AccountBlockingEvent, trigger: BlockingTrigger, projectID: String, audience: String) -> String {
        func base64URL(_ data: Data) -> String {
            data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let header = Data(#"{"alg":"none","typ":"JWT"}"#.utf8)
        let payload = (try? JSONSerialization.data(withJSONObject: claims(event, trigger: trigger, projectID: projectID, audience: audience), options: [.sortedKeys])) ?? Data()
        return base64URL(header) + "." + base64URL(payload) + "."
    }

    static func claims(_ event: AccountBlockingEvent, trigger: BlockingTrigger, projectID: String, audience: String) -> [String: Any] {
        let issuedAt = event.time / 1000
        var claims: [String: Any] = [
            "iss": "https://securetoken.google.com/\(projectID)", "aud": audience, "iat": issuedAt, "exp": issuedAt + 3600,
            "event_id": event.id, "event_type": event.kind.rawValue, "user_agent": event.client.userAgent,
            "ip_address": event.client.ipAddress, "locale": event.client.locale, "sub": event.user.uid,
            "sign_in_method": event.signInMethod, "user_record": userRecord(event.user),
        ]
        if let federated = event.federated {
            if !federated.rawUserInfo.isNull { claims["raw_user_info"] = JSONWriter.string(federated.rawUserInfo) }
            if trigger.forwardsIDToken, let token = federated.idToken { claims["oauth_id_token"] = token }
            if trigger.forwardsAccessToken, let token = federated.accessToken { claims["oauth_access_token"] = token }
        }
        return claims
    }

    static func userRecord(_ user: UserRecord) -> [String: Any] {
        var record: [String: Any] = [
            "uid": user.uid, "email_verified": user.emailVerified, "disabled": user.disabled,
            "provider_data": user.providerEntries.map { entry -> [String: Any] in
                var info: [String: Any] = ["provider_id": entry.providerID, "uid": entry.rawID]
                info["email"] = entry.email
                info["display_name"] = entry.displayName
                info["photo_url"] = entry.photoURL
                info["phone_number"] = entry.phoneNumber
                return info
            },
            "metadata": ["creation_time": user.createdAt, "last_sign_in_time": user.lastLoginAt ?? user.createdAt],
            "tokens_valid_after_time": user.validSince,
        ]
        record["email"] = user.email
        record["display_name"] = user.displayName
        record["photo_url"] = user.photoURL
        record["phone_number"] = user.phoneNumber
        if user.customClaims.children != nil,
            let claims = try? JSONSerialization.jsonObject(with: Data(JSONWriter.bytes(user.customClaims)))
        {
            record["custom_claims"] = claims
        }
        return record
    }
}
