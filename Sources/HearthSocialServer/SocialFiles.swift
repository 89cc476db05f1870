/// The social app's stored files as its server-side jobs use them, with the server's authority
/// (the storage rules do not apply).
public protocol SocialFiles: Sendable {
    /// Deletes every object whose name starts with `prefix`, in every bucket; returns how many.
    func deleteAll(under prefix: String) async throws -> Int

    /// Deletes the object `name` in every bucket that has one (none is not an error).
    func delete(_ name: String) async throws

    /// The names of the objects under `prefix`, in every bucket (for checks).
    func names(under prefix: String) async throws -> [String]
}
