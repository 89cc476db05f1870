import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HearthCore
import NIOCore
import Synchronization

/// Load and soak: a mix of clients against one server for a set time — REST readers and
/// writers, SSE listeners, realtime clients that listen, write and run transactions — with
/// slow consumers, vanishing clients and idle connections beside them if asked. Reports
/// operations and errors by kind, latency percentiles, the server's memory over time, the
/// run's own correctness checks (transactions on shared counters sum exactly; every listener
/// got every acknowledged write of its room, in order), and a verdict against the targets.
/// Exits with a failure when there was any error.
struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "soak",
        abstract: "Soak a server with a mix of REST, SSE and realtime clients (plus hostile ones) and report errors, latency and memory."
    )

    @Option(help: "The server, such as http://127.0.0.1:9000.") var url: String
    @Option(help: "The admin token: to set up, to read the counters and /.hearth/stats and /metrics (emulator: owner).")
    var token: String?
    @Option(help: "The database (ns); default: the server's.") var namespace: String?
    @Flag(help: "Clients present --token too (otherwise they are anonymous, and the rules must let them in under /soak).")
    var clientsUseToken = false

    @Option(help: "Seconds of load, warm-up included.") var duration: Double = 600
    @Option(help: "Seconds at the start whose latencies are not counted (memory is compared from its end).") var warmup: Double = 60
    @Option(help: "Clients of the mix.") var clients: Int = 1000
    @Option(help: "The mix, in percent of --clients: REST readers, REST writers, SSE listeners, realtime clients.")
    var mix: String = "25,15,30,30"
    @Option(help: "Rooms: each listener listens to one, each writer writes in one.") var rooms: Int = 20
    @Option(help: "Shared counters the realtime clients increment in transactions.") var counters: Int = 8

    @Option(help: "REST reads per second, over all readers.") var readRate: Double = 500
    @Option(help: "REST writes per second, over all writers.") var writeRate: Double = 150
    @Option(help: "Realtime writes per second, over all realtime clients.") var realtimeWriteRate: Double = 150
    @Option(help: "Transactions started per second, over all realtime clients.") var transactionRate: Double = 30

    @Option(help: "Connections that listen to every room and never read their socket.") var slowConsumers: Int = 0
    @Option(help: "Seconds each slow consumer is held before a fresh one replaces it.") var slowSeconds: Double = 60
    @Option(help: "Clients that connect, start something and vanish with a reset, again and again.") var vanishing: Int = 0
    @Option(help: "Seconds a ghost (a vanishing client gone silent) is held before its reset.") var ghostSeconds: Double = 90
    @Option(help: "Extra idle realtime connections (one listen each), in ws-worker processes.") var idleConnections: Int = 0
    @Option(help: "Idle connections per worker process (each process's file limit must hold them).") var idlePerProcess: Int = 9000

    @Option(help: "The server's process ID: its memory is read from /proc/<pid>/status (otherwise from /.hearth/stats).")
    var serverPid: Int32?
    @Option(help: "Seconds between samples of the time series.") var sampleEvery: Double = 10
    @Option(help: "Seconds after which an unanswered request counts as an error.") var timeout: Double = 10
    @Option(help: "Event loop threads of the mix's clients.") var threads: Int = 2
    @Option(help: "The write p99 target, in milliseconds.") var writeTarget: Double = 50
    @Option(help: "Rows whose CPU pressure (/proc/pressure/cpu, other work on the machine) is below this percentage also count as quiet write latencies.")
    var quietPressure: Double = 30
    @Option(help: "Memory counts as flat when the last window's mean is at most this many percent above the first's.")
    var memoryTarget: Double = 5
    @Flag(help: "Print the report as JSON (progress goes to standard error).") var json = false

    func validate() throws {
        let shares = mix.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard shares.count == 4, shares.allSatisfy({ $0 >= 0 }), shares.reduce(0, +) > 0 else {
            throw ValidationError("--mix takes four percentages: REST readers, REST writers, SSE listeners, realtime clients")
        }
        guard duration > 0, warmup >= 0, warmup < duration else { throw ValidationError("need 0 ≤ --warmup < --duration") }
        guard rooms >= 1, counters >= 1, sampleEvery > 0, timeout > 0 else {
            throw ValidationError("--rooms, --counters, --sample-every and --timeout must be positive")
        }
    }

    /// The mix's sizes: REST readers, REST writers, SSE listeners, realtime clients.
    private var sizes: (readers: Int, writers: Int, sse: Int, realtime: Int) {
        let shares = mix.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        let total = shares.reduce(0, +)
        var counts = shares.map { Int((Double(clients) * $0 / total).rounded(.down)) }
        // What rounding left goes to the largest share.
        if let largest = shares.indices.max(by: { shares[$0] < shares[$1] }) { counts[largest] += clients - counts.reduce(0, +) }
        return (counts[0], counts[1], counts[2], counts[3])
    }

    func run() async throws {
        guard let components = URLComponents(string: url), let host = components.host else {
            throw ValidationError("--url \(url) is not a URL")
        }
        let port = components.port ?? (components.scheme == "https" ? 443 : 80)
        SSELoadClient.raiseFileLimit()
        let run = String(UInt64(Date().timeIntervalSince1970 * 1000), radix: 36)
        let soak = SoakContext(
            host: host, port: port, namespace: namespace, run: run, rooms: rooms, counters: counters,
            clientToken: clientsUseToken ? token : nil, timeout: timeout, threads: threads)
        let admin = SoakAdmin(url: url, token: token, namespace: namespace)
        let sizes = self.sizes

        // Counters start at 0, so every transaction runs on a known value.
        let zeros = (0..<counters).map { "\"c\($0)\":0" }.joined(separator: ",")
        let (status, body) = try await admin.request("PUT", soak.restTarget("\(soak.base)/counters"), body: "{\(zeros)}")
        guard status == 200 else {
            throw ValidationError("setting up \(soak.base)/counters failed: \(status) \(String(decoding: body, as: UTF8.self))")
        }
        let memorySource = serverPid.map { "/proc/\($0)/status" } ?? (token != nil ? "/.hearth/stats" : "nowhere (give --server-pid or --token)")
        let before = await serverMegabytes(admin)
        let loadBefore = SoakMachine.loadAverages()

        // Idle connections first: the load then runs under their pressure.
        var workers: RealtimeWorkers?
        if idleConnections > 0 {
            progress("opening \(idleConnections) idle realtime connections…")
            let parts = (idleConnections + idlePerProcess - 1) / idlePerProcess
            let shares = RealtimeWorkers.shares(of: idleConnections, parts: parts)
            workers = try RealtimeWorkers(arguments: shares.indices.map { part in
                ["--host", host, "--port", String(port), "--namespace", namespace ?? "default", "--connections", String(shares[part]),
                 "--path", "\(soak.base)/idle", "--distinct", "--first", String(shares[..<part].reduce(0, +)), "--threads", "1"]
            })
            try await workers?.waitUntilReady(timeout: .seconds(900))
        }

        progress("opening \(sizes.sse) SSE listeners and \(sizes.realtime) realtime clients…")
        try await openListeners(soak, sizes: sizes)
        guard await waitUntil(timeout: 180, { soak.ready.load(ordering: .relaxed) >= sizes.sse + sizes.realtime }) else {
            throw ValidationError("only \(soak.ready.load(ordering: .relaxed)) of \(sizes.sse + sizes.realtime) listeners were ready: \(soak.recorder.firstErrors)")
        }
        progress("opening \(sizes.readers + sizes.writers) REST connections…")
        try await openRESTClients(soak, sizes: sizes)
        let hostile = SoakHostile(soak: soak, slowSeconds: slowSeconds, ghostSeconds: ghostSeconds)
        let hostileTasks = (0..<slowConsumers).map { index in Task { await hostile.runSlowConsumer(index) } }
            + (0..<vanishing).map { [vanishing] index in Task { await hostile.runVanishing(index, of: vanishing) } }

        // The load.
        progress("load for \(Int(duration)) s (\(Int(warmup)) s of warm-up)…")
        let start = ContinuousClock.now
        soak.running.store(true, ordering: .relaxed)
        var samples: [SoakReport.Sample] = []
        var lastTime = 0.0
        var lastRequests = 0
        var lastEvents = 0
        var lastErrors = 0
        var nextSample = sampleEvery
        var serverCPU = serverPid.flatMap(SoakMachine.cpuSeconds)
        var clientCPU = SoakMachine.cpuSeconds(getpid())
        var quiet = (rows: 0, rest: LatencyHistogram(), realtime: LatencyHistogram())
        while true {
            let elapsed = Self.seconds(ContinuousClock.now - start)
            if elapsed >= duration { break }
            if elapsed >= warmup, !soak.recorder.measuring.load(ordering: .relaxed) {
                soak.recorder.measuring.store(true, ordering: .relaxed)
                _ = soak.recorder.takeWindow(.restWrite)
                _ = soak.recorder.takeWindow(.realtimeWrite)
            }
            if elapsed >= nextSample {
                let stats = await admin.stats()
                let requests = Self.requests(soak.recorder)
                let events = soak.recorder.operationCount(.sseEvent) + soak.recorder.operationCount(.realtimeEvent)
                let errors = soak.recorder.errorTotal.load(ordering: .relaxed)
                let span = elapsed - lastTime
                let memory = serverPid != nil ? await serverMegabytes(admin) : stats?.memoryMB
                let serverCPUNow = serverPid.flatMap(SoakMachine.cpuSeconds)
                let clientCPUNow = SoakMachine.cpuSeconds(getpid())
                func percent(_ now: Double?, _ then: Double?) -> Double? {
                    guard let now, let then else { return nil }
                    return Self.round((now - then) / span * 100)
                }
                let restWindow = soak.recorder.takeWindow(.restWrite)
                let realtimeWindow = soak.recorder.takeWindow(.realtimeWrite)
                let pressure = SoakMachine.cpuPressure()
                if lastTime >= warmup, let pressure, pressure < quietPressure {
                    quiet.rows += 1
                    quiet.rest.merge(restWindow)
                    quiet.realtime.merge(realtimeWindow)
                }
                let row = SoakReport.Sample(
                    seconds: elapsed.rounded(), warmup: lastTime < warmup, serverMB: memory.map(Self.round),
                    clientMB: Self.round(Double(RealtimeIdle.residentKilobytes(getpid())) / 1024),
                    requestsPerSecond: Double(requests - lastRequests) / span, eventsPerSecond: Double(events - lastEvents) / span,
                    errors: errors - lastErrors,
                    restWriteP99: SoakReport.Latency(restWindow).p99, realtimeWriteP99: SoakReport.Latency(realtimeWindow).p99,
                    serverStreams: stats?.streams, serverRealtime: stats?.realtime,
                    serverCPU: percent(serverCPUNow, serverCPU), clientCPU: percent(clientCPUNow, clientCPU),
                    loadAverage: SoakMachine.loadAverages().first, cpuPressure: pressure)
                (serverCPU, clientCPU) = (serverCPUNow, clientCPUNow)
                samples.append(row)
                progress(String(
                    format: "%4.0f s: server %@ MB, %.0f requests/s, %.0f events/s, %d errors, write p99 REST %@ / realtime %@ ms",
                    elapsed, memory.map { String(format: "%.1f", $0) } ?? "–", row.requestsPerSecond, row.eventsPerSecond, row.errors,
                    row.restWriteP99.map { String(format: "%.1f", $0) } ?? "–", row.realtimeWriteP99.map { String(format: "%.1f", $0) } ?? "–"))
                (lastTime, lastRequests, lastEvents, lastErrors) = (elapsed, requests, events, errors)
                nextSample += sampleEvery
            }
            let wake = min(nextSample, elapsed < warmup ? warmup : duration, duration)
            try await Task.sleep(for: .milliseconds(max(1, Int((wake - Self.seconds(ContinuousClock.now - start)) * 1000))))
        }

        // The end: what is in flight finishes, then every listener must have what was acknowledged.
        progress("draining…")
        let loadAfter = SoakMachine.loadAverages()
        soak.running.store(false, ordering: .relaxed)
        hostile.stopped.store(true, ordering: .relaxed)
        _ = await waitUntil(timeout: timeout + 5, { soak.inFlight.load(ordering: .relaxed) <= 0 })
        let unanswered = max(0, soak.inFlight.load(ordering: .relaxed))
        if unanswered > 0 { soak.recorder.error("timeout", "\(unanswered) requests still unanswered at the end") }
        _ = await waitUntil(timeout: 15, { Self.missingDeliveries(soak, report: false) == 0 })
        let missing = Self.missingDeliveries(soak, report: true)

        // The counters must hold exactly the acknowledged increments.
        let increments = soak.increments.map { $0.value.load(ordering: .relaxed) }
        let totals = await admin.counters(soak)
        if let totals {
            for (index, expected) in increments.enumerated() where totals[index] != expected {
                soak.recorder.error("counter-mismatch", "counter c\(index) is \(totals[index].map(String.init) ?? "absent"), \(expected) increments were acknowledged")
            }
        } else {
            soak.recorder.error("counter-mismatch", "the counters could not be read")
        }
        let drops = await admin.streamDrops()

        for task in hostileTasks { await task.value }
        await soak.closeAll()
        if let workers {
            let (_, problems) = await workers.finish()
            for problem in problems { soak.recorder.error("idle-dropped", problem) }
        }
        try? await soak.group.shutdownGracefully()
        // Every connection of the run is closed: the server should let go of them at once.
        let closedAt = ContinuousClock.now
        var leftover = await admin.stats()
        while let stats = leftover, (stats.streams ?? 0) + (stats.realtime ?? 0) > 0, ContinuousClock.now - closedAt < .seconds(10) {
            try? await Task.sleep(for: .milliseconds(100))
            leftover = await admin.stats()
        }
        let release = leftover.map { SoakReport.Release(
            streams: $0.streams, realtime: $0.realtime, seconds: Self.round(Self.seconds(ContinuousClock.now - closedAt))) }

        let report = makeReport(
            soak: soak, sizes: sizes, samples: samples, before: before, memorySource: memorySource, missing: missing,
            increments: increments, totals: totals, unanswered: unanswered, drops: drops, release: release,
            machine: (loadBefore, loadAfter), quiet: quiet, run: run)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            FileHandle.standardOutput.write(try encoder.encode(report) + Data("\n".utf8))
        } else {
            FileHandle.standardOutput.write(Data(report.text().utf8))
        }
        if report.errors > 0 { throw ExitCode.failure }
    }

    // MARK: - Opening the mix

    private func openListeners(_ soak: SoakContext, sizes: (readers: Int, writers: Int, sse: Int, realtime: Int)) async throws {
        let (counters, realtimeWriteRate, transactionRate) = (self.counters, self.realtimeWriteRate, self.transactionRate)
        try await SoakContext.open(count: sizes.sse) { index in
            let ledger = ListenerLedger(room: index % soak.rooms, name: "SSE listener \(index)", recorder: soak.recorder)
            soak.listeners.withLock { $0.append(ledger) }
            _ = try await SoakHTTPClients.connect(soak) { SoakSSEHandler(soak: soak, ledger: ledger, path: soak.roomPath(ledger.room)) }
        }
        let realtime = sizes.realtime
        try await SoakContext.open(count: realtime) { index in
            let room = index % soak.rooms
            let ledger = ListenerLedger(room: room, name: "realtime client \(index)", recorder: soak.recorder)
            let writer = WriterLedger(key: "rt\(index)", room: room)
            soak.listeners.withLock { $0.append(ledger) }
            soak.writers.withLock { $0.append(writer) }
            let channel = try await RealtimeLoadClient.connectWebSocket(
                group: soak.group, host: soak.host, port: soak.port, namespace: soak.namespace
            ) {
                SoakRealtimeHandler(
                    soak: soak, ledger: ledger, writer: writer, counter: index % counters,
                    writeRate: realtimeWriteRate / Double(realtime), transactionRate: transactionRate / Double(realtime))
            }
            soak.register(channel)
        }
    }

    private func openRESTClients(_ soak: SoakContext, sizes: (readers: Int, writers: Int, sse: Int, realtime: Int)) async throws {
        let readRate = sizes.readers > 0 ? self.readRate / Double(sizes.readers) : 0
        let writeRate = sizes.writers > 0 ? self.writeRate / Double(sizes.writers) : 0
        let readers = sizes.readers
        try await SoakContext.open(count: sizes.readers + sizes.writers) { index in
            let role: SoakRESTHandler.Role
            if index < readers {
                role = .reader(index: index)
            } else {
                let writer = WriterLedger(key: "w\(index - readers)", room: (index - readers) % soak.rooms)
                soak.writers.withLock { $0.append(writer) }
                role = .writer(writer)
            }
            _ = try await SoakHTTPClients.connect(soak) {
                SoakRESTHandler(soak: soak, role: role, rate: index < readers ? readRate : writeRate)
            }
        }
        let all = sizes.sse + sizes.realtime + sizes.readers + sizes.writers
        guard await waitUntil(timeout: 60, { soak.ready.load(ordering: .relaxed) >= all }) else {
            throw ValidationError("only \(soak.ready.load(ordering: .relaxed)) of \(all) clients connected")
        }
    }

    // MARK: - Checks

    /// Acknowledged writes some listener still lacks (a listener whose connection was lost,
    /// already counted as an error, is left out). With `report`, each listener short of a
    /// writer counts as an error.
    private static func missingDeliveries(_ soak: SoakContext, report: Bool) -> Int {
        let writers = Dictionary(grouping: soak.writers.withLock { $0 }, by: \.room)
        var missing = 0
        for listener in soak.listeners.withLock({ $0 }) where !listener.lost.load(ordering: .relaxed) {
            for writer in writers[listener.room] ?? [] {
                let acknowledged = writer.acknowledged.load(ordering: .relaxed)
                let seen = listener.lastSeen(writer.key)
                guard seen < acknowledged else { continue }
                missing += Int(acknowledged - seen)
                if report {
                    soak.recorder.error("missed-event", "\(listener.name) saw \(writer.key) up to \(seen), \(acknowledged) were acknowledged")
                }
            }
        }
        return missing
    }

    // MARK: - Report

    private func makeReport(
        soak: SoakContext, sizes: (readers: Int, writers: Int, sse: Int, realtime: Int), samples: [SoakReport.Sample],
        before: Double?, memorySource: String, missing: Int, increments: [Int], totals: [Int?]?, unanswered: Int,
        drops: [String: Double], release: SoakReport.Release?, machine: (before: [Double], after: [Double]),
        quiet: (rows: Int, rest: LatencyHistogram, realtime: LatencyHistogram), run: String
    ) -> SoakReport {
        let recorder = soak.recorder
        let window = min(60, (duration - warmup) / 3)
        let series = samples.compactMap { row in row.serverMB.map { (seconds: row.seconds, megabytes: $0) } }
        let (first, last, slope) = SoakMemory.growth(series, warmup: warmup, end: duration, window: window)
        let growth = first.flatMap { first in last.map { $0 - first } }
        let growthPercent = first.flatMap { first in growth.map { $0 / first * 100 } }
        var latencies: [String: SoakReport.Latency] = [:]
        for kind in SoakRecorder.Latency.allCases { latencies[kind.rawValue] = SoakReport.Latency(recorder.histogram(kind)) }
        var operations: [String: Int] = [:]
        for kind in SoakRecorder.Operation.allCases { operations[kind.rawValue] = recorder.operationCount(kind) }
        let total = totals?.compactMap { $0 }.reduce(0, +)
        let countersExact = totals.map { totals in zip(totals, increments).allSatisfy { $0 == $1 } } ?? false
        let errors = recorder.errorTotal.load(ordering: .relaxed)

        let restP99 = latencies[SoakRecorder.Latency.restWrite.rawValue]?.p99
        let realtimeP99 = latencies[SoakRecorder.Latency.realtimeWrite.rawValue]?.p99
        let p99s = [restP99, realtimeP99].compactMap { $0 }
        let writeMet: Bool? = p99s.isEmpty ? nil : p99s.allSatisfy { $0 < writeTarget }
        let memoryFlat: Bool? = growthPercent.map { $0 <= memoryTarget }
        let quietLatencies = SoakReport.Quiet(
            pressureBelow: quietPressure, rows: quiet.rows, measuredRows: samples.filter { !$0.warmup }.count,
            restWrite: .init(quiet.rest), realtimeWrite: .init(quiet.realtime))
        func met(_ value: Bool?) -> String { value.map { $0 ? "met" : "NOT MET" } ?? "not measured" }
        let quietNote = quiet.rows == 0 ? "" :
            " [quiet rows (CPU pressure < \(SoakReport.number(quietPressure)) %, \(quiet.rows) of \(quietLatencies.measuredRows)): "
            + "REST \(quietLatencies.restWrite.p99.map { String(format: "%.1f ms", $0) } ?? "–"), "
            + "realtime \(quietLatencies.realtimeWrite.p99.map { String(format: "%.1f ms", $0) } ?? "–")]"
        let line = [
            "errors \(errors) — \(met(errors == 0))",
            "memory after warm-up \(growth.map { String(format: "%+.1f MB", $0) } ?? "–") "
                + "(\(growthPercent.map { String(format: "%+.1f %%", $0) } ?? "–"); flat: ≤ \(SoakReport.number(memoryTarget)) %) — \(met(memoryFlat))",
            "write p99 REST \(restP99.map { String(format: "%.1f ms", $0) } ?? "–"), realtime \(realtimeP99.map { String(format: "%.1f ms", $0) } ?? "–") "
                + "(< \(SoakReport.number(writeTarget)) ms) — \(met(writeMet))\(quietNote)",
            "counters exact — \(met(countersExact))",
            "every listener got every acknowledged write — \(met(missing == 0))",
        ].joined(separator: "; ")

        return SoakReport(
            configuration: .init(
                url: url, run: run, seconds: duration, warmupSeconds: warmup, restReaders: sizes.readers, restWriters: sizes.writers,
                sseListeners: sizes.sse, realtimeClients: sizes.realtime, slowConsumers: slowConsumers, vanishing: vanishing,
                idleConnections: idleConnections, rooms: rooms, counters: counters, readRate: readRate, writeRate: writeRate,
                realtimeWriteRate: realtimeWriteRate, transactionRate: transactionRate),
            operations: operations, errors: errors, errorsByKind: recorder.errorsByKind, firstErrors: recorder.firstErrors,
            latencies: latencies, quietWriteLatencies: quietLatencies, samples: samples,
            memory: .init(
                source: memorySource, windowSeconds: window, firstWindowMB: first.map(Self.round), lastWindowMB: last.map(Self.round),
                growthMB: growth.map(Self.round), growthPercent: growthPercent.map(Self.round), slopeMBPerMinute: slope.map(Self.round),
                beforeClientsMB: before.map(Self.round)),
            checks: .init(
                counterIncrements: increments.reduce(0, +), counterTotal: total, countersExact: countersExact,
                listenersChecked: soak.listeners.withLock { $0.count }, missingDeliveries: missing, deliveriesComplete: missing == 0,
                unansweredAtEnd: unanswered),
            serverStreamDrops: drops, serverAfterClose: release,
            machine: .init(
                cores: ProcessInfo.processInfo.activeProcessorCount, loadBefore: machine.before, loadAfter: machine.after,
                meanCPUPressure: Self.mean(samples.filter { !$0.warmup }.compactMap(\.cpuPressure)),
                meanServerCPU: Self.mean(samples.filter { !$0.warmup }.compactMap(\.serverCPU)),
                meanClientCPU: Self.mean(samples.filter { !$0.warmup }.compactMap(\.clientCPU))),
            verdict: .init(
                errors: errors == 0, memoryFlat: memoryFlat, writeP99: writeMet, countersExact: countersExact,
                deliveriesComplete: missing == 0, line: line))
    }

    // MARK: - Helpers

    private func serverMegabytes(_ admin: SoakAdmin) async -> Double? {
        if let serverPid {
            let kilobytes = RealtimeIdle.residentKilobytes(serverPid)
            return kilobytes > 0 ? Double(kilobytes) / 1024 : nil
        }
        return await admin.stats()?.memoryMB
    }

    private static func requests(_ recorder: SoakRecorder) -> Int {
        [.restRead, .restWrite, .realtimeWrite, .transaction].reduce(0) { $0 + recorder.operationCount($1) }
    }

    private func progress(_ line: String) {
        FileHandle.standardError.write(Data("soak: \(line)\n".utf8))
    }

    private func waitUntil(timeout: Double, _ condition: @escaping () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func round(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : round(values.reduce(0, +) / Double(values.count))
    }
}

/// The machine's figures the report sets beside its own: CPU used by a process, load
/// averages, CPU pressure (Linux's /proc; nil elsewhere).
enum SoakMachine {
    /// User and system CPU seconds `pid` has used, from /proc/<pid>/stat.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After the command name: state is field 3, utime 14 and stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func loadAverages() -> [Double] {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return [] }
        return text.split(separator: " ").prefix(3).compactMap { Double($0) }
    }

    /// `some avg10` of /proc/pressure/cpu: the percentage of the last 10 s in which at least
    /// one runnable task waited for a CPU.
    static func cpuPressure() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/pressure/cpu", encoding: .utf8),
            let field = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).first(where: { $0.hasPrefix("avg10=") })
        else { return nil }
        return Double(field.dropFirst(6))
    }
}

/// The soak's requests as the admin (or anonymously, without a token): setup, the counters'
/// final values, `/.hearth/stats` and `/metrics`.
struct SoakAdmin: Sendable {
    let url: String
    let token: String?
    let namespace: String?

    func request(_ method: String, _ target: String, body: String? = nil) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: url.trimmingCharacters(in: CharacterSet(charactersIn: "/")) + target)!)
        request.httpMethod = method
        request.timeoutInterval = 30
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body { request.httpBody = Data(body.utf8) }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    struct Stats {
        var memoryMB: Double?
        var streams: Int?
        var realtime: Int?
    }

    /// `/.hearth/stats` (admins only): nil without a token or when it cannot be read.
    func stats() async -> Stats? {
        guard token != nil, let (status, data) = try? await request("GET", "/.hearth/stats"), status == 200,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        let connections = object["connections"] as? [String: Any]
        return Stats(
            memoryMB: (object["memoryBytes"] as? NSNumber).map { $0.doubleValue / 1_048_576 },
            streams: (connections?["streams"] as? NSNumber)?.intValue, realtime: (connections?["realtime"] as? NSNumber)?.intValue)
    }

    /// Each counter's value (nil for one that is absent or not a number); nil when unreadable.
    func counters(_ soak: SoakContext) async -> [Int?]? {
        guard let (status, data) = try? await request("GET", soak.restTarget("\(soak.base)/counters")), status == 200,
            let node = try? JSONParser.parseDocument(Array(data))
        else { return nil }
        return (0..<soak.counters).map { index in node.child(ChildKey("c\(index)")).integerValue.map(Int.init) }
    }

    /// `hearth_stream_drops_total` by transport, from `/metrics` (empty when unreadable).
    func streamDrops() async -> [String: Double] {
        guard token != nil, let (status, data) = try? await request("GET", "/metrics"), status == 200 else { return [:] }
        var drops: [String: Double] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where line.hasPrefix("hearth_stream_drops_total") {
            let transport = line.firstRange(of: "transport=\"").map { line[$0.upperBound...].prefix { $0 != "\"" } } ?? ""
            if let value = line.split(separator: " ").last.flatMap({ Double($0) }) { drops[String(transport)] = value }
        }
        return drops
    }
}
