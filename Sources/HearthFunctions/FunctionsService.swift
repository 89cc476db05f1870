import Foundation
import HearthOutbox
import HearthStore
import Logging
import Synchronization

/// The functions of one server: it records their triggers' events with the commits that make
/// them (``recorder``) and runs one ``DeliveryLane`` per function and outbox.
///
/// Lanes start when an outbox is attached (``attach(_:)``: at start-up for every database
/// that exists, and when a database is first opened) and are woken after each commit of their
/// source (``committed(source:)``). Nothing here is on a write's path but the recorder.
///
/// In a cluster, every node runs the processes but only one delivers: ``run(deliveringWhile:)``
/// runs the lanes and the scheduler only while the node holds the cluster's functions lease,
/// and stops them when it loses it (what they had not marked done is delivered by the next
/// holder). A lane's position is in its outbox, so it starts again where it was.
///
/// Threading: `lanes` is under one lock, taken to attach and to wake; lanes run as child tasks
/// of the delivering task (``run()``'s, or ``run(deliveringWhile:)``'s while the lease is held),
/// on the given executor when there is one (the server's ``DeliveryThread``, at a lower CPU
/// priority).
public final class FunctionsService: Sendable {
    public let functions: [FunctionDefinition]
    /// The processes the functions run in (Python functions), kept running by ``run()``.
    public let processes: [FunctionProcess]
    /// The functions called over HTTP, by name.
    public let httpFunctions: [String: HTTPFunction]
    /// Runs the scheduled functions.
    public let scheduler: Scheduler?
    public let recorder: DatabaseEventRecorder
    /// The recorder of storage triggers' events, for the file store (``HearthFiles/FileEventRecorder``).
    public let storageRecorder: StorageEventRecorder
    /// The recorder of account triggers' events, for the account store (``HearthAuth/AccountEventRecorder``).
    public let accountRecorder: AccountTriggerRecorder
    /// The blocking functions, for the account service; nil when there are none.
    public let blocking: BlockingFunctions?
    public let backlog: EventBacklog
    /// Makes the CloudEvents functions get from the events their outboxes keep.
    public let envelope: EventEnvelope
    /// What the functions did lately (deliveries, scheduled runs, their processes' output).
    public let activity: FunctionActivity
    let environment: DeliveryLane.Environment
    /// Where the lanes and the scheduler run (``DeliveryThread``); nil for the global executor.
    let executor: (any TaskExecutor)?

    private struct Lanes {
        var bySource: [String: [DeliveryLane]] = [:]
        /// Starts lanes while the node delivers (nil while it does not: ``deliver()`` starts
        /// every lane in `bySource` when it begins).
        var starter: AsyncStream<DeliveryLane>.Continuation?
    }

    private let lanes = Mutex(Lanes())

    /// - Throws: ``FunctionError`` when two functions share a name or a name is invalid.
    public init(
        functions: [FunctionDefinition], processes: [FunctionProcess] = [], httpFunctions: [HTTPFunction] = [],
        scheduler: Scheduler? = nil, blocking: BlockingFunctions? = nil, naming: DatabaseEventRecorder.Naming, backlog: EventBacklog,
        environment: DeliveryLane.Environment, activity: FunctionActivity = FunctionActivity(),
        makeID: @escaping @Sendable () -> String = EventIDGenerator().next, executor: (any TaskExecutor)? = nil
    ) throws {
        var names: Set<String> = []
        let blockingNames = blocking?.functions.values.map(\.name) ?? []
        for name in functions.map(\.name) + httpFunctions.map(\.name) + (scheduler?.functions.map(\.name) ?? []) + blockingNames {
            guard FunctionDefinition.isValidName(name) else {
                throw FunctionError.invalidDefinition(function: name, "a name is 1-63 letters, digits, - and _, starting with a letter")
            }
            guard names.insert(name).inserted else {
                throw FunctionError.invalidDefinition(function: name, "two functions have this name")
            }
        }
        self.functions = functions
        self.processes = processes
        self.scheduler = scheduler
        self.blocking = blocking
        self.httpFunctions = Dictionary(httpFunctions.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.backlog = backlog
        self.activity = activity
        self.executor = executor
        // Every attempt is also kept for the console.
        var environment = environment
        let observe = environment.observe
        let now = environment.now
        environment.observe = { attempt in
            var entry = attempt.activityEntry
            entry.time = now()
            activity.add(entry)
            observe(attempt)
        }
        self.environment = environment
        envelope = EventEnvelope(naming: naming)
        recorder = DatabaseEventRecorder(backlog: backlog, makeID: makeID)
        recorder.setSubscriptions(functions.compactMap { function in
            guard case .database(let trigger) = function.trigger else { return nil }
            return DatabaseEventRecorder.Subscription(function: function.name, trigger: trigger)
        })
        storageRecorder = StorageEventRecorder(
            subscriptions: functions.compactMap { function in
                guard case .storage(let trigger) = function.trigger else { return nil }
                return StorageEventRecorder.Subscription(function: function.name, trigger: trigger)
            },
            base: "http://\(naming.databaseHost)", backlog: backlog, makeID: makeID, now: environment.now)
        accountRecorder = AccountTriggerRecorder(
            subscriptions: functions.compactMap { function in
                guard case .account(let trigger) = function.trigger else { return nil }
                return AccountTriggerRecorder.Subscription(function: function.name, trigger: trigger)
            },
            projectID: naming.projectID, backlog: backlog, makeID: makeID, now: environment.now)
        storageRecorder.signal.whenCommitted { [weak self] in self?.committed(source: StorageEventRecorder.source) }
        accountRecorder.signal.whenCommitted { [weak self] in self?.committed(source: AccountTriggerRecorder.source) }
    }

    /// Starts lanes for the functions whose events `outbox` may hold (once per source).
    /// - Parameter database: the database's name, for a database's outbox.
    public func attach(_ outbox: any EventOutbox, database: String) {
        attach(outbox, functions: recorder.functions(watching: database))
    }

    /// Starts lanes for the storage triggers' functions on the file store's outbox.
    public func attachFiles(_ outbox: any EventOutbox) {
        attach(outbox, functions: storageRecorder.functions)
    }

    /// Starts lanes for the account triggers' functions on the account store's outbox.
    public func attachAccounts(_ outbox: any EventOutbox) {
        attach(outbox, functions: accountRecorder.functions)
    }

    private func attach(_ outbox: any EventOutbox, functions watchers: [String]) {
        let watching = Set(watchers)
        lanes.withLock { lanes in
            guard lanes.bySource[outbox.source] == nil else { return }
            let made = functions.filter { watching.contains($0.name) }.map { function in
                DeliveryLane(
                    outbox: outbox, function: function.name, invoker: function.invoker, policy: function.policy, backlog: backlog,
                    envelope: envelope, environment: environment)
            }
            lanes.bySource[outbox.source] = made
            // Events waiting for functions removed since they were recorded are dropped.
            let logger = environment.logger
            Task {
                do {
                    for (function, count) in try await outbox.retain(subscribers: watching) where count > 0 {
                        logger.warning("dropped the waiting events of a function that is gone", metadata: [
                            "function": "\(function)", "source": "\(outbox.source)", "events": "\(count)",
                        ])
                    }
                } catch {
                    logger.error("could not forget removed functions' events", metadata: ["source": "\(outbox.source)", "error": "\(error)"])
                }
            }
            if let starter = lanes.starter {
                for lane in made { starter.yield(lane) }
            }
        }
    }

    /// Tells the lanes of `source` that a commit may have recorded events.
    public func committed(source: String) {
        for lane in lanes.withLock({ $0.bySource[source] ?? [] }) { lane.wake() }
    }

    /// The outboxes lanes deliver from, by source.
    public var outboxes: [String: any EventOutbox] {
        lanes.withLock { lanes in
            lanes.bySource.compactMapValues { $0.first?.outbox }
        }
    }

    /// Puts a dead letter of `source` back in its function's queue and wakes its lane; nil when
    /// there is no such source or dead letter.
    public func replay(deadLetter sequence: Int64, from source: String) async throws -> StoredEvent? {
        guard let outbox = outboxes[source], let replayed = try await outbox.replay(deadLetter: sequence) else { return nil }
        committed(source: source)
        return replayed
    }

    /// True when a lane delivers from `source`.
    public func isAttached(source: String) -> Bool {
        lanes.withLock { $0.bySource[source] != nil }
    }

    /// Waits until every function's process accepts connections, or `timeout` passed; returns
    /// the functions whose processes do not.
    public func waitUntilListening(timeout: Duration) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        var waiting = processes
        while !waiting.isEmpty, ContinuousClock.now < deadline {
            var still: [FunctionProcess] = []
            for process in waiting where !(await LoopbackPort.accepts(process.port)) { still.append(process) }
            waiting = still
            if !waiting.isEmpty { try? await Task.sleep(for: .milliseconds(100)) }
        }
        return waiting.map(\.function)
    }

    /// Runs every process and lane, lanes attached later included, until cancelled.
    public func run() async {
        let (held, hold) = AsyncStream.makeStream(of: Bool.self)
        hold.yield(true)
        await run(deliveringWhile: held)
        hold.finish()
    }

    /// Runs every process until cancelled, and the lanes (those attached later included) and
    /// the scheduler whenever `held` last said true: a cluster node delivers only while it
    /// holds the functions lease.
    public func run(deliveringWhile held: AsyncStream<Bool>) async {
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for process in processes {
                    group.addTask { await process.run() }
                }
                var delivering: Task<Void, Never>?
                for await holds in held {
                    if holds, delivering == nil {
                        delivering = Task { await self.deliver() }
                    } else if !holds, let running = delivering {
                        running.cancel()
                        await running.value
                        delivering = nil
                    }
                }
                if let running = delivering {
                    running.cancel()
                    await running.value
                }
            }
        } onCancel: {
            for process in processes { process.stop() }
        }
    }

    /// Runs the scheduler and every lane, lanes attached meanwhile included, until cancelled.
    private func deliver() async {
        let (starts, starter) = AsyncStream.makeStream(of: DeliveryLane.self)
        let waiting = lanes.withLock { lanes -> [DeliveryLane] in
            lanes.starter = starter
            return lanes.bySource.values.flatMap { $0 }
        }
        for lane in waiting { starter.yield(lane) }
        await withTaskCancellationHandler {
            // The lanes and the scheduler (the group's children) run on the executor.
            await withTaskExecutorPreference(executor) {
                await withDiscardingTaskGroup { group in
                    if let scheduler {
                        group.addTask { await scheduler.run() }
                    }
                    for await lane in starts {
                        group.addTask { await lane.run() }
                    }
                }
            }
        } onCancel: {
            starter.finish()
        }
        lanes.withLock { $0.starter = nil }
    }

    /// Wakes every lane (a cluster's deliverer does, now and then: other nodes' account and
    /// file commits record events it is not told of).
    public func wakeAll() {
        for lane in lanes.withLock({ $0.bySource.values.flatMap { $0 } }) { lane.wake() }
    }
}
