import Foundation
import HearthAuth
import HearthCore
import Logging
import PostgresNIO

/// The accounts of a cluster, in the PostgreSQL its nodes share: every node sees the same
/// accounts, sessions, action codes, pending provider sign-ins and provider configurations.
/// It behaves as ``HearthAuth/AccountStore`` does (the same suite checks both).
///
/// Read-modify-writes are one transaction each at PostgreSQL's default isolation (read
/// committed): the rows they change are locked first (`SELECT … FOR UPDATE`), so a second
/// transaction waits and then sees the first's result. Uniqueness is held by unique indexes,
/// so two nodes cannot both add the same email; the node that loses the race gets a unique
/// violation, and its transaction is run again from the start, where its own checks now see
/// the winner and refuse with the same ``HearthAuth/AuthError`` SQLite's path gives
/// (`EMAIL_EXISTS`, …). Deadlocks and serialization failures are retried the same way. So a
/// closure given to ``modify(uid:_:)`` or ``consumeActionCode(digest:now:account:apply:)`` may
/// run more than once; only the last run's result is written.
///
/// Text that is compared or ordered (uids, emails, phone numbers, provider IDs) uses the `C`
/// collation: byte order, as SQLite compares, whatever the database's locale.
public final class PostgresAccountStore: AccountStorage {
    let client: PostgresClient
    let logger: Logger
    /// Decides the events of account triggers, committed with the accounts they are about in
    /// the cluster's outbox (source `accounts`).
    let recorder: (any AccountEventRecorder)?
    /// How many times a transaction runs before a lost race is reported.
    static let attempts = 5
    /// The cluster outbox's source for account events.
    public static let outboxSource = "accounts"

    /// - Parameters:
    ///   - client: a running client (its `run()` is the caller's to run). Call ``prepare()``
    ///     before anything else.
    ///   - recorder: the functions' account triggers, if any.
    public init(client: PostgresClient, recorder: (any AccountEventRecorder)? = nil, logger: Logger) {
        self.client = client
        self.recorder = recorder
        self.logger = logger
    }

    /// Records the events `change` makes, inside the transaction on `connection`.
    /// - Returns: true when there were events (tell the recorder once the transaction committed).
    func record(_ change: AccountLifecycleChange, on connection: PostgresConnection) async throws -> Bool {
        guard let recorder else { return false }
        return try await PostgresOutbox.record(recorder.events(for: change), source: Self.outboxSource, on: connection, logger: logger) != nil
    }

    /// Tells the recorder that events it made were committed.
    func committed(_ recorded: Bool) {
        if recorded { recorder?.committed() }
    }

    /// Makes the tables when they are missing (safe to run on every node at start).
    public func prepare() async throws {
        try await ClusterLog.createTables(on: client, logger: logger, [
            """
            CREATE TABLE IF NOT EXISTS hearth_auth_user (
                uid TEXT COLLATE "C" NOT NULL,
                email TEXT COLLATE "C",
                email_verified BOOLEAN NOT NULL DEFAULT false,
                display_name TEXT,
                photo_url TEXT,
                password_hash TEXT,
                disabled BOOLEAN NOT NULL DEFAULT false,
                custom_claims TEXT,
                provider TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                last_login_at BIGINT,
                valid_since BIGINT NOT NULL,
                phone_number TEXT COLLATE "C",
                password_updated_at BIGINT,
                email_link_sign_in BOOLEAN NOT NULL DEFAULT false,
                CONSTRAINT hearth_auth_user_pkey PRIMARY KEY (uid),
                CONSTRAINT hearth_auth_user_email UNIQUE (email),
                CONSTRAINT hearth_auth_user_phone_number UNIQUE (phone_number)
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_auth_identity (
                provider_id TEXT COLLATE "C" NOT NULL,
                raw_id TEXT COLLATE "C" NOT NULL,
                uid TEXT COLLATE "C" NOT NULL REFERENCES hearth_auth_user(uid) ON DELETE CASCADE ON UPDATE CASCADE,
                email TEXT,
                display_name TEXT,
                photo_url TEXT,
                position INTEGER NOT NULL,
                CONSTRAINT hearth_auth_identity_pkey PRIMARY KEY (provider_id, raw_id)
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_auth_identity_uid ON hearth_auth_identity(uid)",
            // Added after the table: clusters made before it get the column at their next start.
            "ALTER TABLE hearth_auth_user ADD COLUMN IF NOT EXISTS last_refresh_at BIGINT",
            """
            CREATE TABLE IF NOT EXISTS hearth_auth_refresh_token (
                digest BYTEA PRIMARY KEY,
                uid TEXT COLLATE "C" NOT NULL REFERENCES hearth_auth_user(uid) ON DELETE CASCADE ON UPDATE CASCADE,
                created_at BIGINT NOT NULL,
                provider TEXT,
                claims TEXT,
                revoked_at BIGINT
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_auth_refresh_token_uid ON hearth_auth_refresh_token(uid)",
            """
            CREATE INDEX IF NOT EXISTS hearth_auth_refresh_token_revoked ON hearth_auth_refresh_token(revoked_at)
            WHERE revoked_at IS NOT NULL
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_auth_action_code (
                digest BYTEA PRIMARY KEY,
                added BIGINT GENERATED ALWAYS AS IDENTITY,
                kind TEXT NOT NULL,
                uid TEXT COLLATE "C" REFERENCES hearth_auth_user(uid) ON DELETE CASCADE ON UPDATE CASCADE,
                email TEXT NOT NULL,
                new_email TEXT,
                created_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                continue_url TEXT,
                code TEXT,
                link TEXT
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_auth_action_code_expiry ON hearth_auth_action_code(expires_at)",
            "CREATE INDEX IF NOT EXISTS hearth_auth_action_code_uid ON hearth_auth_action_code(uid)",
            """
            CREATE TABLE IF NOT EXISTS hearth_auth_provider_config (
                id TEXT COLLATE "C" PRIMARY KEY,
                resource TEXT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS hearth_auth_pending_sign_in (
                digest BYTEA PRIMARY KEY,
                provider_id TEXT NOT NULL,
                state TEXT NOT NULL,
                nonce TEXT NOT NULL,
                code_verifier TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                expires_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS hearth_auth_pending_sign_in_expiry ON hearth_auth_pending_sign_in(expires_at)",
            """
            CREATE TABLE IF NOT EXISTS hearth_auth_service_account_key (
                id TEXT COLLATE "C" PRIMARY KEY,
                client_email TEXT NOT NULL,
                public_key TEXT NOT NULL,
                token_uri TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT
            )
            """,
        ])
    }

    // MARK: - Transactions

    /// Runs `body` in one transaction, again from the start when it lost a race to another
    /// transaction (see ``PostgresNIO/PostgresClient/retryingTransaction(attempts:logger:_:)``).
    /// A race still lost after ``attempts`` runs is reported as its ``AuthError``.
    func transaction<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        do {
            return try await client.retryingTransaction(attempts: Self.attempts, logger: logger, body)
        } catch let error as PSQLError {
            throw Self.refusal(error) ?? error
        }
    }

    /// The refusal a unique violation stands for.
    static func refusal(_ error: PSQLError) -> AuthError? {
        guard error.serverInfo?[.sqlState] == "23505" else { return nil }
        return switch error.serverInfo?[.constraintName] {
        case "hearth_auth_user_pkey": .duplicateLocalID
        case "hearth_auth_user_email": .emailExists
        case "hearth_auth_user_phone_number": .phoneNumberExists
        case "hearth_auth_identity_pkey": .federatedUserIDAlreadyLinked
        default: nil
        }
    }

    /// Runs `body` with a connection of the pool, outside any transaction (one statement, one
    /// snapshot).
    func read<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await client.withConnection { connection in try await body(connection) }
    }
}
