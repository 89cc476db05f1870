import ArgumentParser
import Foundation
import HearthServer

/// `hearth hosting`: deploy the owner's Firebase web app as a release, list the releases and
/// roll back (works while servers run on the folder; they switch on their next request).
struct Hosting: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Deploy your Firebase web app (its firebase.json's hosting), list releases, roll back.",
        subcommands: [Deploy.self, List.self, Rollback.self]
    )

    /// Where the releases are: the files folder's `hosting`.
    struct Location: ParsableArguments {
        @Option(name: .long, help: "The folder that holds the data (releases go in its files folder).")
        var data: String = "hearth-data"

        @Option(name: .customLong("files-dir"), help: "The files folder, when not the data folder's (a cluster's shared folder).")
        var filesDir: String?

        /// The server's own folders, never deployed from a public folder that holds them.
        var serverFolders: [URL] {
            [URL(fileURLWithPath: data, isDirectory: true)] + (filesDir.map { [URL(fileURLWithPath: $0, isDirectory: true)] } ?? [])
        }

        /// - Parameter creating: make the data folder when there is none (a deploy).
        func releases(keep: Int = HostingReleases.defaultKeep, creating: Bool = false) throws -> HostingReleases {
            if creating, filesDir == nil, !FileManager.default.fileExists(atPath: data) {
                // A data folder made here is its owner's alone, as `hearth serve` makes one.
                try FileManager.default.createDirectory(
                    atPath: data, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
            let files = filesDir.map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("files", isDirectory: true)
            return HostingReleases(folder: HostingReleases.folder(inFiles: files), keep: keep)
        }
    }

    struct Deploy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deploy the app in a folder (the one holding firebase.json) as a new release, and make it live.")

        @Argument(help: "The folder holding firebase.json.")
        var folder: String

        @Option(name: .shortAndLong, help: "A note kept with the release.")
        var message: String?

        @Option(name: .long, help: "How many releases to keep (the live one always is).")
        var keep: Int = HostingReleases.defaultKeep

        @OptionGroup var location: Location

        func validate() throws {
            guard keep >= 1 else { throw ValidationError("--keep must be at least 1.") }
        }

        func run() async throws {
            let release = try location.releases(keep: keep, creating: true).deploy(
                from: URL(fileURLWithPath: folder, isDirectory: true), message: message, excluding: location.serverFolders)
            print("Deployed release \(release.id): \(release.files) files, \(Hosting.size(release.bytes)). It is live.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List the releases kept, newest first; * marks the live one.")

        @OptionGroup var location: Location

        func run() async throws {
            let releases = try location.releases()
            let live = releases.currentID()
            let list = releases.list()
            guard !list.isEmpty else {
                print("No release is deployed in \(releases.folder.path).")
                return
            }
            for release in list {
                let mark = release.id == live ? "*" : " "
                let note = release.message.map { "  \($0)" } ?? ""
                print("\(mark) \(release.id)  \(release.created.ISO8601Format())  \(release.files) files  \(Hosting.size(release.bytes))\(note)")
            }
        }
    }

    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make an earlier release live again (default: the one before the live one).")

        @Option(name: .long, help: "The release to make live.")
        var to: String?

        @OptionGroup var location: Location

        func run() async throws {
            let release = try location.releases().rollback(to: to)
            print("Release \(release.id) is live.")
        }
    }

    static func size(_ bytes: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: bytes, countStyle: .file)
    }
}
