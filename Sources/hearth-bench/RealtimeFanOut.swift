import ArgumentParser
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One write delivered to many realtime-protocol (WebSocket) listeners: the time from sending
/// the write to each listener receiving its data push. The WebSocket counterpart of `fanout`,
/// with the same writes (a REST PUT 100 ms after every listener has the previous one), so the
/// two compare directly.
struct RealtimeFanOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws-fanout",
        abstract: "Measure delivery latency of one write to N WebSocket (realtime protocol) listeners."
    )

    @Option var host: String = "127.0.0.1"
    @Option var port: Int = 9000
    @Option(help: "The database (ns) to listen and write in.") var namespace: String = "default"
    @Option(help: "Listeners to connect.") var listeners: Int = 1000
    @Option(help: "Writes to measure (each one reaches every listener).") var writes: Int = 20
    @Option(help: "Client processes to spread the listeners over (this one and ws-worker children).") var processes: Int = 1
    @Option(help: "Event loop threads in each client process.") var threads: Int = 2
    @Option(help: "A bearer token for the writes (none: the rules must allow them).") var token: String?
    @Option(
        help: """
            Other nodes of a cluster (repeatable): the listeners are spread evenly over --port and these, \
            in this process; the writes go to --port.
            """)
    var alsoPort: [Int] = []

    func run() async throws {
        guard processes >= 1, listeners >= processes else { throw ValidationError("need 1 ≤ --processes ≤ --listeners") }
        if !alsoPort.isEmpty {
            guard processes == 1 else { throw ValidationError("--also-port spreads the listeners of one process: leave --processes at 1") }
            return try await runOnCluster()
        }
        SSELoadClient.raiseFileLimit()
        let shares = RealtimeWorkers.shares(of: listeners, parts: processes)
        let workers = try RealtimeWorkers(arguments: shares.dropFirst().map { share in
            [
                "--host", host, "--port", String(port), "--namespace", namespace, "--connections", String(share),
                "--path", "/fanout", "--threads", String(threads),
            ]
        })
        let client = RealtimeLoadClient(host: host, port: port, namespace: namespace, threads: threads)
        try await client.open(count: shares[0]) { _ in .listen(path: "/fanout") }
        guard await client.wait(for: .listensAcknowledged, toReach: shares[0], timeout: .seconds(300)) else {
            throw ValidationError(
                "only \(client.listensAcknowledged.load(ordering: .relaxed)) of \(shares[0]) listens acknowledged. \(client.problems ?? "")")
        }
        try await workers.waitUntilReady(timeout: .seconds(300))
        // A listen's first push is the data already there (perhaps an earlier run's stamp).
        client.latencies.withLock { $0.removeAll() }
        let baseline = client.deliveries.load(ordering: .relaxed)
        func delivered() -> Int { client.deliveries.load(ordering: .relaxed) - baseline + workers.seen }

        let url = "http://\(host):\(port)/fanout/last.json?ns=\(namespace)"
        for index in 0..<writes {
            let before = delivered()
            let stamp = SSELoadClient.now()
            try await put(url, body: #"{"stamp":\#(stamp),"n":\#(index)}"#)
            let deadline = ContinuousClock.now + .seconds(30)
            while delivered() < before + listeners, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let (childLatencies, childProblems) = await workers.finish()
        let samples = (client.latencies.withLock { $0 } + childLatencies).sorted()
        let problems = ([client.problems].compactMap { $0 } + childProblems).joined(separator: "; ")
        await client.shutdown()
        guard !samples.isEmpty else { throw ValidationError("no pushes arrived. \(problems)") }
        func percentile(_ p: Double) -> Double {
            Double(samples[min(samples.count - 1, Int(Double(samples.count) * p))]) / 1e6
        }
        let line = String(
            format: "| fan-out to %d WebSocket listeners (%d client process%@) | p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d deliveries of %d) |\n",
            listeners, processes, processes == 1 ? "" : "es", percentile(0.5), percentile(0.99), percentile(1.0),
            samples.count, listeners * writes
        )
        FileHandle.standardOutput.write(Data(line.utf8))
        if !problems.isEmpty { FileHandle.standardError.write(Data("problems: \(problems)\n".utf8)) }
    }

    /// The same measurement with the listeners spread over several nodes of a cluster.
    private func runOnCluster() async throws {
        SSELoadClient.raiseFileLimit()
        let ports = [port] + alsoPort
        let shares = RealtimeWorkers.shares(of: listeners, parts: ports.count)
        var clients: [RealtimeLoadClient] = []
        for (nodePort, share) in zip(ports, shares) {
            let client = RealtimeLoadClient(host: host, port: nodePort, namespace: namespace, threads: threads)
            try await client.open(count: share) { _ in .listen(path: "/fanout") }
            guard await client.wait(for: .listensAcknowledged, toReach: share, timeout: .seconds(300)) else {
                throw ValidationError("only \(client.listensAcknowledged.load(ordering: .relaxed)) of \(share) listens acknowledged on port \(nodePort). \(client.problems ?? "")")
            }
            clients.append(client)
        }
        for client in clients { client.latencies.withLock { $0.removeAll() } }
        let baseline = clients.reduce(0) { $0 + $1.deliveries.load(ordering: .relaxed) }
        func delivered() -> Int { clients.reduce(0) { $0 + $1.deliveries.load(ordering: .relaxed) } - baseline }
        let url = "http://\(host):\(port)/fanout/last.json?ns=\(namespace)"
        for index in 0..<writes {
            let before = delivered()
            try await put(url, body: #"{"stamp":\#(SSELoadClient.now()),"n":\#(index)}"#)
            let deadline = ContinuousClock.now + .seconds(30)
            while delivered() < before + listeners, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(1))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        var perNode: [String] = []
        var all: [UInt64] = []
        for (client, nodePort) in zip(clients, ports) {
            let samples = client.latencies.withLock { $0 }.sorted()
            all += samples
            if !samples.isEmpty {
                perNode.append(String(format: "port %d p50 %.1f ms", nodePort, Double(samples[samples.count / 2]) / 1e6))
            }
            await client.shutdown()
        }
        all.sort()
        guard !all.isEmpty else { throw ValidationError("no pushes arrived") }
        func percentile(_ p: Double) -> Double { Double(all[min(all.count - 1, Int(Double(all.count) * p))]) / 1e6 }
        let line = String(
            format: "| fan-out to %d WebSocket listeners over %d nodes, written on the first | p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d deliveries of %d; %@) |\n",
            listeners, ports.count, percentile(0.5), percentile(0.99), percentile(1.0), all.count, listeners * writes,
            perNode.joined(separator: ", "))
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    private func put(_ url: String, body: String) async throws {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "PUT"
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (_, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            throw ValidationError("PUT \(url) failed: \(response)")
        }
    }
}
