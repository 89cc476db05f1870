import Foundation
import HearthSpawn
import Synchronization

/// The `ws-worker` processes a `ws-*` command spreads its listeners over (`--processes`), and
/// what they report. Each child's output is read on a thread of its own, line by line.
final class RealtimeWorkers: Sendable {
    private struct Child {
        var ready = false
        var seen = 0
        var latencies: [UInt64]?
        var problems: String?
        var exited = false
    }

    private let processes: [ChildProcess]
    private let children: Mutex<[Child]>

    /// Starts one `ws-worker` per entry of `arguments` (each its command-line options).
    init(arguments: [[String]]) throws {
        var processes: [ChildProcess] = []
        for options in arguments {
            processes.append(try ChildProcess(
                URL(fileURLWithPath: "/proc/self/exe"), arguments: ["ws-worker"] + options, input: .pipe, output: .pipe, ownGroup: false))
        }
        self.processes = processes
        self.children = Mutex(Array(repeating: Child(), count: arguments.count))
        for (index, process) in processes.enumerated() {
            guard let output = process.output else { continue }
            Thread.detachNewThread { [self] in read(output, child: index) }
        }
    }

    private func read(_ handle: FileHandle, child index: Int) {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending += chunk
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending = Data(pending[(newline + 1)...])
                take(line: line, child: index)
            }
        }
        children.withLock { $0[index].exited = true }
    }

    private func take(line: String, child index: Int) {
        let (word, rest) = line.firstIndex(of: " ").map { (line[..<$0], line[line.index(after: $0)...]) } ?? (line[...], ""[...])
        children.withLock { children in
            switch word {
            case "ready": children[index].ready = true
            case "seen": children[index].seen = Int(rest) ?? children[index].seen
            case "latency": children[index].latencies = rest.split(separator: " ").compactMap { UInt64($0) }
            case "problems": children[index].problems = String(rest)
            default: break
            }
        }
    }

    var count: Int { processes.count }
    var allReady: Bool { children.withLock { $0.allSatisfy(\.ready) } }
    /// A child that exited before it was ready has failed; its problems say why.
    var failure: String? {
        children.withLock { children in
            children.first { $0.exited && !$0.ready }.map { "a worker failed: \($0.problems ?? "no output")" }
        }
    }
    /// Stamped values the children's connections have received since they were ready.
    var seen: Int { children.withLock { $0.reduce(0) { $0 + $1.seen } } }

    /// Waits until every child is ready, one fails, or the deadline.
    func waitUntilReady(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !allReady {
            if let failure { throw RealtimeLoadError(failure) }
            guard ContinuousClock.now < deadline else { throw RealtimeLoadError("workers were not ready in time") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Ends the children (closes their input) and collects their latencies and problems.
    func finish() async -> (latencies: [UInt64], problems: [String]) {
        for process in processes { try? process.input?.close() }
        let deadline = ContinuousClock.now + .seconds(60)
        while !children.withLock({ $0.allSatisfy(\.exited) }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        for process in processes { process.terminate() }
        return children.withLock { children in
            (children.flatMap { $0.latencies ?? [] }, children.compactMap { $0.problems }.filter { !$0.isEmpty })
        }
    }

    /// Splits `total` connections into `parts` nearly equal shares.
    static func shares(of total: Int, parts: Int) -> [Int] {
        (0..<parts).map { total / parts + ($0 < total % parts ? 1 : 0) }
    }
}
