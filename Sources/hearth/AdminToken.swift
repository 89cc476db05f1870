import Foundation

/// The server's admin token, kept in `<data>/admin-token` (readable by its owner only) and
/// printed once, when it is first made.
enum AdminToken {
    static func loadOrCreate(in folder: URL) throws -> String {
        let file = folder.appendingPathComponent("admin-token")
        if let existing = try? String(contentsOf: file, encoding: .utf8) {
            let token = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty { return token }
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let token = make()
        guard FileManager.default.createFile(
            atPath: file.path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]
        ) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        FileHandle.standardOutput.write(Data("""
            Created an admin token (kept in \(file.path); shown only this once):
              \(token)
            Use it as `Authorization: Bearer <token>` for admin access.

            """.utf8))
        return token
    }

    /// A new token: 30 random bytes, URL-safe base64.
    static func make() -> String {
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<30).map { _ in UInt8.random(in: 0...255, using: &random) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }
}
