import Foundation

/// One deployed version of the owner's web app (`hearth hosting deploy`), as kept in
/// `releases/<id>/release.json` beside its files.
public struct HostingRelease: Codable, Sendable, Equatable {
    /// Sortable by time: `20261129-051200-3fa9c1`.
    public var id: String
    /// Its place in deploy order: one more than any release kept when it was deployed.
    public var sequence: Int
    /// When it was deployed.
    public var created: Date
    /// The folder it was deployed from (its `firebase.json`'s folder), as given.
    public var source: String
    /// The deployer's note (`--message`), if any.
    public var message: String?
    /// The files it serves (after `ignore`), over all of its sites, and their bytes.
    public var files: Int
    public var bytes: Int64

    public init(id: String, sequence: Int, created: Date, source: String, message: String? = nil, files: Int, bytes: Int64) {
        self.id = id
        self.sequence = sequence
        self.created = created
        self.source = source
        self.message = message
        self.files = files
        self.bytes = bytes
    }

    /// True for a well-formed release ID: letters, digits and `-`, 1–64 of them; anything else
    /// (`..`, a slash) never names a folder.
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { $0 == UInt8(ascii: "-") || ($0 < 0x80 && (Character(UnicodeScalar($0)).isLetter || Character(UnicodeScalar($0)).isNumber)) }
    }
}

/// One file of a release, for the console's listing.
public struct HostingReleaseFile: Codable, Sendable, Equatable {
    /// The site's public folder, as `firebase.json` names it (`public`, `dist`).
    public var site: String
    /// The path the file is served at, without the leading slash.
    public var path: String
    public var bytes: Int64
}
