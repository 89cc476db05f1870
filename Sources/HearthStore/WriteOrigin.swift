/// Who made a write, as the events it records report it (Firebase's `authtype` and `authid`
/// CloudEvent attributes of database triggers).
public struct WriteOrigin: Sendable, Hashable {
    /// Firebase's kinds of writer.
    public enum Kind: String, Sendable {
        /// Admin credentials (the admin token, a service account, the emulator's `owner`).
        case admin
        /// A signed-in user, named by ``WriteOrigin/uid``.
        case appUser = "app_user"
        /// A client that is not signed in.
        case unauthenticated
        /// Not known (an import, a tool).
        case unknown
    }

    public var kind: Kind
    /// The user's ID, for ``Kind/appUser``.
    public var uid: String?

    public init(kind: Kind, uid: String? = nil) {
        self.kind = kind
        self.uid = uid
    }

    public static let unknown = WriteOrigin(kind: .unknown)
    public static let admin = WriteOrigin(kind: .admin)
    public static let unauthenticated = WriteOrigin(kind: .unauthenticated)

    /// A signed-in user's write.
    public static func user(_ uid: String) -> WriteOrigin {
        WriteOrigin(kind: .appUser, uid: uid)
    }
}
