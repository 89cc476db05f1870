import ArgumentParser
import Foundation
import Synchronization

/// Holds many idle SSE connections open against a Hearth server and reports the server's
/// memory per connection (from /proc/<pid>/status).
struct IdleStreams: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Open N idle SSE streams to a Hearth server and report its memory per stream."
    )

    @Option var host: String = "127.0.0.1"
    @Option var port: Int = 9000
    @Option(help: "The server's process ID, to read its memory.") var serverPid: Int32
    @Option(help: "Streams to open.") var streams: Int = 15_000
    @Option(help: "Seconds to hold them open after the last one connects.") var hold: Double = 5
    @Flag(help: "Open bare connections that send no request (measures the HTTP layer alone).") var bare = false

    func run() async throws {
        SSELoadClient.raiseFileLimit()
        let before = residentKilobytes(serverPid)
        let client = SSELoadClient(host: host, port: port)
        let request = bare ? "" : "GET /bench/idle.json HTTP/1.1\r\nHost: \(host)\r\nAccept: text/event-stream\r\n\r\n"
        try await client.open(count: streams, request: request)
        let connected = bare ? true : await client.waitForEvents(streams, timeout: .seconds(300))
        guard connected else {
            throw ValidationError("only \(client.eventsSeen.withLock { $0 }) of \(streams) streams got their first event")
        }
        try await Task.sleep(for: .seconds(hold))
        let after = residentKilobytes(serverPid)
        let perStream = Double(after - before) * 1024 / Double(streams)
        let line = String(
            format: "| %d idle SSE streams held by one server | server RSS %.0f MB → %.0f MB, %.1f KB per stream |\n",
            streams, Double(before) / 1024, Double(after) / 1024, perStream / 1024
        )
        FileHandle.standardOutput.write(Data(line.utf8))
        await client.shutdown()
    }

    private func residentKilobytes(_ pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }
}
