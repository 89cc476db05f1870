/// Where a ``BackupSchedule`` reports each backup it made or failed to make, so the server's
/// metrics can count them without this target knowing about metrics.
public struct BackupReport: Sendable {
    /// A backup of `bytes` finished after `duration`, at `time` (milliseconds since 1970).
    public var finished: @Sendable (_ bytes: Int64, _ duration: Duration, _ time: Int64) -> Void
    /// A backup failed.
    public var failed: @Sendable () -> Void

    /// Reports to `finished` and `failed`.
    public init(
        finished: @escaping @Sendable (_ bytes: Int64, _ duration: Duration, _ time: Int64) -> Void,
        failed: @escaping @Sendable () -> Void
    ) {
        self.finished = finished
        self.failed = failed
    }
}
