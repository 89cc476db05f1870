import ArgumentParser

/// `hearth-bench`: the benchmarks that BENCHMARKS.md reports.
@main
struct HearthBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hearth-bench",
        abstract: "Hearth's benchmarks: in-process engine figures, SSE and WebSocket load, and the bare HTTP ceiling server.",
        subcommands: [
            InProcess.self, Restart.self, FanOut.self, IdleStreams.self, Ceiling.self,
            RealtimeFanOut.self, RealtimeIdle.self, RealtimeWrites.self, RealtimeWorker.self, ClientEvents.self, ClientSync.self, ClientBench.self,
            Soak.self,
        ]
    )
}
