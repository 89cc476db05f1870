/// One of `hosting.redirects`: requests whose path matches ``source`` are sent to
/// ``destination`` with ``status``. The destination may name the source's captures: `:name`
/// (and `:name*`) for a glob's `:name` segments, `:1`, `:2` or `:name` for a regex's groups.
public struct HostingRedirect: Sendable {
    /// The statuses a redirect may have.
    public static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    public let source: HostingSource
    public let destination: String
    /// 301 unless `type` says otherwise.
    public let status: Int

    public init(source: HostingSource, destination: String, status: Int = 301) {
        self.source = source
        self.destination = destination
        self.status = status
    }
}
