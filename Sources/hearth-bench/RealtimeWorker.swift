import ArgumentParser
import Foundation
import Synchronization

/// A share of another `ws-*` command's listeners, in a process of its own (`--processes`):
/// one process can hold only as many sockets as its file limit and the ephemeral ports allow.
/// It talks to its parent in lines: `ready` once every listen is acknowledged, `seen <n>` as
/// stamped values arrive, and, when its standard input closes, `latency <ns>…` and
/// `problems <text>` before it exits. Not meant to be run by hand.
struct RealtimeWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws-worker",
        abstract: "Hold a share of a ws-fanout or ws-idle run's listeners (started by those commands).",
        shouldDisplay: false
    )

    @Option var host: String = "127.0.0.1"
    @Option var port: Int = 9000
    @Option var namespace: String = "default"
    @Option(help: "Connections to open.") var connections: Int
    @Option(help: "The path every connection listens at; with --distinct, the parent of their own paths.") var path: String
    @Option(help: "With --distinct, the first connection's number.") var first: Int = 0
    @Flag(help: "Listen at <path>/<number>, one path per connection.") var distinct = false
    @Flag(help: "Listen nowhere: only wait for each connection's handshake.") var bare = false
    @Option var threads: Int = 2

    func run() async throws {
        SSELoadClient.raiseFileLimit()
        let client = RealtimeLoadClient(host: host, port: port, namespace: namespace, threads: threads)
        let (path, first, distinct, bare) = (self.path, self.first, self.distinct, self.bare)
        try await client.open(count: connections) { index in
            bare ? .greet : .listen(path: distinct ? "\(path)/\(first + index)" : path)
        }
        let counter: RealtimeLoadClient.Counter = bare ? .greeted : .listensAcknowledged
        guard await client.wait(for: counter, toReach: connections, timeout: .seconds(300)) else {
            Self.say("problems only \(client.count(counter)) of \(connections) connections ready. \(client.problems ?? "")")
            throw ExitCode.failure
        }
        client.latencies.withLock { $0.removeAll() }
        let baseline = client.deliveries.load(ordering: .relaxed)
        Self.say("ready")

        // Report arrivals until the parent closes our input (read on a thread of its own: it blocks).
        let ended = StopSignal()
        Thread.detachNewThread {
            while readLine() != nil {}
            ended.value.store(true, ordering: .relaxed)
        }
        var reported = 0
        while !ended.value.load(ordering: .relaxed) {
            let seen = client.deliveries.load(ordering: .relaxed) - baseline
            if seen != reported {
                reported = seen
                Self.say("seen \(seen)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        let samples = client.latencies.withLock { $0 }
        Self.say("latency " + samples.map(String.init).joined(separator: " "))
        Self.say("problems \(client.problems ?? "")")
        await client.shutdown()
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

/// A flag one thread sets and another polls.
final class StopSignal: Sendable {
    let value = Atomic<Bool>(false)
}
