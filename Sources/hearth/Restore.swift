import ArgumentParser
import Foundation
import HearthBackup
import HearthCore
import HearthServer
import HearthStore

/// `hearth restore`: a backup back into a data folder, and a database back to a moment of its
/// history.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Restore a backup, or a database to a moment of its history (--to).",
        discussion: """
            hearth restore <backup> --data <folder>
                brings a backup made by `hearth backup` back (checked file by file first). \
            A folder that holds data is moved aside only with --force. \
            With --functions <folder>, the functions folder the backup holds comes back there too, \
            by the same rule; make its venv/ again (docs/functions.md).
            hearth restore --data <folder> --database <name> --to <sequence|time>
                rebuilds the database as it was just after that write, or at that time (ISO 8601), \
            from the history the server keeps (`hearth serve --history`; list it with `hearth history`). \
            The current database is moved aside whole, so this can be undone; with --as the result \
            becomes a new database instead. The server must be stopped, except with --json, which \
            writes the value at --path as it was then to a file and changes nothing.
            Both together restore the backup, then take that database back to the moment.
            """)

    @Argument(help: "A backup folder made by `hearth backup` (or by `hearth serve --backup-every`).")
    var backup: String?

    @Option(name: .long, help: "A write's sequence number or an ISO 8601 time to take --database back to.")
    var to: String?

    @Option(name: .customLong("as"), help: "Restore into a new database of this name, next to the original.")
    var newName: String?

    @Option(name: .long, help: "Write the value at --path as it was at --to to this JSON file instead (the server may run).")
    var json: String?

    @Option(name: .long, help: "With --json: the path to write (default: the root).")
    var path: String = "/"

    @Option(name: .long, help: "Put stored files' content here instead of files/ in the data folder.")
    var filesDir: String?

    @Option(name: .long, help: "With a backup: put the functions folder it holds here (for hearth serve --functions).")
    var functions: String?

    @Flag(name: .long, help: "Move a data folder (or functions folder) that already holds something aside (to <folder>.before-restore-<time>).")
    var force = false

    @OptionGroup var data: DataOptions

    func validate() throws {
        guard backup != nil || to != nil else {
            throw ValidationError("Give a backup folder to restore, or --to with a sequence number or time.")
        }
        if to == nil, newName != nil || json != nil {
            throw ValidationError("--as and --json go with --to.")
        }
        if newName != nil, json != nil { throw ValidationError("Use either --as or --json.") }
        if functions != nil, backup == nil { throw ValidationError("--functions goes with a backup folder to restore.") }
        if let to { _ = try TimeArguments.target(to) }
    }

    func run() async throws {
        do {
            if let backup { try restoreBackup(URL(fileURLWithPath: backup)) }
            if let to { try restoreDatabase(to: try TimeArguments.target(to)) }
        } catch let error as BackupError {
            throw ValidationError(error.description)
        } catch let error as StoreError {
            throw ValidationError(error.message)
        }
    }

    private func restoreBackup(_ backup: URL) throws {
        let bar = ProgressBar(label: "Restoring", total: 100)
        let outcome = try BackupRestore(backup: backup, clock: TimeArguments.now).restore(
            into: data.dataURL, filesDirectory: filesDir.map { URL(fileURLWithPath: $0, isDirectory: true) },
            functionsFolder: functions.map { URL(fileURLWithPath: $0, isDirectory: true) }, replacing: force
        ) { done, total in
            bar.update(Int(done * 100 / max(total, 1)))
        }
        bar.finish()
        print("Restored the backup of \(TimeArguments.describe(outcome.manifest.startedAt)) into \(data.data).")
        if let previous = outcome.previous { print("  The data that was there is in \(previous.path).") }
        if let entry = outcome.manifest.functions {
            if let functions {
                print("  The functions of \(entry.source) are in \(functions) (a Python folder needs its venv/ made again).")
            } else {
                print("  The backup holds the functions of \(entry.source) too: restore them with --functions <folder>.")
            }
        }
        if let previous = outcome.previousFunctions { print("  The functions folder that was there is in \(previous.path).") }
    }

    private func restoreDatabase(to target: DatabaseHistory.Target) throws {
        let databaseFolder = data.dataURL.appendingPathComponent("databases").appendingPathComponent(data.database)
        if let json {
            let history = try DatabaseHistory(folder: databaseFolder)
            let sequence = try history.sequence(for: target)
            let value = try history.tree(at: sequence).child(at: try DataOptions.path(path))
            var output = JSONWriter(format: .init(pretty: true, export: true))
            output.write(value)
            try Data(output.output + Array("\n".utf8)).write(to: URL(fileURLWithPath: json))
            print("Wrote \(path) of \(data.database) as of write \(sequence) to \(json).")
            return
        }
        let folder = try data.openFolder(logger: .cli())
        let restored = try folder.restoreDatabase(named: data.database, to: target, as: newName, now: TimeArguments.now())
        print("Restored \(restored.database) to write \(restored.sequence).")
        if let previous = restored.previous {
            print("  The database as it was is kept in \(previous.path) (move it back to undo).")
        }
    }
}
