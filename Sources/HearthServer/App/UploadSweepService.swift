import HearthEngine
import HearthFiles
import Logging
import ServiceLifecycle

/// Removes unfinished uploads while the server runs, not only when it starts: at a fixed
/// interval, the resumable uploads past their lifetime or idle too long (``HearthFiles/UploadLimits``),
/// and what a crash left in the files folder a day ago or more (safe beside other nodes).
///
/// Each sweep that removes something is logged; the bytes unfinished uploads hold are
/// reported as the `hearth_file_pending_upload_bytes` gauge.
struct UploadSweepService: Service {
    let store: FileStore
    let interval: Duration
    let metrics: ServerMetrics?
    let logger: Logger
    /// Called after each sweep with what it removed.
    var onSweep: (@Sendable (FileStore.ExpiredUploads) -> Void)?

    /// What a crash leaves is older than this (ms): younger files may be another node's work
    /// in progress.
    static let leftoverAge: Int64 = 24 * 3600 * 1000

    func run() async throws {
        await repeatUntilShutdown(every: interval) { await sweep() }
    }

    /// Removes what has expired; a failure is logged and the next sweep tries again.
    func sweep() async {
        do {
            var expired = try await store.removeExpiredUploads()
            let leftovers = try await store.removeLeftovers(keepingNewerThan: Self.leftoverAge)
            expired.pendingBytes = store.pendingBytes
            if expired.uploads > 0 || leftovers != FileStore.Leftovers() {
                logger.info("removed expired uploads", metadata: [
                    "uploads": "\(expired.uploads)", "bytes": "\(expired.bytes)", "leftoverUploads": "\(leftovers.uploads)",
                    "leftoverFiles": "\(leftovers.blobs)", "pendingBytes": "\(expired.pendingBytes)",
                ])
            }
            metrics?.gauge("hearth_file_pending_upload_bytes", [:], Double(expired.pendingBytes))
            onSweep?(expired)
        } catch is CancellationError {
            // The server is stopping; the next start sweeps.
        } catch {
            logger.error("removing expired uploads failed", metadata: ["error": "\(error)"])
        }
    }
}
