import HearthAuth
import HearthFiles
import HearthStore

/// The server's parts, handed to code that embeds Hearth (Swift functions run in its process)
/// once `buildApplication` has made them, before any function's event is delivered.
public struct ServerServices: Sendable {
    /// The databases (the data folder's, or a cluster node's replicas).
    public let databases: any DatabaseProvider
    /// The name of the default database.
    public let defaultDatabase: String
    /// Cloud Storage's objects.
    public let files: FileStore
    /// Accounts and sign-in.
    public let accounts: AuthService
}
