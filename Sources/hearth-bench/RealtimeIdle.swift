import ArgumentParser
import Foundation
import Synchronization

/// Holds many idle realtime-protocol (WebSocket) connections open against a Hearth server, each
/// listening at a small path of its own, and reports the server's memory per connection (from
/// /proc/<pid>/status). The WebSocket counterpart of `idle`.
struct RealtimeIdle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws-idle",
        abstract: "Open N idle WebSocket connections (one listen each) to a Hearth server and report its memory per connection."
    )

    @Option var host: String = "127.0.0.1"
    @Option var port: Int = 9000
    @Option(help: "The database (ns) to listen in.") var namespace: String = "default"
    @Option(help: "The server's process ID, to read its memory.") var serverPid: Int32
    @Option(help: "Connections to open.") var connections: Int = 18_000
    @Option(help: "Seconds to hold them open after the last one is ready.") var hold: Double = 5
    @Option(help: "Client processes to spread the connections over (when one's file limit or ports do not suffice).")
    var processes: Int = 1
    @Flag(help: "Listen nowhere: only the handshake (measures the WebSocket connection alone).") var bare = false

    func run() async throws {
        guard processes >= 1, connections >= processes else { throw ValidationError("need 1 ≤ --processes ≤ --connections") }
        SSELoadClient.raiseFileLimit()
        let before = Self.residentKilobytes(serverPid)
        let shares = RealtimeWorkers.shares(of: connections, parts: processes)
        // Children take the later shares; their paths continue the numbering of this process's.
        let workers = try RealtimeWorkers(arguments: shares.indices.dropFirst().map { part in
            [
                "--host", host, "--port", String(port), "--namespace", namespace, "--connections", String(shares[part]),
                "--path", "/idle", "--distinct", "--first", String(shares[..<part].reduce(0, +)),
            ] + (self.bare ? ["--bare"] : [])
        })
        let client = RealtimeLoadClient(host: host, port: port, namespace: namespace)
        let bare = self.bare
        try await client.open(count: shares[0]) { index in bare ? .greet : .listen(path: "/idle/\(index)") }
        let counter: RealtimeLoadClient.Counter = bare ? .greeted : .listensAcknowledged
        guard await client.wait(for: counter, toReach: shares[0], timeout: .seconds(300)) else {
            throw ValidationError("only \(client.count(counter)) of \(shares[0]) connections ready. \(client.problems ?? "")")
        }
        try await workers.waitUntilReady(timeout: .seconds(300))
        try await Task.sleep(for: .seconds(hold))
        let after = Self.residentKilobytes(serverPid)
        // Connections the server dropped while held would flatter the figure: say so.
        let (_, childProblems) = await workers.finish()
        let problems = ([client.problems].compactMap { $0 } + childProblems).joined(separator: "; ")
        let perConnection = Double(after - before) / Double(connections)
        let line = String(
            format: "| %d idle WebSocket connections%@ held by one server | server RSS %.0f MB → %.0f MB, %.1f KB per connection |\n",
            connections, bare ? " (no listens)" : ", one listen each,", Double(before) / 1024, Double(after) / 1024, perConnection
        )
        FileHandle.standardOutput.write(Data(line.utf8))
        if !problems.isEmpty { FileHandle.standardError.write(Data("problems: \(problems)\n".utf8)) }
        await client.shutdown()
    }

    static func residentKilobytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
