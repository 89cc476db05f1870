/// Which databases a server opens for whom, and how many it keeps open.
///
/// A database is created by using it only by an admin (or anyone, on an emulator): an outsider
/// who names databases that do not exist gets Firebase's "unknown database" answer and costs
/// the server nothing. The databases that exist are opened on use and closed again once idle,
/// so the open ones (each a few file descriptors and its data in memory) stay bounded.
public struct DatabaseLimits: Sendable {
    /// The database every request without a name addresses; it always exists and stays open.
    public var defaultDatabase = "default"
    /// True on an emulator: any name creates a database, as Firebase's emulator does.
    public var createOnUse = false
    /// Open databases at most; past it idle ones close, and with none idle a new one is refused.
    public var maxOpen = 256
    /// A database nothing holds and nobody used for this long (milliseconds) is closed.
    public var idleAfter: Int64 = 10 * 60 * 1000
    /// At the bound, a database unused for this long (milliseconds) may close early.
    public var minimumIdleBeforeEviction: Int64 = 60 * 1000

    /// Descriptors an open database may use (its log, snapshot, write-ahead log and shared
    /// memory files, and a margin).
    static let descriptorsPerDatabase = 8
    /// Descriptors kept for everything else (accounts, files, the disconnect queue, the runtime).
    static let descriptorsForTheRest = 64

    /// The open databases a server can afford: at most `configured`, and no more than the
    /// descriptors connections leave (``ConnectionLimits/resolvedMaxConnections()``) can hold.
    /// Running out of descriptors must never happen: the runtime's thread-pool monitor (libdispatch
    /// on Linux) traps when it cannot open `/proc` files, which kills the process.
    public static func maxOpen(configured: Int, descriptorLimit: Int?, maxConnections: Int?) -> Int {
        guard let descriptorLimit, let maxConnections else { return configured }
        let left = descriptorLimit - maxConnections - descriptorsForTheRest
        return max(1, min(configured, left / descriptorsPerDatabase))
    }

    /// Every limit as the properties above describe; the defaults are a server's.
    public init(defaultDatabase: String = "default", createOnUse: Bool = false, maxOpen: Int = 256, idleAfter: Int64 = 10 * 60 * 1000, minimumIdleBeforeEviction: Int64 = 60 * 1000) {
        self.defaultDatabase = defaultDatabase
        self.createOnUse = createOnUse
        self.maxOpen = maxOpen
        self.idleAfter = idleAfter
        self.minimumIdleBeforeEviction = minimumIdleBeforeEviction
    }
}
