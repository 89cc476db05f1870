import HearthEngine
import ServiceLifecycle

/// Fills the ``MetricsHistory`` from the start of the server, whether or not anyone looks: a
/// sample at once, then one every ``MetricsHistory/interval``, read from the same figures
/// `/metrics` serves (its gauges read first, as a scrape does).
struct MetricsHistoryService: Service {
    let history: MetricsHistory
    let metrics: MetricsResponder
    /// Server time in milliseconds since the epoch.
    let clock: @Sendable () -> Int64

    func run() async throws {
        await sample()
        await repeatUntilShutdown(every: history.interval) { await sample() }
    }

    /// Reads the figures once and keeps them.
    func sample() async {
        await metrics.recordGauges()
        history.record(MetricsSample(exposition: String(decoding: metrics.metrics.exposition(), as: UTF8.self), time: clock()))
    }
}
