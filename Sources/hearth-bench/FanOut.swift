import ArgumentParser
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One write delivered to many SSE listeners: the time from sending the write to each
/// listener receiving its event, against Hearth or PocketBase.
struct FanOut: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Measure delivery latency of one write to N SSE listeners (Hearth or PocketBase)."
    )

    enum Target: String, ExpressibleByArgument { case hearth, pocketbase }

    @Option var target: Target = .hearth
    @Option var host: String = "127.0.0.1"
    @Option var port: Int = 9000
    @Option(help: "Listeners to connect.") var listeners: Int = 1000
    @Option(help: "Writes to measure (each one reaches every listener).") var writes: Int = 20
    @Option(help: "Event loop threads in this client.") var threads: Int = 2

    func run() async throws {
        SSELoadClient.raiseFileLimit()
        let client = SSELoadClient(host: host, port: port, threads: threads)
        let base = "http://\(host):\(port)"

        switch target {
        case .hearth:
            let request = "GET /bench/fan.json HTTP/1.1\r\nHost: \(host)\r\nAccept: text/event-stream\r\n\r\n"
            try await client.open(count: listeners, request: request)
        case .pocketbase:
            try await openPocketBase(client, base: base)
        }
        guard await client.waitForEvents(listeners, timeout: .seconds(120)) else {
            throw ValidationError("only \(client.eventsSeen.withLock { $0 }) of \(listeners) listeners connected")
        }
        client.latencies.withLock { $0.removeAll() }

        for index in 0..<writes {
            let before = client.eventsSeen.withLock { $0 }
            let stamp = SSELoadClient.now()
            switch target {
            case .hearth:
                try await send("PUT", "\(base)/bench/fan/last.json", body: #"{"stamp":\#(stamp),"n":\#(index)}"#)
            case .pocketbase:
                try await send("POST", "\(base)/api/collections/fan/records", body: #"{"stamp":\#(stamp),"n":\#(index)}"#)
            }
            _ = await client.waitForEvents(before + listeners, timeout: .seconds(30))
            try await Task.sleep(for: .milliseconds(100))
        }
        let samples = client.latencies.withLock { $0 }.sorted()
        await client.shutdown()
        guard !samples.isEmpty else { throw ValidationError("no events arrived") }
        func percentile(_ p: Double) -> Double {
            Double(samples[min(samples.count - 1, Int(Double(samples.count) * p))]) / 1e6
        }
        let line = String(
            format: "| fan-out to %d SSE listeners (%@) | p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d deliveries of %d) |\n",
            listeners, target.rawValue, percentile(0.5), percentile(0.99), percentile(1.0), samples.count, listeners * writes
        )
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    /// PocketBase's realtime protocol: connect, read the client ID, then subscribe by POST.
    private func openPocketBase(_ client: SSELoadClient, base: String) async throws {
        let request = "GET /api/realtime HTTP/1.1\r\nHost: \(host)\r\nAccept: text/event-stream\r\n\r\n"
        try await client.open(count: listeners, request: request)
        guard await client.waitForEvents(listeners, timeout: .seconds(120)) else {
            throw ValidationError("PocketBase did not greet every listener")
        }
        let ids = client.clientIDs.withLock { $0 }
        guard ids.count == listeners else { throw ValidationError("got \(ids.count) PocketBase client IDs") }
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for (offset, id) in ids.enumerated() {
                if offset >= 50 { try await tasks.next() }
                tasks.addTask {
                    try await send("POST", "\(base)/api/realtime", body: #"{"clientId":"\#(id)","subscriptions":["fan"]}"#, expect: 204)
                }
            }
            try await tasks.waitForAll()
        }
    }

    private func send(_ method: String, _ url: String, body: String, expect: Int = 200) async throws {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (_, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == expect else {
            throw ValidationError("\(method) \(url) failed: \(response)")
        }
    }
}
