import Foundation
import HearthAuth
import HearthCore
import HearthEngine
import Hummingbird

/// The admin endpoints of Firebase Auth's API (`projects/<project>/accounts…`).
extension AuthResponder {
    func adminLookup(_ body: RequestFields) async throws -> Response {
        var identifiers = AuthService.Identifiers()
        identifiers.uids = body.strings("localId")
        identifiers.emails = body.strings("email")
        identifiers.phoneNumbers = body.strings("phoneNumber")
        for entry in body.node.child(ChildKey("federatedUserId")).children.map { Array($0) } ?? [] {
            guard case .string(let provider) = entry.value.child(ChildKey("providerId")),
                case .string(let raw) = entry.value.child(ChildKey("rawId"))
            else { throw AuthError.invalidArgument("federatedUserId needs a providerId and a rawId") }
            identifiers.federated.append((provider, raw))
        }
        let users = try await service.users(matching: identifiers)
        var entries: [(ChildKey, Node)] = [(ChildKey("kind"), .string("identitytoolkit#GetAccountInfoResponse"))]
        // Firebase leaves `users` out when nothing matched.
        if !users.isEmpty { entries.append((ChildKey("users"), Self.list(users.map(Self.userInfo)))) }
        return Self.json(.object(entries))
    }

    func adminUpdate(_ body: RequestFields) async throws -> Response {
        guard let uid = body.string("localId") else { throw AuthError("MISSING_LOCAL_ID") }
        let user = try await service.updateUser(uid: uid, try accountFields(body, creating: false))
        var entries = Self.userInfo(user).children.map { Array($0) } ?? []
        entries.append((ChildKey("kind"), .string("identitytoolkit#SetAccountInfoResponse")))
        return Self.json(.object(entries))
    }

    func clearAccounts() async throws -> Response {
        while true {
            let (users, _) = try await service.listUsers(pageToken: nil, maxResults: 1000)
            if users.isEmpty { break }
            for user in users { try await service.deleteUser(uid: user.uid) }
        }
        return Self.json(.object([]))
    }

    func accountFields(_ body: RequestFields, creating: Bool) throws -> AuthService.AccountFields {
        var fields = AuthService.AccountFields()
        fields.uid = creating ? body.string("localId") : nil
        fields.email = body.string("email")
        fields.password = body.string("password")
        fields.displayName = body.string("displayName")
        fields.photoURL = body.string("photoUrl")
        fields.phoneNumber = body.string("phoneNumber")
        fields.emailVerified = body.bool("emailVerified")
        fields.disabled = body.bool("disabled") ?? body.bool("disableUser")
        fields.deleteAttributes = body.strings("deleteAttribute")
        fields.deleteProviders = body.strings("deleteProvider")
        if !body.node.child(ChildKey("validSince")).isNull {
            guard let seconds = body.integer("validSince"), seconds >= 0 else {
                throw AuthError.invalidArgument("validSince must be a number of seconds")
            }
            fields.validSince = seconds
        }
        if let claims = body.string("customAttributes") {
            fields.customClaims = try Self.parsedClaims(claims)
        }
        return fields
    }

    static func parsedClaims(_ text: String) throws -> Node {
        guard let parsed = try? JSONParser.parseDocument(Array(text.utf8)) else {
            throw AuthError("INVALID_CLAIMS", detail: "customAttributes must be a JSON object")
        }
        return parsed
    }

    // MARK: - Import

    /// `accounts:batchCreate`: users with their password hashes; answers `{error: [{index, message}]}`
    /// for the ones refused.
    func importUsers(_ body: RequestFields) async throws -> Response {
        let entries = body.node.child(ChildKey("users")).children.map { Array($0) } ?? []
        var users: [AuthService.ImportedUser] = []
        var unreadable: [(index: Int, message: String)] = []
        for (index, entry) in entries.enumerated() {
            do {
                users.append(try Self.importedUser(RequestFields(node: entry.value)))
            } catch let error as AuthError {
                unreadable.append((index, error.detail ?? error.message))
                users.append(AuthService.ImportedUser(uid: ""))
            }
        }
        let hash = try Self.importHash(body)
        let readable = users.indices.filter { index in !unreadable.contains { $0.index == index } }
        // An entry that could not be read is not sent on (it would be refused as missing a uid).
        let refused = try await service.importUsers(readable.map { users[$0] }, hash: hash)
            .map { (index: readable[$0.index], message: $0.message) }
        let all = (unreadable + refused).sorted { $0.index < $1.index }
        var response: [(ChildKey, Node)] = [(ChildKey("kind"), .string("identitytoolkit#UploadAccountResponse"))]
        if !all.isEmpty {
            response.append((ChildKey("error"), Self.list(all.map {
                .object([(ChildKey("index"), .int(Int64($0.index))), (ChildKey("message"), .string($0.message))])
            })))
        }
        return Self.json(.object(response))
    }

    private static func importedUser(_ fields: RequestFields) throws -> AuthService.ImportedUser {
        var user = AuthService.ImportedUser(uid: fields.string("localId") ?? "")
        user.email = fields.string("email")
        user.emailVerified = fields.bool("emailVerified") ?? false
        user.displayName = fields.string("displayName")
        user.photoURL = fields.string("photoUrl")
        user.phoneNumber = fields.string("phoneNumber")
        user.disabled = fields.bool("disabled") ?? false
        if let claims = fields.string("customAttributes") {
            guard let parsed = try? JSONParser.parseDocument(Array(claims.utf8)) else {
                throw AuthError("INVALID_CLAIMS", detail: "Invalid custom claims provided.")
            }
            user.customClaims = parsed
        }
        if let hash = fields.string("passwordHash") {
            guard let bytes = base64(hash) else { throw AuthError("INVALID_PASSWORD_HASH", detail: "passwordHash is invalid") }
            user.passwordHash = bytes
        }
        if let salt = fields.string("salt") {
            guard let bytes = base64(salt) else { throw AuthError("INVALID_SALT", detail: "salt is invalid") }
            user.salt = bytes
        }
        user.createdAt = fields.integer("createdAt")
        user.lastLoginAt = fields.integer("lastLoginAt")
        for entry in fields.node.child(ChildKey("providerUserInfo")).children.map { Array($0) } ?? [] {
            let info = RequestFields(node: entry.value)
            user.identities.append(LinkedIdentity(
                providerID: info.string("providerId") ?? "", rawID: info.string("rawId") ?? "", email: info.string("email"),
                displayName: info.string("displayName"), photoURL: info.string("photoUrl")))
        }
        return user
    }

    private static func importHash(_ body: RequestFields) throws -> ImportedPasswordHash? {
        guard let algorithm = body.string("hashAlgorithm") else { return nil }
        func number(_ key: String) -> Int? {
            body.integer(key).flatMap { Int(exactly: $0) }
        }
        func bytes(_ key: String) throws -> Data? {
            guard let text = body.string(key) else { return nil }
            guard let data = base64(text) else { throw AuthError.invalidArgument("\(key) is not base64") }
            return data
        }
        let order = body.string("passwordHashOrder")
        return ImportedPasswordHash(
            algorithm: algorithm, hash: Data(), salt: Data(), key: try bytes("signerKey"), saltSeparator: try bytes("saltSeparator"),
            rounds: number("rounds"), memoryCost: number("memoryCost") ?? number("cpuMemCost"),
            parallelization: number("parallelization"), blockSize: number("blockSize"), derivedKeyLength: number("dkLen"),
            passwordFirst: order == "PASSWORD_AND_SALT" ? true : order == "SALT_AND_PASSWORD" ? false : nil)
    }

    /// Standard or URL-safe base64, padded or not (the Admin SDKs send URL-safe).
    static func base64(_ text: String) -> Data? {
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while standard.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }

    // MARK: - Session cookies and queries

    func createSessionCookie(_ body: RequestFields) async throws -> Response {
        let duration = body.integer("validDuration") ?? 0
        let cookie = try await service.createSessionCookie(idToken: body.string("idToken"), validSeconds: duration)
        return Self.json(.object([(ChildKey("sessionCookie"), .string(cookie))]))
    }

    /// `accounts:query`: Firebase's user query (by exact email, uid or phone in `expression`),
    /// and Hearth's console search: `search` text and `disabled` filter, `after` a uid.
    func queryUsers(_ body: RequestFields) async throws -> Response {
        let limit = Int(min(max(body.integer("limit") ?? 500, 1), 500))
        var users: [UserRecord]
        if let expressions = body.node.child(ChildKey("expression")).children, !expressions.isEmpty {
            var identifiers = AuthService.Identifiers()
            for entry in expressions {
                let fields = RequestFields(node: entry.value)
                if let email = fields.string("email") { identifiers.emails.append(email) }
                if let uid = fields.string("userId") { identifiers.uids.append(uid) }
                if let phone = fields.string("phoneNumber") { identifiers.phoneNumbers.append(phone) }
            }
            users = try await service.users(matching: identifiers)
        } else {
            users = try await service.searchUsers(
                body.string("search") ?? "", disabled: body.bool("disabled"), after: body.string("after"), limit: limit)
        }
        users = Array(users.prefix(limit))
        var entries: [(ChildKey, Node)] = [(ChildKey("recordsCount"), .string(String(users.count)))]
        if !users.isEmpty { entries.append((ChildKey("userInfo"), Self.list(users.map(Self.userInfo)))) }
        return Self.json(.object(entries))
    }
}
