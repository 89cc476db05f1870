import Foundation
import HearthHosting

/// What the hosted app is at one moment: one folder's `firebase.json` sites, each with its
/// resolver and its public folder's files. A request takes one deployment when it starts and
/// keeps it, so a switch to another release never mixes two in one answer.
struct HostingDeployment: Sendable {
    /// The release served, or nil for a folder served as it is on disk (`--hosting`).
    let release: String?
    let settings: HostingSettings
    let sites: [(resolver: HostingResolver, files: HostingFolderFiles)]

    /// - Parameter excluding: the server's own folders (data, files), never served when a
    ///   public folder holds them.
    init(settings: HostingSettings, release: String? = nil, excluding: [URL] = []) {
        self.release = release
        self.settings = settings
        sites = settings.configuration.sites.map { site in
            (HostingResolver(site: site), HostingFolderFiles(
                folder: settings.folder.appendingPathComponent(site.publicFolder), excluding: excluding, immutable: release != nil))
        }
    }

    /// True when this is a release whose files were removed (pruned while a request held it).
    var isGone: Bool {
        release != nil && !FileManager.default.fileExists(atPath: settings.folder.path)
    }

    /// The site answering `host` (``HostingConfiguration/site(forHost:hostSites:)``).
    func site(forHost host: String?) -> (resolver: HostingResolver, files: HostingFolderFiles) {
        guard sites.count > 1 else { return sites[0] }
        let site = settings.configuration.site(forHost: host, hostSites: settings.hostSites)
        let index = settings.configuration.sites.firstIndex {
            $0.publicFolder == site.publicFolder && $0.site == site.site && $0.target == site.target
        }
        return sites[index ?? 0]
    }
}
