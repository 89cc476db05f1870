import ArgumentParser
import Foundation
import HearthCore
import HearthStore

/// `hearth export`: writes the value at a path as JSON, streaming it out in chunks.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export the value at --path as JSON to a file or standard output (the server must be stopped)."
    )

    @Option(name: .long, help: "What to export (default: the root).")
    var path: String = "/"

    @Option(name: [.short, .long], help: "The file to write (default: standard output).")
    var output: String?

    @Flag(name: .long, help: "Indent the output.")
    var pretty = false

    @Flag(name: .long, help: "Include priorities (Firebase's format=export).")
    var priorities = false

    @OptionGroup var data: DataOptions

    func run() async throws {
        let target = try DataOptions.path(path)
        let folder = try data.openFolder(logger: .cli())
        let database = try folder.database(named: data.database)
        let value = database.value(at: target)

        let handle: FileHandle
        if let output {
            guard FileManager.default.createFile(atPath: output, contents: nil) else {
                throw ValidationError("cannot create \(output)")
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        } else {
            handle = FileHandle.standardOutput
        }
        let bar = ProgressBar(label: "Exporting", total: value.estimatedSize)
        var written = 0
        var writer = JSONWriter(format: .init(pretty: pretty, export: priorities)) { chunk in
            try handle.write(contentsOf: Data(chunk))
            written += chunk.count
            bar.update(written)
        }
        try writer.writeFlushing(value)
        try handle.write(contentsOf: Data("\n".utf8))
        if output != nil { try handle.close() }
        bar.finish()
    }
}
