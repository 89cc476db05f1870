import ArgumentParser
import Foundation
import HearthCore
import HearthStore
import Logging

/// Restart time: opening a database whose snapshot holds a large tree.
struct Restart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Time opening a database holding N leaf nodes (snapshot load plus log replay)."
    )

    @Option(help: "Leaf nodes in the tree (spread over objects of 100 children each).")
    var nodes: Int = 1_000_000

    @Option(help: "How many times to reopen.")
    var rounds: Int = 3

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-restart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        do {
            let database = try Database(name: "restart", folder: folder, logger: logger)
            var groups: [(ChildKey, Node)] = []
            for group in 0..<(nodes / 100) {
                var leaves: [(ChildKey, Node)] = []
                for leaf in 0..<100 { leaves.append((ChildKey("field\(leaf)"), .string("value \(group)-\(leaf)"))) }
                groups.append((ChildKey("item\(group)"), .object(Children(entries: leaves))))
            }
            try await database.replace(at: .root, with: .object(Children(entries: groups)))
            database.close()
        }
        var times: [Double] = []
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            let database = try Database(name: "restart", folder: folder, logger: logger)
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            precondition(database.current.state.root.childCount == nodes / 100)
        }
        times.sort()
        let line = String(format: "| restart with %d leaf nodes (%d objects) | best %.2f s, median %.2f s |\n",
                          nodes, nodes / 100, times[0], times[times.count / 2])
        FileHandle.standardOutput.write(Data(line.utf8))
    }
}
