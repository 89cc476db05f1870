import Foundation
import HearthHosting

/// An owner's Firebase web app that the server hosts (`hearth serve --hosting <folder>`, or
/// `hosting` in the settings file): the folder holding `firebase.json`, its `hosting` section,
/// and how host names pick one of several sites.
public struct HostingSettings: Sendable {
    /// The folder holding `firebase.json`; each site's `public` folder is relative to it.
    public var folder: URL
    /// The `hosting` section of its `firebase.json`.
    public var configuration: HostingConfiguration
    /// Host names (lower case, no port) mapped to a site's `site` or `target` name; see
    /// ``HostingConfiguration/site(forHost:hostSites:)``.
    public var hostSites: [String: String]
    /// A folder holding copies of the Firebase JS SDK, served at `/__/firebase/<version>/<file>`
    /// from `<folder>/<version>/<file>` (or `<folder>/<file>` when the folder's name ends with
    /// the version, as `firebase-js-sdk-8.10.1` does); nil, or a version it lacks, redirects
    /// to Google's copy.
    public var sdkFolder: URL?

    public init(folder: URL, configuration: HostingConfiguration, hostSites: [String: String] = [:], sdkFolder: URL? = nil) {
        self.folder = folder
        self.configuration = configuration
        self.hostSites = hostSites
        self.sdkFolder = sdkFolder
    }

    /// Reads `<folder>/firebase.json` and checks that each site's public folder exists.
    /// - Throws: ``HostingConfigurationError`` for a bad file (naming the key), or
    ///   ``Problem`` when the file or a public folder cannot be found.
    public static func load(folder: URL, hostSites: [String: String] = [:], sdkFolder: URL? = nil) throws -> HostingSettings {
        let file = folder.appendingPathComponent("firebase.json")
        guard let bytes = FileManager.default.contents(atPath: file.path) else {
            throw Problem(description: "cannot read \(file.path): a hosting folder holds a firebase.json")
        }
        let configuration = try HostingConfiguration(firebaseJSON: Array(bytes))
        for site in configuration.sites {
            var isFolder: ObjCBool = false
            let publicFolder = folder.appendingPathComponent(site.publicFolder)
            guard FileManager.default.fileExists(atPath: publicFolder.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw Problem(description: "\(file.path): the public folder \(site.publicFolder) is not a folder")
            }
        }
        if let sdkFolder {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: sdkFolder.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw Problem(description: "the SDK folder \(sdkFolder.path) is not a folder")
            }
        }
        return HostingSettings(folder: folder, configuration: configuration, hostSites: hostSites, sdkFolder: sdkFolder)
    }

    /// A hosting folder that cannot be served.
    public struct Problem: Error, CustomStringConvertible {
        public var description: String
    }
}
