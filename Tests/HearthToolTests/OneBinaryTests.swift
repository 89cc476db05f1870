import Foundation
import HearthTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `hearth` binary is all a server needs: copied alone into an empty folder, with no
/// `.build` and no resource bundle beside it, it serves the web app, its modules and the console
/// byte for byte as they are in `Web/`, and runs the demo app, whose rules and photos it carries
/// too.
@Suite("One binary")
struct OneBinaryTests {
    /// The web app's folder in this checkout.
    static let web = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Web")

    @Test func aCopyOfTheBinaryAloneServesTheAppAndTheConsole() async throws {
        let folder = try TemporaryDirectory(prefix: "hearth-alone")
        defer { folder.remove() }
        let binary = folder.url.appendingPathComponent("hearth")
        try Self.copyProgram(HearthProcess.binary, to: binary)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["hearth"])
        // SwiftPM's resource bundles are found by a path written into the program: it names none of Hearth's.
        #expect(Self.bundleNames(in: try Data(contentsOf: binary)).filter { $0.hasPrefix("hearth_") } == [])

        // A new data folder: the demo app, seeded from what the binary carries.
        let server = try HearthProcess(
            data: folder.url.appendingPathComponent("data"), openRules: false, binary: binary, directory: folder.url)
        let output = await server.output(containing: "Demo accounts")
        #expect(output.contains("ann@demo.hearth"), "\(output)\n\(server.log)")

        for (path, file) in [("/", "index.html"), ("/app/main.js", "app/main.js"), ("/lib/hearth.js", "lib/hearth.js"),
            ("/console/", "console/index.html"), ("/sw.js", "sw.js")]
        {
            let result = try await httpRequest("GET", server.url(path))
            #expect(result.status == 200, "\(path)")
            #expect(result.body == (try Data(contentsOf: Self.web.appendingPathComponent(file))), "\(path)")
            let etag = try #require(result.header("ETag"), "\(path)")
            #expect(try await httpRequest("GET", server.url(path), headers: ["If-None-Match": etag]).status == 304, "\(path)")
        }
        // The demo posts (made with the photos the binary carries), readable under the app's rules.
        #expect(try await httpRequest("GET", server.url("/posts.json?shallow=true")).text.contains("true"))
        #expect(server.terminate() == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["data", "hearth"])
    }

    /// Copies a program through a descriptor opened close-on-exec. `FileManager.copyItem`'s is
    /// not: a process another test spawns meanwhile inherits it, and running the copy then fails
    /// with "Text file busy" (ETXTBSY) while that descriptor is open for writing.
    static func copyProgram(_ source: URL, to target: URL) throws {
        let bytes = try Data(contentsOf: source)
        let descriptor = open(target.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                offset += written
            }
        }
    }

    /// The names of the resource bundles (`x.resources`) a program's bytes mention.
    static func bundleNames(in program: Data) -> Set<String> {
        let suffix = Array(".resources".utf8)
        let nameBytes = Set(Array("_-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8))
        return program.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var names: Set<String> = []
            var offset = 0
            // `memchr` finds each `.` fast; most are not the suffix.
            while offset < bytes.count, let dot = memchr(bytes.baseAddress! + offset, Int32(UInt8(ascii: ".")), bytes.count - offset) {
                let end = bytes.baseAddress!.distance(to: UnsafeRawPointer(dot))
                offset = end + 1
                guard end + suffix.count <= bytes.count, bytes[end..<(end + suffix.count)].elementsEqual(suffix) else { continue }
                var start = end
                while start > 0, nameBytes.contains(bytes[start - 1]) { start -= 1 }
                names.insert(String(decoding: bytes[start..<end], as: UTF8.self) + ".resources")
            }
            return names
        }
    }
}
