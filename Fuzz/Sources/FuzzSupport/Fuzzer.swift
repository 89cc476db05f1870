import Dispatch
import FuzzDriver

#if canImport(Glibc)
import Glibc
#endif

/// The running target's test, set once by ``Fuzzer/run(_:)`` before libFuzzer starts.
nonisolated(unsafe) private var currentTest: (([UInt8]) -> Void)?

/// What libFuzzer calls with every input.
@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    currentTest?(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// The entry point of every fuzz target: libFuzzer runs the target's test on generated inputs
/// until it finds a crash, a hang or a sanitizer report, or its time is up.
public enum Fuzzer {
    /// Runs libFuzzer (with the process's arguments, `-max_total_time=…` and so on) on `test`
    /// and exits with its status.
    public static func run(_ test: @escaping ([UInt8]) -> Void) -> Never {
        currentTest = test
        exit(hearth_fuzz_main(CommandLine.argc, CommandLine.unsafeArgv, testOneInput))
    }

    /// A property every input must keep: when it does not, the input is a finding (the
    /// process traps, and libFuzzer saves the input).
    public static func expect(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
        guard !condition else { return }
        fatalError(message(), file: file, line: line)
    }

    /// Runs async work to its end from the synchronous test.
    public static func wait(_ work: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await work()
            done.signal()
        }
        done.wait()
    }

    /// The input cut at NUL bytes into `count` parts (the last keeps any further NULs);
    /// missing parts are empty. Seeds write several fields of one input this way.
    public static func sections(_ bytes: [UInt8], count: Int) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var rest = bytes[...]
        while parts.count < count - 1, let end = rest.firstIndex(of: 0) {
            parts.append(Array(rest[..<end]))
            rest = rest[(end + 1)...]
        }
        parts.append(Array(rest))
        while parts.count < count { parts.append([]) }
        return parts
    }

    /// Bytes as text, with invalid UTF-8 replaced (as a server reading a request does).
    public static func text(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
