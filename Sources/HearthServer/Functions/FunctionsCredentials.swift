import Foundation
import HearthAuth

/// The service-account key file functions' Admin SDKs use for Cloud Storage: Google's storage
/// client asks for a credential even when `STORAGE_EMULATOR_HOST` sends it to this server, and
/// this one is real (its access tokens are admin credentials here, as any service account's).
///
/// A new key is made at each start, for this start's functions port (the key's token endpoint
/// is where its assertions must be addressed), and the previous start's key, named in the file
/// it leaves, is revoked. The file is the owner's only (0600, in a 0700 folder); the server
/// keeps the public half, as for keys an operator makes.
enum FunctionsCredentials {
    /// The account's name (`hearth-functions@<project>.iam.gserviceaccount.com`).
    static let account = "hearth-functions"

    /// Writes a fresh key to `file`, revoking the one it held.
    static func renew(_ file: URL, serviceAccounts: ServiceAccounts, tokenURI: String) async throws {
        if let data = try? Data(contentsOf: file),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let previous = object["private_key_id"] as? String
        {
            _ = try await serviceAccounts.revoke(previous)
        }
        let (key, keyFile) = try await serviceAccounts.create(name: account, tokenURI: tokenURI)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = try encoder.encode(keyFile)
        let folder = file.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Made beside it and renamed over it: a reader never sees half a key.
        let temporary = folder.appendingPathComponent(".\(file.lastPathComponent).\(key.id.prefix(8))")
        guard FileManager.default.createFile(atPath: temporary.path, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            _ = try? await serviceAccounts.revoke(key.id)
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        if rename(temporary.path, file.path) != 0 {
            try? FileManager.default.removeItem(at: temporary)
            _ = try? await serviceAccounts.revoke(key.id)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
    }
}
