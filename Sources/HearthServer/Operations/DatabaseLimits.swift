/// Which databases a server opens for whom, and how many it keeps open.
///
/// A database is created by using it only by an admin (or anyone, on an emulator): an outsider
/// who names databases that do not exist gets Firebase's "unknown database" answer and costs
/// the server nothing. The databases that exist are opened on use and closed again once idle,
/// so the open ones (each a few file descriptors and its data in memory) stay bounded.
struct DatabaseLimits: Sendable {
    /// The database every request without a name addresses; it always exists and stays open.
    var defaultDatabase = "default"
    /// True on an emulator: any name creates a database, as Firebase's emulator does.
    var createOnUse = false
    /// Open databases at most; past it idle ones close, and with none idle a new one is refused.
    var maxOpen = 256
    /// A database nothing holds and nobody used for this long (milliseconds) is closed.
    var idleAfter: Int64 = 10 * 60 * 1000
    /// At the bound, a database unused for this long (milliseconds) may close early.
    var minimumIdleBeforeEviction: Int64 = 60 * 1000
}
