import Foundation
import HearthHosting
import Logging
import Synchronization

/// The live release of a releases folder (``HostingReleases``), for serving: each call checks
/// the `current` pointer with one `stat`, and reads it and the release's `firebase.json` again
/// only when the pointer was replaced. So a deploy or a rollback, on this node or another
/// sharing the folder, is served from the next request on.
///
/// Thread safety: the cached deployment is behind a `Mutex`; a release is loaded outside it,
/// and two requests meeting a new pointer at once may both load it (the same result).
final class HostingReleaseWatcher: Sendable {
    let releases: HostingReleases
    private let hostSites: [String: String]
    private let sdkFolder: URL?
    private let logger: Logger

    private struct Seen {
        /// The pointer file as last seen: renaming a new one over it changes its inode and times.
        var pointer: FileStatus?
        var deployment: HostingDeployment?
    }

    private let seen = Mutex(Seen())

    init(releases: HostingReleases, hostSites: [String: String], sdkFolder: URL?, logger: Logger) {
        self.releases = releases
        self.hostSites = hostSites
        self.sdkFolder = sdkFolder
        self.logger = logger
    }

    /// The live release's deployment, or nil when nothing is deployed.
    func current() -> HostingDeployment? {
        guard let identity = FileStatus(path: releases.pointer.path) else {
            seen.withLock { $0 = Seen() }
            return nil
        }
        let known = seen.withLock { $0 }
        if known.pointer == identity { return known.deployment }
        guard let id = releases.currentID() else { return known.deployment }
        if known.deployment?.release == id {
            seen.withLock { $0.pointer = identity }
            return known.deployment
        }
        do {
            let settings = try HostingSettings.load(folder: releases.appFolder(of: id), hostSites: hostSites, sdkFolder: sdkFolder)
            let deployment = HostingDeployment(settings: settings, release: id)
            seen.withLock { $0 = Seen(pointer: identity, deployment: deployment) }
            logger.info("serving hosting release", metadata: ["release": "\(id)"])
            return deployment
        } catch {
            // Its files were removed by hand: keep serving what was served.
            logger.error("hosting release cannot be served", metadata: ["release": "\(id)", "error": "\(error)"])
            seen.withLock { $0.pointer = identity }
            return known.deployment
        }
    }
}
