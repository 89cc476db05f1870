import Foundation
import Logging
import ServiceLifecycle

/// `hearth serve --backup-every`: an online backup of the data folder at a fixed interval into
/// `<folder>/hearth-backup-<UTC time>`, keeping the newest `keep` finished backups.
///
/// Backups run on a thread of their own (they are file and SQLite work that blocks), one at a
/// time; a failed one is logged as an error (so the console shows it) and the next is tried
/// at the next interval.
public struct BackupSchedule: Service {
    /// A backup folder's name: the prefix, then the time in UTC, sortable.
    static let prefix = "hearth-backup-"

    let backup: DataFolderBackup
    /// The folder the backups are made in (`--backup-dir`).
    public let folder: URL
    let interval: Duration
    let keep: Int
    /// How many finished backups are kept.
    public var keepCount: Int { keep }
    /// Where finished and failed backups are reported (the server's metrics).
    let report: BackupReport?
    let logger: Logger
    /// Shared with backups asked for from the console, so two never run at once.
    var gate = BackupGate()

    /// Makes a backup every `interval` and prunes to `keep`, until the service group shuts down.
    public func run() async throws {
        // A backup under way when the server stops is finished (the data folder stays open
        // until it is); only the wait for the next one is cut short.
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let waited: Bool = await cancelWhenGracefulShutdown {
                do {
                    try await Task.sleep(for: interval)
                    return true
                } catch {
                    return false
                }
            }
            guard waited else { return }
            await runOnce()
        }
    }

    /// What one backup came to.
    public enum Outcome: Sendable {
        case made(URL, BackupManifest)
        /// Another backup was running: none was started.
        case busy
        case failed(String)
    }

    /// Makes one backup and prunes old ones.
    @discardableResult
    func runOnce() async -> URL? {
        if case .made(let url, _) = await attempt() { return url }
        return nil
    }

    /// Makes one backup, unless one is already running, and prunes old ones.
    public func attempt() async -> Outcome {
        guard gate.enter() else {
            logger.notice("backup skipped: another one is running")
            return .busy
        }
        defer { gate.leave() }
        let name = Self.prefix + Self.stamp(backup.clock())
        let destination = folder.appendingPathComponent(name)
        let started = ContinuousClock.now
        let outcome: Result<BackupManifest, any Error> = await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                continuation.resume(returning: Result {
                    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                    return try backup.write(to: destination) { gate.report($0) }
                })
            }
        }
        switch outcome {
        case .success(let manifest):
            logger.info("backup written", metadata: [
                "backup": "\(destination.path)", "bytes": "\(manifest.totalBytes)", "seconds": "\(ContinuousClock.now - started)",
            ])
            report?.finished(manifest.totalBytes, ContinuousClock.now - started, manifest.finishedAt)
            gate.recordFinished(at: manifest.finishedAt)
            prune()
            return .made(destination, manifest)
        case .failure(let error):
            logger.error("backup failed", metadata: ["backup": "\(destination.path)", "error": "\(error)"])
            report?.failed()
            gate.recordFailed(at: backup.clock(), "\(error)")
            try? FileManager.default.removeItem(at: destination.appendingPathExtension("partial"))
            return .failed("\(error)")
        }
    }

    /// Removes finished backups beyond the newest `keep`, and unfinished ones left by a crash.
    func prune() {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix(Self.prefix) }.sorted()
        let finished = names.filter { !$0.hasSuffix(".partial") }
        for name in finished.dropLast(keep) {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
        let newest = finished.last ?? ""
        for name in names where name.hasSuffix(".partial") && name < newest {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }

    /// `20261125T021500Z`-style UTC time, with milliseconds so two backups never share a name.
    static func stamp(_ milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(
            format: "%04d%02d%02dT%02d%02d%02d.%03dZ", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!,
            parts.second!, Int(milliseconds % 1000))
    }

    /// Backups of `backup` into `folder` every `interval`, keeping the newest `keep`; `gate` is shared with backups asked for from the console.
    public init(backup: DataFolderBackup, folder: URL, interval: Duration, keep: Int, report: BackupReport?, logger: Logger, gate: BackupGate = BackupGate()) {
        self.backup = backup
        self.folder = folder
        self.interval = interval
        self.keep = keep
        self.report = report
        self.logger = logger
        self.gate = gate
    }
}
