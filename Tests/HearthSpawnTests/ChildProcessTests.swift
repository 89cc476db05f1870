import Foundation
import HearthSpawn
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Child processes started with posix_spawn: their streams, environment and folder, their exit,
/// signals to them and their group, and what they do not inherit (descriptors, blocked signals).
@Suite(.timeLimit(.minutes(10)))
struct ChildProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    static func readAll(_ handle: FileHandle?) async -> String {
        guard let handle else { return "" }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)) }
        }
    }

    @Test func outputErrorsAndExitStatusComeBack() async throws {
        let child = try ChildProcess(
            Self.shell, arguments: ["-c", "echo out; echo err >&2; exit 3"], output: .pipe, errors: .pipe)
        async let output = Self.readAll(child.output)
        async let errors = Self.readAll(child.errors)
        #expect(await output == "out\n")
        #expect(await errors == "err\n")
        #expect(await child.exit() == .init(status: 3, signalled: false))
        #expect(!child.isRunning)
        #expect(child.waitUntilExit() == .init(status: 3, signalled: false))
    }

    @Test func inputEnvironmentAndFolderAreTheGivenOnes() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let child = try ChildProcess(
            Self.shell, arguments: ["-c", #"read line; echo "$line $ONLY_THIS ${HOME:-nohome} $(pwd)""#],
            environment: ["ONLY_THIS": "set", "PATH": "/usr/bin:/bin"], directory: folder, input: .pipe, output: .pipe, errors: .sameAsOutput)
        child.input?.write(Data("hello\n".utf8))
        try child.input?.close()
        let printed = await Self.readAll(child.output)
        #expect(printed == "hello set nohome \(folder.resolvingSymlinksInPath().path)\n")
        #expect(await child.exit().status == 0)
    }

    @Test func aSignalToTheGroupEndsTheChildAndItsOwnChildren() async throws {
        // The shell starts a grandchild and waits; SIGTERM to the group ends both.
        let child = try ChildProcess(Self.shell, arguments: ["-c", "sleep 600 & echo $!; wait"], output: .pipe)
        var line = ""
        while !line.hasSuffix("\n"), let byte = try child.output?.read(upToCount: 1), !byte.isEmpty { line += String(decoding: byte, as: UTF8.self) }
        let grandchild = try #require(pid_t(line.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(getpgid(grandchild) == child.pid)
        child.signalGroup(SIGTERM)
        #expect(await child.exit() == .init(status: SIGTERM, signalled: true))
        // The grandchild ended too (it was sent the same signal; it is re-parented and reaped by init).
        var gone = false
        for _ in 0..<200 where !gone {
            gone = kill(grandchild, 0) != 0 || (try? String(contentsOfFile: "/proc/\(grandchild)/stat", encoding: .utf8))?.contains(") Z ") == true
            if !gone { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(gone)
        // Signalling an ended child is harmless.
        child.signalGroup(SIGKILL)
        child.terminate()
    }

    @Test func nothingIsInheritedButTheStandardStreams() async throws {
        // A descriptor of this process that is not close-on-exec, and a blocked SIGTERM.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGUSR2)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        let child = try ChildProcess(
            Self.shell, arguments: ["-c", "ls /proc/self/fd; grep SigBlk /proc/self/status"], output: .pipe, errors: .discard)
        let printed = await Self.readAll(child.output)
        let descriptors = Set(printed.split(separator: "\n").compactMap { Int($0) })
        // 0, 1, 2, and the one ls opened to list the folder.
        #expect(descriptors.isSubset(of: [0, 1, 2, 3]), "\(printed)")
        #expect(!descriptors.contains(Int(ends[0])) || ends[0] <= 3)
        #expect(printed.contains("SigBlk:\t0000000000000000"), "\(printed)")
        #expect(await child.exit().status == 0)
    }

    @Test func aProgramThatIsNotThereIsAnErrorThatSaysSo() {
        #expect {
            _ = try ChildProcess(URL(fileURLWithPath: "/no/such/program"))
        } throws: { error in
            "\(error)".contains("/no/such/program")
        }
    }

    @Test func manyChildrenAtOnceAllEnd() async throws {
        let exits = try await withThrowingTaskGroup(of: Int32.self) { group in
            for index in 0..<40 {
                group.addTask {
                    let child = try ChildProcess(Self.shell, arguments: ["-c", "exit \(index % 7)"], output: .discard)
                    return await child.exit().status
                }
            }
            return try await group.reduce(into: [Int32]()) { $0.append($1) }
        }
        #expect(exits.sorted() == (0..<40).map { Int32($0 % 7) }.sorted())
    }
}
