import Foundation
import PackagePlugin

/// Compiles a target's `Resources` folder into the target itself, so a program built from it
/// carries those files and needs no resource bundle beside it at run time (a `hearth` binary
/// copied alone to a server still serves the web app).
///
/// Each build lists the folder's files (all but hidden ones, such as `.DS_Store`) and has
/// `hearth-embed` write them into one Swift source declaring `EmbeddedResources`: its
/// `paths` and `contents(of:)`. The list is made anew on every build, so an added, changed or
/// removed file is picked up; with nothing changed the step does not run. A target using the
/// plugin excludes the folder (`exclude: ["Resources"]`): it is not a bundle of resources.
@main
struct EmbedResources: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let folder = target.directoryURL.appending(path: "Resources", directoryHint: .isDirectory)
        let paths = try Self.files(in: folder)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedResources.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(paths.count) files of \(target.name)/Resources",
                executable: try context.tool(named: "hearth-embed").url,
                arguments: [output.path(percentEncoded: false), folder.path(percentEncoded: false)] + paths,
                inputFiles: paths.map { folder.appending(path: $0) },
                outputFiles: [output])
        ]
    }

    /// The paths of the files under `folder`, relative to it, hidden files and folders left out.
    static func files(in folder: URL) throws -> [String] {
        guard let walk = FileManager.default.enumerator(
            at: folder, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { throw PluginError("cannot list \(folder.path(percentEncoded: false))") }
        var root = folder.standardizedFileURL.path(percentEncoded: false)
        if !root.hasSuffix("/") { root += "/" }
        var paths: [String] = []
        for case let url as URL in walk where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            let path = url.standardizedFileURL.path(percentEncoded: false)
            guard path.hasPrefix(root) else { throw PluginError("\(path) is outside \(root)") }
            paths.append(String(path.dropFirst(root.count)))
        }
        guard !paths.isEmpty else { throw PluginError("\(root) holds no files to embed") }
        return paths.sorted()
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
