import AsyncHTTPClient
import Foundation
import HearthCore
import Logging
import NIOCore
import NIOHTTP1

/// A function run on a schedule.
public struct ScheduledFunction: Sendable {
    public var name: String
    public var region: String
    public var schedule: CronSchedule
    /// Where its process listens.
    public var url: String
    /// Tries after a failed run (`retryConfig.retryCount`; 0 by default, as Cloud Scheduler).
    public var retryCount: Int
    public var timeout: Duration
    /// A function written in Swift and run in the server's process (then `url` is unused):
    /// given the scheduled time; throwing fails the run.
    public var handler: (@Sendable (Date) async throws -> Void)?

    public init(name: String, region: String, schedule: CronSchedule, url: String, retryCount: Int, timeout: Duration) {
        self.name = name
        self.region = region
        self.schedule = schedule
        self.url = url
        self.retryCount = retryCount
        self.timeout = timeout
    }

    /// A Swift function run in the server's process on `schedule` (Firebase's `onSchedule`).
    public static func swift(
        name: String, schedule: CronSchedule, retryCount: Int = 0, timeout: Duration = .seconds(540),
        _ handler: @escaping @Sendable (Date) async throws -> Void
    ) -> ScheduledFunction {
        var function = ScheduledFunction(name: name, region: "us-central1", schedule: schedule, url: "", retryCount: retryCount, timeout: timeout)
        function.handler = handler
        return function
    }

    /// Where it runs, for the console: the server's process, or a function process.
    public var runsInServer: Bool { handler != nil }

    /// The job's name, as Cloud Scheduler names Firebase's: `firebase-schedule-<name>-<region>`.
    public var jobName: String { "firebase-schedule-\(name)-\(region)" }
}

/// Runs scheduled functions as Cloud Scheduler runs Firebase's: at each time the schedule
/// names, a POST to the function with `X-CloudScheduler-JobName` and
/// `X-CloudScheduler-ScheduleTime` (which the SDKs hand the function as the job's name and
/// time). A failed run is tried again `retryCount` times, 5 s apart and doubling; a run missed
/// while the server was down is not made up (Cloud Scheduler does not either). Times that pass
/// while a run (with its retries) goes on, or while the process or the machine is paused, get
/// one run, at once, for the first of them, and not one each back to back; then the schedule
/// goes on from the present.
public final class Scheduler: Sendable {
    public struct Environment: Sendable {
        public var now: @Sendable () -> Date
        /// Waits (throws when cancelled).
        public var sleep: @Sendable (Duration) async throws -> Void
        /// Told of every run: the function, the scheduled time, whether it succeeded, how long it took.
        public var observe: @Sendable (_ function: String, _ scheduled: Date, _ succeeded: Bool, _ duration: Duration) -> Void
        public var logger: Logger

        public init(
            now: @escaping @Sendable () -> Date = { Date() },
            sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
            observe: @escaping @Sendable (String, Date, Bool, Duration) -> Void = { _, _, _, _ in }, logger: Logger
        ) {
            self.now = now
            self.sleep = sleep
            self.observe = observe
            self.logger = logger
        }
    }

    public let functions: [ScheduledFunction]
    /// What HTTP functions are called with; nil when every function is a Swift one.
    let client: HTTPClient?
    let environment: Environment

    public init(functions: [ScheduledFunction], client: HTTPClient?, environment: Environment) {
        self.functions = functions
        self.client = client
        self.environment = environment
    }

    /// Runs every schedule until cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for function in functions {
                group.addTask { await self.run(function) }
            }
        }
    }

    private func run(_ function: ScheduledFunction) async {
        var after = environment.now()
        while !Task.isCancelled {
            guard let next = function.schedule.next(after: after) else {
                environment.logger.warning("a schedule never fires again", metadata: [
                    "function": "\(function.name)", "schedule": "\(function.schedule)",
                ])
                return
            }
            let wait = next.timeIntervalSince(environment.now())
            if wait > 0 {
                do { try await environment.sleep(.milliseconds(Int64((wait * 1000).rounded(.up)))) } catch { return }
            }
            // Already past the time after it: this run is the one catch-up run for every time
            // missed, and the next is the first time after this run ends.
            let catchingUp = function.schedule.next(after: next).map { $0 <= environment.now() } ?? false
            let started = ContinuousClock.now
            var pause = Duration.seconds(5)
            var succeeded = false
            for attempt in 0...function.retryCount {
                if attempt > 0 {
                    do { try await environment.sleep(pause) } catch { return }
                    pause = pause * 2
                }
                if let failure = await invoke(function, scheduled: next) {
                    environment.logger.warning("a scheduled run failed", metadata: [
                        "function": "\(function.name)", "attempt": "\(attempt + 1)", "reason": "\(failure)",
                    ])
                } else {
                    succeeded = true
                    break
                }
            }
            environment.observe(function.name, next, succeeded, ContinuousClock.now - started)
            after = catchingUp ? max(next, environment.now()) : next
        }
    }

    /// Nil when the run succeeded, else why not.
    func invoke(_ function: ScheduledFunction, scheduled: Date) async -> String? {
        if let handler = function.handler {
            let outcome = await firstWithin(function.timeout) { () async -> String? in
                do {
                    try await handler(scheduled)
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            return outcome ?? "no answer within \(function.timeout)"
        }
        guard let client else { return "no HTTP client for \(function.url)" }
        var request = HTTPClientRequest(url: function.url)
        request.method = .POST
        request.headers.add(name: "X-CloudScheduler", value: "true")
        request.headers.add(name: "X-CloudScheduler-JobName", value: function.jobName)
        request.headers.add(name: "X-CloudScheduler-ScheduleTime", value: CloudEvent.timestamp(Int64(scheduled.timeIntervalSince1970 * 1000)))
        request.headers.add(name: "User-Agent", value: "Google-Cloud-Scheduler")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: "{}"))
        do {
            let response = try await client.execute(request, timeout: TimeAmount(function.timeout))
            let body = try? await response.body.collect(upTo: 4096)
            guard (200..<300).contains(response.status.code) else {
                return "HTTP \(response.status.code)\(body.map { ": " + String(buffer: $0).prefix(200) } ?? "")"
            }
            return nil
        } catch {
            return "\(error)"
        }
    }
}
