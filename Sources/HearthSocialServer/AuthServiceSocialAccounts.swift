import HearthAuth
import HearthCore

/// ``SocialAccounts`` over the server's ``AuthService``.
public struct AuthServiceSocialAccounts: SocialAccounts {
    let service: AuthService

    public init(service: AuthService) {
        self.service = service
    }

    private func user(_ uid: String) async throws -> UserRecord? {
        var identifiers = AuthService.Identifiers()
        identifiers.uids = [uid]
        return try await service.users(matching: identifiers).first
    }

    public func setDisabled(_ disabled: Bool, uid: String) async throws -> Bool {
        guard let user = try await user(uid) else { return false }
        guard user.disabled != disabled else { return true }
        var fields = AuthService.AccountFields()
        fields.disabled = disabled
        // A disabled account's refresh tokens are refused at once (USER_DISABLED, which its page
        // then says), and work again when it is reinstated, as Firebase's do.
        _ = try await service.updateUser(uid: uid, fields)
        return true
    }

    public func setAdmin(_ admin: Bool, uid: String) async throws -> Bool {
        guard let user = try await user(uid) else { return false }
        var claims = user.customClaims.children.map { Array($0) } ?? []
        claims.removeAll { $0.key.string == "admin" }
        if admin { claims.append((ChildKey("admin"), .bool(true))) }
        let updated: Node = claims.isEmpty ? .null : .object(claims)
        guard updated != user.customClaims else { return true }
        var fields = AuthService.AccountFields()
        fields.customClaims = updated
        _ = try await service.updateUser(uid: uid, fields)
        return true
    }

    public func unused(since cutoff: Int64) async throws -> [String] {
        var unused: [String] = []
        var page: String?
        repeat {
            let (users, next) = try await service.listUsers(pageToken: page, maxResults: 1000)
            for user in users where max(user.createdAt, user.lastLoginAt ?? 0, user.lastRefreshAt ?? 0) < cutoff { unused.append(user.uid) }
            page = next
        } while page != nil
        return unused
    }

    public func delete(uid: String) async throws -> Bool {
        do {
            try await service.deleteUser(uid: uid)
            return true
        } catch .userNotFound {
            return false
        }
    }

    public func exists(uid: String) async throws -> Bool {
        try await user(uid) != nil
    }
}
