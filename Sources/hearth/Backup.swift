import ArgumentParser
import Foundation
import HearthBackup
import HearthServer

/// `hearth backup`: an online, consistent copy of a data folder, while its server runs.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a data folder (databases with their history, accounts, stored files), and its functions, while its server keeps running.",
        discussion: """
            SQLite's online backup copies each database without stopping writes. The copy goes \
            to <destination>.partial and is renamed once whole; hearth-backup.json in it lists \
            every file with its SHA-256. Bring it back with `hearth restore <destination>`. \
            With --functions, the functions folder's source goes to functions/ in the backup, \
            without venv/, .venv/, __pycache__/, node_modules/ and *.pyc (rebuilt from the source), \
            and without links that lead out of the folder. \
            For a cluster, back up PostgreSQL and the shared files folder instead (docs/operations.md).
            """)

    @Argument(help: "The folder to create for the backup.")
    var destination: String

    @Option(name: .long, help: "The data folder to copy.")
    var data: String = "hearth-data"

    @Option(name: .long, help: "Where the server keeps stored files, if it was started with --files-dir.")
    var filesDir: String?

    @Option(name: .long, help: "The functions folder the server runs (hearth serve --functions), copied too.")
    var functions: String?

    @Flag(name: .long, help: "Print nothing but errors.")
    var quiet = false

    func run() async throws {
        let backup = DataFolderBackup(
            source: URL(fileURLWithPath: data), filesDirectory: filesDir.map { URL(fileURLWithPath: $0, isDirectory: true) },
            functionsFolder: functions.map { URL(fileURLWithPath: $0, isDirectory: true) }, clock: TimeArguments.now)
        let bar = ProgressBar(label: "Backing up", total: 100)
        let manifest: BackupManifest
        do {
            manifest = try backup.write(to: URL(fileURLWithPath: destination)) { progress in
                guard !quiet else { return }
                bar.update(Int(progress.doneBytes * 100 / max(progress.totalBytes, 1)))
            }
        } catch let error as BackupError {
            throw ValidationError(error.description)
        }
        if !quiet {
            bar.finish()
            let databases = manifest.databases.map { "\($0.name) (to write \($0.sequence))" }.joined(separator: ", ")
            print("""
                Backed up \(data) to \(destination): \(manifest.files.count) files, \(manifest.totalBytes) bytes, \
                in \(Double(manifest.finishedAt - manifest.startedAt) / 1000) s.
                  Databases: \(databases.isEmpty ? "none" : databases)
                  Stored files: \(manifest.objects)
                """)
            if let entry = manifest.functions {
                let count = manifest.files.filter(manifest.isFunctionsFile).count
                print("  Functions: \(count) files of \(entry.source)")
                if !entry.linksLeftOut.isEmpty {
                    print("  Links left out (out of the folder, to a folder, or to nothing): \(entry.linksLeftOut.joined(separator: ", "))")
                }
            }
        }
    }
}
