/// The `hosting` section of a `firebase.json`: one site, or several (an array whose entries name
/// a `site` or a deploy `target`).
///
/// ```swift
/// let configuration = try HostingConfiguration(firebaseJSON: Array(try Data(contentsOf: url)))
/// let site = configuration.site(forHost: "blog.example.com")
/// let decision = try await HostingResolver(site: site).resolve(request, files: folder)
/// ```
///
/// Everything Firebase Hosting documents is read and checked when the file is loaded, so a bad
/// file is refused whole with a ``HostingConfigurationError`` naming its key, and a running
/// server keeps what it had. Refused as unsupported: `i18n`, rewrites to Cloud Run (`run`) or
/// Dynamic Links, and web-framework sites (`source`).
public struct HostingConfiguration: Sendable {
    /// The sites, in the file's order; the first is the default.
    public let sites: [HostingSite]

    /// Reads the `hosting` section of `firebaseJSON` (the whole file; other sections are left to
    /// the rest of Hearth). Comments and trailing commas are allowed, as the Firebase CLI allows them.
    /// - Throws: ``HostingConfigurationError``, naming the key at fault.
    public init(firebaseJSON: [UInt8]) throws(HostingConfigurationError) {
        let root = try HostingJSON.parse(firebaseJSON)
        guard case .object(let members) = root else {
            throw HostingConfigurationError(.wrongType, at: "", "firebase.json must hold an object, not \(root.typeName)")
        }
        guard let hosting = members["hosting"] else {
            throw HostingConfigurationError(.missingKey, at: "hosting", "firebase.json has no hosting section")
        }
        sites = try HostingConfigurationReader.sites(hosting)
    }

    /// A configuration of the given sites (at least one).
    public init(sites: [HostingSite]) {
        precondition(!sites.isEmpty, "a hosting configuration has at least one site")
        self.sites = sites
    }

    /// The site that answers requests for `host` (the `Host` header, with or without a port).
    ///
    /// With one site, always that one. With several, in this order:
    /// 1. `hostSites`, the server's own map of host names (without port, lower case) to a
    ///    site's `site` or `target` name (the settings file's `hosting.hosts`), as Firebase maps
    ///    a custom domain to a site;
    /// 2. the host name's first label naming a site or target, as Firebase's own domains do
    ///    (`blog.web.app`; here `blog.localhost` or `blog.example.com` pick the site `blog`);
    /// 3. otherwise the first site of the file.
    public func site(forHost host: String?, hostSites: [String: String] = [:]) -> HostingSite {
        guard sites.count > 1, let host = host.map(Self.hostName), !host.isEmpty else { return sites[0] }
        func named(_ name: String) -> HostingSite? {
            sites.first { $0.site == name } ?? sites.first { $0.target == name }
        }
        if let name = hostSites[host], let site = named(name) { return site }
        if let label = host.split(separator: ".").first, let site = named(String(label)) { return site }
        return sites[0]
    }

    /// `Host` without its port, in lower case (`[::1]:9000` is `[::1]`).
    static func hostName(_ host: String) -> String {
        let lower = host.lowercased()
        if lower.hasPrefix("[") { return lower.split(separator: "]").first.map { $0 + "]" } ?? lower }
        return lower.split(separator: ":", omittingEmptySubsequences: false).first.map(String.init) ?? lower
    }
}
