import Foundation

/// A real PostgreSQL server for tests: a new cluster (`initdb`) in a temporary folder, started
/// with `pg_ctl` on a free loopback port, trusting local connections as the user `hearth`, and
/// stopped (and its folder removed) by ``stop()``.
///
/// Debian's `postgresql` package provides the programs (`scripts/test` installs it). PostgreSQL
/// refuses to run as root: as root the cluster runs as the `postgres` system user.
public final class TestPostgres: @unchecked Sendable {
    public let port: Int
    public let user = "hearth"
    public let database = "postgres"
    private let folder: URL
    private let binaries: URL
    private let runAs: String?

    /// Starts a new cluster. Throws with the programs' output when it cannot.
    public init() throws {
        guard let binaries = Self.findBinaries() else {
            throw TestServerError("PostgreSQL's initdb and pg_ctl are not installed (Debian's postgresql package)")
        }
        self.binaries = binaries
        runAs = getuid() == 0 ? "postgres" : nil
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearth-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        if let runAs { try Self.run("/bin/chown", ["-R", "\(runAs):\(runAs)", folder.path]) }
        let data = folder.appendingPathComponent("data").path
        try run("initdb", ["-D", data, "-U", user, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"])
        try run("pg_ctl", [
            "-D", data, "-l", folder.appendingPathComponent("log.txt").path, "-w", "-t", "180", "start",
            "-o", "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
        ])
    }

    /// Stops the server and removes its folder.
    public func stop() {
        _ = try? run("pg_ctl", ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: folder)
    }

    /// The server's log (for failure messages).
    public var log: String {
        (try? String(contentsOf: folder.appendingPathComponent("log.txt"), encoding: .utf8)) ?? ""
    }

    private func run(_ program: String, _ arguments: [String]) throws {
        let path = binaries.appendingPathComponent(program).path
        // Output goes to a file: the server pg_ctl starts keeps its parent's output open, so a
        // pipe would never reach its end.
        let output = folder.appendingPathComponent("\(program).txt")
        if let runAs {
            try Self.run("/usr/sbin/runuser", ["-u", runAs, "--", path] + arguments, output: output)
        } else {
            try Self.run(path, arguments, output: output)
        }
    }

    /// Runs a program to its end with posix_spawn and waitpid (Foundation's `Process` can miss
    /// the exit of a child whose own child, the server, lives on).
    private static func run(_ path: String, _ arguments: [String], output: URL? = nil) throws {
        let file = output ?? FileManager.default.temporaryDirectory.appendingPathComponent("hearth-pg-\(UUID().uuidString).txt")
        defer { if output == nil { try? FileManager.default.removeItem(at: file) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, file.path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestServerError("cannot start \(path): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw TestServerError("waiting for \(path) failed: errno \(errno)") }
        }
        // Exited normally with status 0 (WIFEXITED and WEXITSTATUS, written out).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            let text = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
            throw TestServerError("\(path) \(arguments.joined(separator: " ")) failed (status \(status)):\n\(text)")
        }
    }

    private static func findBinaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).compactMap(Int.init).sorted(by: >)
        for version in versions {
            let bin = root.appendingPathComponent("\(version)/bin")
            if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("pg_ctl").path) { return bin }
        }
        return nil
    }

    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestServerError("no socket for a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw TestServerError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
