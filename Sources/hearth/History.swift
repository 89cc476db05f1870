import ArgumentParser
import Foundation
import HearthCore
import HearthStore

/// `hearth history`: the writes a database's history keeps, to choose a point to restore to.
struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a database's latest writes with their sequence numbers and times (works while the server runs).")

    @Option(name: .long, help: "Only writes at, under or above this path.")
    var path: String = "/"

    @Option(name: .long, help: "How many writes to list (the newest).")
    var limit: Int = 20

    @Option(name: .long, help: "Only writes before this sequence number.")
    var before: Int64?

    @OptionGroup var data: DataOptions

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be positive.") }
    }

    func run() async throws {
        let history: DatabaseHistory
        do {
            history = try DatabaseHistory(folder: data.dataURL.appendingPathComponent("databases").appendingPathComponent(data.database))
        } catch let error as StoreError {
            throw ValidationError(error.message)
        }
        guard let range = try history.range() else {
            print("\(data.database) has no writes.")
            return
        }
        let start = range.earliestTime.map { " (\(TimeArguments.describe($0)))" } ?? ""
        print("\(data.database) can be restored to any write from \(range.earliestSequence)\(start) to \(range.latestSequence).")
        let entries = try history.entries(limit: limit, under: try DataOptions.path(path), before: before)
        guard !entries.isEmpty else { return }
        print("")
        print("SEQUENCE  COMMITTED                 KIND    BYTES  PATH")
        for entry in entries {
            let time = entry.committedAt.map(TimeArguments.describe) ?? "-"
            print(
                String(entry.sequence).padding(toLength: 9, withPad: " ", startingAt: 0) + " "
                    + time.padding(toLength: 25, withPad: " ", startingAt: 0) + " "
                    + entry.kind.padding(toLength: 7, withPad: " ", startingAt: 0) + " "
                    + String(entry.bytes).padding(toLength: 6, withPad: " ", startingAt: 0) + " " + entry.path)
        }
    }
}
