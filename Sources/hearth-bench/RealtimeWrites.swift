import ArgumentParser
import Foundation
import Synchronization

/// Durable writes over the realtime protocol: a few WebSocket connections each pipelining `p`
/// requests (new paths, the HTTP benchmark's small post object), counting `ok` answers, which
/// the server sends once the write is committed and fsynced. The WebSocket counterpart of the
/// HTTP section's `POST` row (`wrk -t2 -c16`).
struct RealtimeWrites: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws-writes",
        abstract: "Measure durable writes/s over WebSocket connections that pipeline `p` requests."
    )

    @Option var host: String = "127.0.0.1"
    @Option var port: Int = 9000
    @Option(help: "The database (ns) to write in.") var namespace: String = "default"
    @Option(help: "Connections, each writing under a path of its own.") var connections: Int = 16
    @Option(help: "Seconds to measure, after the warm-up.") var seconds: Double = 10
    @Option(help: "Seconds of writes before measuring starts.") var warmup: Double = 2
    @Option(help: "Unanswered writes each connection keeps in flight.") var pipeline: Int = 64
    @Option(help: "Event loop threads in this client (wrk's -t2 for the HTTP rows).") var threads: Int = 2
    @Option(help: "A credential to send with gauth first (none: the rules must allow the writes).") var token: String?

    func run() async throws {
        guard pipeline >= 1 else { throw ValidationError("--pipeline must be at least 1") }
        let client = RealtimeLoadClient(host: host, port: port, namespace: namespace, threads: threads)
        // Each run writes under fresh paths, so no write replaces an earlier run's.
        let run = String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 36)
        let (depth, token) = (pipeline, self.token)
        try await client.open(count: connections) { index in
            .write(prefix: "/bench/ws-\(run)/c\(index)", depth: depth, credential: token)
        }
        try await Task.sleep(for: .seconds(warmup))
        let start = ContinuousClock.now
        client.measuring.store(true, ordering: .relaxed)
        try await Task.sleep(for: .seconds(seconds))
        client.measuring.store(false, ordering: .relaxed)
        let elapsed = ContinuousClock.now - start
        let count = client.writesAcknowledged.load(ordering: .relaxed)
        let samples = client.writeLatencies.withLock { $0 }.sorted()
        await client.shutdown()
        guard !samples.isEmpty else { throw ValidationError("no write was acknowledged. \(client.problems ?? "")") }
        func percentile(_ p: Double) -> Double {
            Double(samples[min(samples.count - 1, Int(Double(samples.count) * p))]) / 1e6
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let line = String(
            format: "| `p` writes/s (durable), %d WebSocket connections × %d in flight | %.0f/s; latency p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d writes in %.1f s) |\n",
            connections, pipeline, Double(count) / seconds, percentile(0.5), percentile(0.99), percentile(1.0), count, seconds
        )
        FileHandle.standardOutput.write(Data(line.utf8))
        if let problems = client.problems { FileHandle.standardError.write(Data("problems: \(problems)\n".utf8)) }
    }
}
