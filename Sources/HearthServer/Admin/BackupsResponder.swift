import Foundation
import HearthBackup
import HearthCore
import HearthEngine
import HearthStore
import Hummingbird
import Logging

/// The console's backups, for admins:
/// - `GET /.hearth/backups`: the backups in `--backup-dir` (newest first, each checked against
///   its manifest), the backup running now, and the command of a whole-server restore;
///   `?progress` answers only the running backup's progress;
/// - `POST /.hearth/backups`: a backup now, by the schedule's own code (409 while one runs);
/// - `POST /.hearth/backups/preview` and `/.hearth/backups/restore` with
///   `{"backup", "database", "path"}`: one database's value at a path, now and in the backup;
///   and putting the backup's value back there as one admin write, through the operations
///   layer, so listeners see it and point-in-time restore can undo it.
struct BackupsResponder: Sendable {
    static let path = "/.hearth/backups"
    static let previewPath = "/.hearth/backups/preview"
    static let restorePath = "/.hearth/backups/restore"

    static func handles(_ path: String) -> Bool {
        path == Self.path || path == previewPath || path == restorePath
    }

    let operations: DatabaseOperations
    let admin: AdminCredential
    /// Makes a backup as the schedule does; nil when no backup folder is configured.
    let schedule: BackupSchedule?
    /// How often backups are made on their own; nil when only the console makes them.
    var every: Duration? = nil
    let gate: BackupGate
    let dataFolder: URL
    /// The functions folder the backups hold too, for the restore command; nil for none.
    let functionsFolder: URL?
    /// For the temporary copies of a backup's database.
    let scratch: URL
    /// The largest value restored in one write, as for a REST write (``ServerConfiguration/maxWriteBytes``).
    let maxWriteBytes: Int
    /// Backups already checked against their manifest.
    let checks = BackupCheckCache()

    static let notConfigured = "No backup folder is configured. Start the server with --backup-dir <folder> "
        + "(and --backup-every 1d for scheduled backups) to list, make and restore backups here."

    /// Failures are thrown, and written by the namespace's ``RealtimeDatabaseErrors``.
    func respond(to request: Request) async throws -> Response {
        let parameters = try await admin.admit(request, methods: [.get, .post])
        let path = request.uri.path
        switch (path, request.method) {
        case (Self.path, .get):
            // `?progress`: only how far the running backup is (polled while one runs).
            return parameters["progress"] != nil ? progress() : await list()
        case (Self.path, .post): return try await backUpNow()
        case (Self.previewPath, .post), (Self.restorePath, .post):
            let target = try await Self.target(of: request)
            return path == Self.previewPath ? try await preview(target) : try await restore(target)
        default:
            throw HearthError(.invalidData, "Invalid method for \(path): \(request.method.rawValue).")
        }
    }

    // MARK: - Listing and backing up

    struct ListBody: Encodable {
        var configured: Bool
        var message: String?
        var folder: String?
        /// Scheduled backups: how often and how many are kept; nil when there are none.
        var schedule: Schedule?
        /// When the last backups finished and failed, and why (since the server started).
        var last: BackupGate.Outcomes
        var running: Running?
        var backups: [BackupCatalog.Listing]
        /// The offline restore of a whole server, with `<backup>` for the backup's name.
        var restoreCommand: String?
    }

    struct Schedule: Encodable {
        var everyMilliseconds: Int64
        var keep: Int
    }

    struct Running: Encodable {
        var doneBytes: Int64
        var totalBytes: Int64
        var item: String
    }

    private func progress() -> Response {
        let running = gate.running.map { Running(doneBytes: $0.doneBytes, totalBytes: $0.totalBytes, item: $0.item) }
        return JSONResponse.encoding(ProgressBody(configured: schedule != nil, schedule: scheduled, last: gate.lastOutcomes, running: running))
    }

    /// Cheap to ask (nothing is read from disk): the console's warning about backups uses it.
    struct ProgressBody: Encodable {
        var configured: Bool
        var schedule: Schedule?
        var last: BackupGate.Outcomes
        var running: Running?
    }

    private var scheduled: Schedule? {
        guard let schedule, let every else { return nil }
        return Schedule(everyMilliseconds: Int64(every.components.seconds) * 1000, keep: schedule.keepCount)
    }

    private func list() async -> Response {
        guard let schedule else {
            return JSONResponse.encoding(ListBody(configured: false, message: Self.notConfigured, last: gate.lastOutcomes, backups: []))
        }
        let catalog = BackupCatalog(folder: schedule.folder, cache: checks)
        // Checking every file reads them all: off the event loop.
        let backups = await Self.offloaded { catalog.list() }
        let running = gate.running.map { Running(doneBytes: $0.doneBytes, totalBytes: $0.totalBytes, item: $0.item) }
        return JSONResponse.encoding(ListBody(
            configured: true, folder: catalog.folder.path, schedule: scheduled, last: gate.lastOutcomes, running: running,
            backups: backups,
            restoreCommand: restoreCommand(in: catalog.folder)))
    }

    /// The offline restore of the whole server from `<backup>` in `folder`, its functions too.
    func restoreCommand(in folder: URL) -> String {
        let functions = functionsFolder.map { " --functions \($0.path)" } ?? ""
        return "hearth restore \(folder.appendingPathComponent("<backup>").path) --data \(dataFolder.path)\(functions) --force"
    }

    private func backUpNow() async throws -> Response {
        guard let schedule else { throw HearthError(.invalidData, Self.notConfigured) }
        switch await schedule.attempt() {
        case .made(let url, _):
            let checks = self.checks
            let listing = await Self.offloaded {
                BackupCatalog(folder: schedule.folder, cache: checks).listing(named: url.lastPathComponent)
            }
            return JSONResponse.encoding(["backup": listing])
        case .busy:
            return Self.error(.conflict, "A backup is already running; wait for it to finish.")
        case .failed(let words):
            return Self.error(.internalServerError, "The backup failed: \(words)")
        }
    }

    // MARK: - Restoring a path

    struct Target: Sendable {
        var backup: String
        var database: String
        var path: Path
    }

    /// The size of a value, for the preview.
    struct Figures: Encodable {
        var exists: Bool
        var bytes: Int
        var children: Int
    }

    struct PreviewBody: Encodable {
        var backup: String
        var database: String
        var path: String
        var current: Figures
        var backed: Figures
    }

    private func preview(_ target: Target) async throws -> Response {
        let (database, old) = try await read(target)
        let current = database.current.state.value(at: target.path)
        return JSONResponse.encoding(PreviewBody(
            backup: target.backup, database: target.database, path: target.path.description,
            current: Self.figures(current), backed: Self.figures(old)))
    }

    private func restore(_ target: Target) async throws -> Response {
        let (database, old) = try await read(target)
        let restored = Self.figures(old)
        guard restored.bytes <= maxWriteBytes else {
            return Self.error(.contentTooLarge, "The backup's value there is \(restored.bytes) bytes, more than one write "
                + "may hold (\(maxWriteBytes)): restore a deeper path, or the whole server offline with hearth restore.")
        }
        let committed = try await operations.set(database, at: target.path, to: JSONParser.Parsed(node: old), auth: .admin)
        operations.logger.notice("path restored from a backup", metadata: [
            "backup": "\(target.backup)", "database": "\(target.database)", "path": "\(target.path)",
            "sequence": "\(committed.sequence)",
        ])
        return JSONResponse.encoding(RestoreBody(
            backup: target.backup, database: target.database, path: target.path.description, sequence: committed.sequence,
            restored: restored))
    }

    struct RestoreBody: Encodable {
        var backup: String
        var database: String
        var path: String
        /// The write that put the backup's value back (`hearth restore --to` can go to just before it).
        var sequence: Int64
        var restored: Figures
    }

    /// The live database and the backup's value at the target's path.
    private func read(_ target: Target) async throws -> (Database, Node) {
        guard let schedule else { throw HearthError(.invalidData, Self.notConfigured) }
        guard DataFolder.isValidDatabaseName(target.database) else {
            throw HearthError(.invalidData, "'\(target.database)' is not a database name.")
        }
        let catalog = BackupCatalog(folder: schedule.folder)
        let scratch = self.scratch
        let value = try await Self.offloadedThrowing {
            try catalog.value(inBackup: target.backup, database: target.database, at: target.path, scratch: scratch)
        }
        return (try await operations.database(named: target.database, creating: true), value)
    }

    static func target(of request: Request) async throws(HearthError) -> Target {
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: 64 * 1024)
        } catch {
            throw HearthError(.invalidData, "The request body is too large.")
        }
        let node = try JSONParser.parseDocument(Array(buffer: bytes))
        func text(_ name: String) throws(HearthError) -> String {
            guard case .string(let value) = node.child(ChildKey(name)) else {
                throw HearthError(.invalidData, "The body must name \"\(name)\" (a string).")
            }
            return value
        }
        return Target(backup: try text("backup"), database: try text("database"), path: try Path(parsing: try text("path")))
    }

    // MARK: - Helpers

    static func figures(_ node: Node) -> Figures {
        Figures(exists: !node.isNull, bytes: node.isNull ? 0 : JSONWriter.bytes(node).count, children: node.childCount)
    }

    /// `{"error": "<message>"}` with `status`: an answer that is not a success (a backup
    /// already running, one that failed, a value too big to restore in one write).
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        HearthError.response(status: status, message: message)
    }

    /// Runs blocking file work on a thread of its own.
    static func offloaded<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(returning: body()) }
        }
    }

    static func offloadedThrowing<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async { continuation.resume(with: Result { try body() }) }
        }
    }
}
