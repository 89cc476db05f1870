import ArgumentParser
import Foundation
import HearthCore
import HearthStore

/// `hearth import`: replaces the value at a path with the contents of a JSON file.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import a JSON file into the database, replacing the value at --path (the server must be stopped)."
    )

    @Argument(help: "The JSON file to import.")
    var file: String

    @Option(name: .long, help: "Where to put the data (default: the root).")
    var path: String = "/"

    @OptionGroup var data: DataOptions

    func run() async throws {
        let target = try DataOptions.path(path)
        let url = URL(fileURLWithPath: file)
        // Mapped, not read: the file's pages are paged in as the parser walks them.
        let bytes: Data
        do {
            bytes = try Data(contentsOf: url, options: .alwaysMapped)
        } catch {
            throw ValidationError("cannot read \(file): \(error.localizedDescription)")
        }
        let bar = ProgressBar(label: "Parsing", total: bytes.count)
        let parsed: JSONParser.Parsed
        do {
            parsed = try bytes.withUnsafeBytes { raw in
                try JSONParser.parse(raw.bindMemory(to: UInt8.self)) { done in bar.update(done) }
            }
        } catch let error as HearthError {
            throw ValidationError("\(file) is not valid Firebase data: \(error.message)")
        }
        bar.finish()
        guard target.count + parsed.depth <= Path.maxDepth else {
            throw ValidationError("\(file) nests deeper than 32 levels below the root.")
        }
        guard !parsed.hasServerValues else {
            throw ValidationError("\(file) holds server values ({\".sv\": ...}); imports take plain data.")
        }
        let folder = try data.openFolder(logger: .cli())
        let database = try folder.database(named: data.database)
        FileHandle.standardError.write(Data("Writing \(bytes.count) bytes to \(target) in \(data.database)...\n".utf8))
        try await database.replace(at: target, with: parsed.node)
        folder.close()
        FileHandle.standardError.write(Data("Imported \(file) at \(target).\n".utf8))
    }
}
