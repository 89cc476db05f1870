/// Who started a resumable upload: only they (or an admin) may add to it, finish it, cancel it
/// or ask how far it got. Anyone else is told there is no such upload.
public enum UploadOwner: Sendable, Hashable {
    /// The admin credential (rules do not apply).
    case admin
    /// A signed-in user, by uid.
    case user(String)
    /// A signed-out client, counted against the limits by its address.
    case signedOut(address: String)

    /// Whether `caller` may continue an upload this owner started: the same user, any
    /// signed-out client, or an admin.
    ///
    /// A signed-out upload is not tied to its address: a phone moving from Wi-Fi to a mobile
    /// network changes address mid-upload, which is what resumable uploads are for. The
    /// upload's ID, random and known only from the start's answer, is then what keeps others
    /// out, as Cloud Storage's upload URLs are.
    public func admits(_ caller: UploadOwner) -> Bool {
        switch (self, caller) {
        case (_, .admin): true
        case (.user(let owner), .user(let other)): owner == other
        case (.signedOut, .signedOut): true
        default: false
        }
    }

    /// The key the per-owner limit counts by (what ``text`` records); nil for the admin,
    /// who is not counted.
    public var quotaKey: String? {
        switch self {
        case .admin: nil
        case .user, .signedOut: text
        }
    }

    /// How it is recorded: `admin`, `user:<uid>` or `address:<address>`.
    public var text: String {
        switch self {
        case .admin: "admin"
        case .user(let uid): "user:" + uid
        case .signedOut(let address): "address:" + address
        }
    }

    /// The owner recorded as `text`; nil for anything else.
    public init?(text: String) {
        if text == "admin" {
            self = .admin
        } else if text.hasPrefix("user:") {
            self = .user(String(text.dropFirst("user:".count)))
        } else if text.hasPrefix("address:") {
            self = .signedOut(address: String(text.dropFirst("address:".count)))
        } else {
            return nil
        }
    }
}
