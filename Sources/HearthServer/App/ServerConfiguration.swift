import Foundation
import HearthAuth
import HearthEngine
import HearthFiles
import NIOCore

/// Everything `hearth serve` can be told: where to listen and where the data lives.
public struct ServerConfiguration: Sendable {
    /// The address to bind.
    public var host: String
    /// The port to bind; 0 picks a free one.
    public var port: Int
    /// The folder holding the databases.
    public var dataFolder: URL
    /// The database used when a request names none.
    public var defaultDatabase: String
    /// The largest request body accepted, in bytes (Firebase's REST limit is 256 MB).
    public var maxWriteBytes: Int
    /// The admin credential (bypasses rules); nil means no admin access outside emulator mode.
    public var adminToken: String?
    /// Emulator mode: accept Firebase's test credentials (`Bearer owner`) for tooling and tests.
    public var emulator: Bool
    /// The rules document text a database uses until rules are stored for it; nil means closed.
    public var defaultRules: String?
    /// How often streams get a `keep-alive` event.
    public var keepAliveInterval: Duration = .seconds(30)
    /// The largest event a stream is sent (Firebase: 512 MB); a bigger change cancels the stream.
    public var maxStreamEventBytes: Int = 512 << 20
    /// The project ID: the audience and issuer of the ID tokens Hearth signs.
    public var projectID: String = "hearth"
    /// Failed sign-ins allowed per account and per client address in one window.
    public var signInFailuresPerAccount = 10
    public var signInFailuresPerAddress = 100
    /// Sign-ups (`accounts:signUp`) one client address may make at once, then per hour
    /// (admins and emulator mode are not limited).
    public var signUpBurstPerAddress = 50
    public var signUpsPerAddressPerHour = 100
    /// The storage rules text (`storage.rules`) for file storage; nil means closed.
    public var storageRules: String?
    /// The largest file accepted, in bytes.
    public var maxFileBytes: Int64 = 5 << 30
    /// What unfinished uploads may hold (open resumable uploads per user or address and in
    /// all, bytes) and how long resumable uploads are kept.
    public var uploadLimits = UploadLimits()
    /// How often expired and abandoned uploads are removed while the server runs.
    public var uploadSweepInterval: Duration = .seconds(600)
    /// Called after each such removal with what it removed (tests wait on it).
    public var onUploadSweep: (@Sendable (FileStore.ExpiredUploads) -> Void)?
    /// The password hashing cost (scrypt N); Firebase's own is 2^14.
    public var passwordHashRounds = 1 << 14
    /// The web front end's files (the social app at `/`, the console at `/console`): those
    /// compiled into the program (`WebFiles(files: HearthWeb.files())`) or a folder
    /// (`WebFiles(folder:)`); nil serves none.
    public var webFiles: WebFiles?
    /// The owner's Firebase web app, served at `/` in place of the demo app (`--hosting`); the
    /// console stays at `/console`, and `webFiles` still serves it and the auth pages.
    public var hosting: HostingSettings?
    /// Host names (lower case) mapped to a site of the releases deployed with `hearth hosting
    /// deploy`, which are served when ``hosting`` is nil (settings file `hosting.hosts`).
    public var hostingHosts: [String: String] = [:]
    /// The folder of Firebase JS SDK copies for those releases (`--sdk-dir`).
    public var hostingSDKFolder: URL?
    /// A second port on `host` that answers only file storage, so browsers open user files on
    /// another origin than the app's; 0 picks a free one, nil means none.
    public var filesPort: Int?
    /// A port on 127.0.0.1 for the server's own functions (see `FunctionsPortResponder`):
    /// there the Admin SDK's emulator credential `owner` acts as the admin token; nil opens none.
    public var functionsPort: Int?
    /// Where the service-account key file for the functions goes (see `FunctionsCredentials`):
    /// a new key at each start, for ``functionsPort``; nil writes none.
    public var functionsCredentialsFile: URL?
    /// The origin browsers use for files (`https://files.example.com`), when a proxy puts one in
    /// front of the files port or gives the files a host name of their own; see `FilesOrigin`.
    public var filesOrigin: String?
    /// Proxies on other machines whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed
    /// (IP addresses); a proxy on this machine (a loopback peer) always is. See `ProxyTrust`.
    public var trustedProxies: [String] = []
    /// Whether a peer on this machine (a loopback address) is a trusted proxy, as the usual
    /// setup (nginx on the same host) needs. Turn it off where other local users could reach
    /// the port and forge `X-Forwarded-For`; tests of per-address limits do, to count their
    /// loopback connections as clients.
    public var trustLoopbackProxies = true
    /// Timeouts for slow clients and caps on connections (`hearth serve --header-timeout`, …).
    public var connectionLimits = ConnectionLimits()
    /// What one realtime connection may hold at once (listens, writes in flight, onDisconnect
    /// operations, queued events for a slow reader, message and answer sizes).
    public var realtimeLimits = RealtimeLimits()
    /// The storage bucket web pages are told to use (`/__/firebase/init.json`), named after the
    /// project as Firebase's default bucket is.
    public var storageBucket: String { "\(projectID).appspot.com" }
    /// The address people reach the app at (`https://social.example.com`): emailed links point
    /// there. Unset, links use this server's own address.
    public var publicURL: String?
    /// The app's name in emails.
    public var appName = "Hearth"
    /// The `From` of emails; unset, `noreply@` the public host.
    public var emailSender: String?
    /// The mail server; nil sends no email (admins can still make links, and the emulator lists them).
    public var smtp: SMTPMailer.Settings?
    public var emailTemplates = EmailTemplates()
    /// Host names besides the public URL's, `localhost` and `127.0.0.1` that sign-ins may return
    /// to and emailed links may continue to (Firebase's authorized domains).
    public var authorizedDomains: [String] = []
    /// Email enumeration protection (on, as in new Firebase projects): see
    /// `AuthService.Policy.emailEnumerationProtection`.
    public var emailEnumerationProtection = true
    /// Sign-in providers from the settings file (installed into the account store at start).
    public var providers: [ProviderConfig] = []
    /// The server clock in milliseconds since the epoch (token expiry).
    /// A port that serves `/metrics` to anyone who reaches it, without the admin token (keep
    /// it on a private network), or nil: then `/metrics` is on the main port for admins.
    public var metricsPort: Int?
    /// The address the metrics port listens on.
    public var metricsHost = "127.0.0.1"
    /// Log every request at `info`: method, path (credentials hidden), status, time, client.
    public var accessLog = false
    /// How many of the latest requests the server keeps for the console's request log
    /// (`GET /.hearth/requests`); 0 keeps none.
    public var requestLogSize = RequestLog.defaultCapacity
    /// How often the server keeps a sample of its figures for the console's graphs
    /// (`GET /.hearth/metrics/history`), and how many samples it keeps: by default one every 10
    /// seconds for 6 hours.
    public var metricsHistoryInterval: Duration = .seconds(10)
    public var metricsHistorySize = 2_160
    /// The cluster this server joins: a PostgreSQL URL, or nil for a single node.
    public var clusterURL: String?
    /// This node's ID in the cluster (default: host name and port).
    public var clusterNodeID: String?
    /// Where this node is reached, shown by `hearth cluster status` (default: its address and port).
    public var clusterNodeAddress: String?
    /// Where file content lives (default: `files` in the data folder); in a cluster, a folder
    /// every node mounts.
    public var filesDirectory: URL?
    /// Scheduled online backups (`--backup-every`): how often, where, and how many to keep.
    public var backupInterval: Duration?
    public var backupFolder: URL?
    public var backupKeep = 7
    /// The functions folder (`--functions`), which the server's backups copy too; nil for none.
    public var functionsFolder: URL?
    /// Bytes the bodies of non-admin database writes may hold at once, as they are read and
    /// parsed (about twice their size); past it such a write is refused with 503.
    public var maxBufferedBodyBytes = ServerConfiguration.defaultMaxBufferedBodyBytes
    public static let defaultMaxBufferedBodyBytes = 512 << 20
    /// Databases open at once at most (`--max-open-databases`): past it idle ones close early,
    /// and with none idle a request for another is refused with 503.
    public var maxOpenDatabases = 256
    /// A database with no stream, realtime session or request for this long is closed (it
    /// opens again on its next use).
    public var idleDatabaseTimeout: Duration = .seconds(600)
    public var clock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// `origin` as `scheme://host[:port]` when it is an `http` or `https` origin with no path,
    /// query or credentials (what `filesOrigin` must be); nil otherwise.
    public static func normalizedOrigin(_ origin: String) -> String? { FilesOrigin.validated(origin) }

    /// `address` written as the server compares peers' addresses when it is an IPv4 or IPv6
    /// address (what `trustedProxies` must hold); nil otherwise.
    public static func normalizedIPAddress(_ address: String) -> String? {
        (try? SocketAddress(ipAddress: address, port: 0))?.ipAddress
    }

    public init(
        host: String = "127.0.0.1",
        port: Int = 9000,
        dataFolder: URL = URL(fileURLWithPath: "hearth-data"),
        defaultDatabase: String = "default",
        maxWriteBytes: Int = 256 * 1024 * 1024,
        adminToken: String? = nil,
        emulator: Bool = false,
        defaultRules: String? = nil
    ) {
        self.adminToken = adminToken
        self.emulator = emulator
        self.defaultRules = defaultRules
        self.host = host
        self.port = port
        self.dataFolder = dataFolder
        self.defaultDatabase = defaultDatabase
        self.maxWriteBytes = maxWriteBytes
    }
}
