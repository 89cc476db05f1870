/// One site of a `firebase.json`'s `hosting` (the object, or one entry of the array): its public
/// folder and how it answers requests.
public struct HostingSite: Sendable {
    /// `appAssociation`: whether Firebase would answer the Dynamic Links association files
    /// itself. Hearth has no Dynamic Links, so both serve the owner's files; the value is kept
    /// so a valid `firebase.json` reads unchanged.
    public enum AppAssociation: String, Sendable, Hashable {
        case auto = "AUTO"
        case none = "NONE"
    }

    /// The site's name (`site`), when the configuration names one.
    public var site: String?
    /// The deploy target (`target`), when the configuration names one.
    public var target: String?
    /// The folder served, relative to the folder of `firebase.json` (`public`).
    public var publicFolder: String
    /// Files never served, relative to the public folder (`ignore`; Firebase's default list when
    /// absent). A file is ignored when it or a folder above it matches.
    public var ignore: [GlobPattern]
    public var rewrites: [HostingRewrite]
    public var redirects: [HostingRedirect]
    public var headers: [HostingHeaderRule]
    /// `cleanUrls`: `/about` serves `about.html`, and `/about.html` is redirected to `/about`.
    public var cleanUrls: Bool
    /// `trailingSlash`: true adds a slash (redirecting), false removes one, nil (absent) adds one
    /// only to a folder that has an `index.html`.
    public var trailingSlash: Bool?
    public var appAssociation: AppAssociation

    /// Firebase's default `ignore` list.
    public static let defaultIgnore = ["firebase.json", "**/.*", "**/node_modules/**"]

    public init(
        site: String? = nil, target: String? = nil, publicFolder: String, ignore: [GlobPattern]? = nil,
        rewrites: [HostingRewrite] = [], redirects: [HostingRedirect] = [], headers: [HostingHeaderRule] = [],
        cleanUrls: Bool = false, trailingSlash: Bool? = nil, appAssociation: AppAssociation = .auto
    ) {
        self.site = site
        self.target = target
        self.publicFolder = publicFolder
        // The defaults are valid patterns.
        self.ignore = ignore ?? Self.defaultIgnore.map { try! GlobPattern($0, options: [.relative, .dotFiles]) }
        self.rewrites = rewrites
        self.redirects = redirects
        self.headers = headers
        self.cleanUrls = cleanUrls
        self.trailingSlash = trailingSlash
        self.appAssociation = appAssociation
    }

    /// Whether the file at `relativePath` (`app/main.js`, no leading slash) is left out of the
    /// site by `ignore`: the path itself or any folder above it matches.
    public func isIgnored(_ relativePath: String) -> Bool {
        let parts = relativePath.split(separator: "/")
        guard !parts.isEmpty else { return false }
        for end in parts.indices {
            let prefix = parts[...end].joined(separator: "/")
            if ignore.contains(where: { $0.matches(prefix) }) { return true }
        }
        return false
    }
}
