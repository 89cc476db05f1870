import Foundation
import Logging
import PostgresNIO

/// Which node of a cluster delivers the functions' events and runs the scheduled functions:
/// the holder of one lease row in PostgreSQL (`hearth_functions_lease`), renewed with every
/// heartbeat, taken by another node once it ran out. Every node runs the function processes
/// (callable, HTTPS and blocking functions are answered where they are called); only the
/// holder runs the delivery lanes and the scheduler, so each event is delivered by one live
/// node, and what its death left undelivered waits in the outboxes for the next holder.
///
/// Times of the lease are PostgreSQL's (`now()`), so the nodes' clocks need not agree. The
/// holder stops delivering once most of its lease passed (by its own clock, counted from when
/// the last successful renewal was sent) without another renewal, before anyone can take over;
/// a delivery cut short is made again by the next holder (at least once).
///
/// Threading: ``run(_:)`` is one task; the rest is PostgreSQL's.
public final class FunctionsLease: Sendable {
    /// How the loop tells time and waits; injected so tests need not wait.
    public struct Timing: Sendable {
        public var leaseSeconds: Int
        public var renewInterval: Duration
        public var now: @Sendable () -> ContinuousClock.Instant
        public var sleep: @Sendable (Duration) async throws -> Void

        public init(
            leaseSeconds: Int, renewInterval: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now },
            sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
        ) {
            self.leaseSeconds = leaseSeconds
            self.renewInterval = renewInterval
            self.now = now
            self.sleep = sleep
        }
    }

    let client: PostgresClient
    /// Bounds each renewal (with PostgreSQL unreachable the pool waits without end).
    let log: ClusterLog
    public let node: String
    let timing: Timing
    let logger: Logger

    /// - Parameter log: the cluster's log, whose client and deadline the lease uses.
    public init(log: ClusterLog, node: String, timing: Timing, logger: Logger) {
        self.client = log.client
        self.log = log
        self.node = node
        self.timing = timing
        self.logger = logger
    }

    /// Makes the table when it is missing (part of the cluster's table preparation).
    public static func prepare(on client: PostgresClient, logger: Logger) async throws {
        try await ClusterLog.createTables(on: client, logger: logger, [
            """
            CREATE TABLE IF NOT EXISTS hearth_functions_lease (
                name TEXT PRIMARY KEY,
                holder TEXT NOT NULL,
                lease_until TIMESTAMPTZ NOT NULL
            )
            """,
        ])
    }

    /// Renews this node's lease, or takes it when nobody holds it or its holder's ran out.
    /// - Returns: true when this node holds it now.
    public func acquire() async throws -> Bool {
        let rows = try await client.query(
            """
            INSERT INTO hearth_functions_lease (name, holder, lease_until)
            VALUES ('functions', \(node), now() + make_interval(secs => \(timing.leaseSeconds)))
            ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
            WHERE hearth_functions_lease.holder = excluded.holder OR hearth_functions_lease.lease_until < now()
            RETURNING holder
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// Ends this node's lease now, if it holds it (it is stopping): another takes over at once.
    public func release() async throws {
        try await client.query(
            "UPDATE hearth_functions_lease SET lease_until = now() - interval '1 second' WHERE name = 'functions' AND holder = \(node)",
            logger: logger)
    }

    /// The node holding the lease while it runs, if one does.
    public func holder() async throws -> String? {
        let rows = try await client.query(
            "SELECT holder FROM hearth_functions_lease WHERE name = 'functions' AND lease_until > now()", logger: logger)
        for try await (holder) in rows.decode(String.self) { return holder }
        return nil
    }

    /// Keeps trying to hold the lease until cancelled, telling `changed` each time this node
    /// gains it (true) or loses it (false); releases it when cancelled.
    public func run(_ changed: @Sendable (Bool) -> Void) async {
        let lease = Duration.seconds(timing.leaseSeconds)
        var held = false
        var renewedFrom = timing.now()
        while !Task.isCancelled {
            let sent = timing.now()
            var holds = false
            do {
                holds = try await log.withDeadline { try await self.acquire() }
                if holds { renewedFrom = sent }
            } catch {
                if Task.isCancelled { break }
                logger.warning("could not renew the functions' lease", metadata: ["error": "\(error)"])
                // Still ours until most of it passed without a renewal.
                holds = held && timing.now() - renewedFrom < lease * 0.8
            }
            if holds != held {
                held = holds
                logger.info(held ? "this node delivers the functions' events" : "this node no longer delivers the functions' events")
                changed(held)
            }
            do { try await timing.sleep(timing.renewInterval) } catch { break }
        }
        if held {
            changed(false)
            // In a task of its own: this one is cancelled, and a query in it would not run.
            await Task { try? await self.release() }.value
        }
    }
}
