import Foundation
import HearthAuth
import HearthCore
import PostgresNIO

extension PostgresAccountStore {
    /// An account's columns (of `hearth_auth_user u`) with its linked identities in order, as
    /// JSON: one statement, so one snapshot, as SQLite's read transaction gives.
    static let userColumns = """
        u.uid, u.email, u.email_verified, u.display_name, u.photo_url, u.password_hash, u.disabled, u.custom_claims,
        u.provider, u.created_at, u.last_login_at, u.valid_since, u.phone_number, u.password_updated_at,
        u.email_link_sign_in, u.last_refresh_at,
        (SELECT json_agg(json_build_array(i.provider_id, i.raw_id, i.email, i.display_name, i.photo_url)
                         ORDER BY i.position)::text
         FROM hearth_auth_identity i WHERE i.uid = u.uid) AS identities
        """

    /// The account in a row of ``userColumns``.
    static func record(_ row: PostgresRow) throws -> UserRecord {
        let row = row.makeRandomAccess()
        var user = UserRecord(
            uid: try row["uid"].decode(String.self), email: try row["email"].decode(String?.self),
            emailVerified: try row["email_verified"].decode(Bool.self), displayName: try row["display_name"].decode(String?.self),
            photoURL: try row["photo_url"].decode(String?.self), passwordHash: try row["password_hash"].decode(String?.self),
            disabled: try row["disabled"].decode(Bool.self), customClaims: json(try row["custom_claims"].decode(String?.self)),
            provider: try row["provider"].decode(String.self), createdAt: try row["created_at"].decode(Int64.self),
            lastLoginAt: try row["last_login_at"].decode(Int64?.self), validSince: try row["valid_since"].decode(Int64.self))
        user.phoneNumber = try row["phone_number"].decode(String?.self)
        user.passwordUpdatedAt = try row["password_updated_at"].decode(Int64?.self)
        user.emailLinkSignIn = try row["email_link_sign_in"].decode(Bool.self)
        user.lastRefreshAt = try row["last_refresh_at"].decode(Int64?.self)
        if let identities = try row["identities"].decode(String?.self) {
            user.identities = try JSONDecoder().decode([[String?]].self, from: Data(identities.utf8)).map { fields in
                LinkedIdentity(
                    providerID: fields[0] ?? "", rawID: fields[1] ?? "", email: fields[2], displayName: fields[3], photoURL: fields[4])
            }
        }
        return user
    }

    /// Claims as stored: JSON text, or nil for none (as SQLite's store keeps them).
    static func claimsText(_ claims: Node) -> String? {
        claims.isNull ? nil : JSONWriter.string(claims)
    }

    static func json(_ text: String?) -> Node {
        guard let text, let parsed = try? JSONParser.parseDocument(Array(text.utf8)) else { return .null }
        return parsed
    }
}
