import Foundation
import HearthTesting
import Testing

/// The `hearth` tool as a user runs it: help, version, import, export and serve.
@Suite("hearth command line", .serialized)
struct CommandLineTests {
    @Test func versionAndHelp() async throws {
        let version = try await HearthProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")

        let help = try await HearthProcess.run(["--help"])
        #expect(help.status == 0)
        for command in ["serve", "import", "export", "rules", "users", "files"] {
            #expect(help.stdout.contains(command), "help lists \(command)")
        }
        let serveHelp = try await HearthProcess.run(["serve", "--help"])
        for option in ["--host", "--port", "--data", "--no-demo", "--web-root"] {
            #expect(serveHelp.stdout.contains(option))
        }
    }

    @Test func serveRunsTheDemoAppByDefaultAndSaysWhereItIs() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli-demo")
        defer { directory.remove() }
        let server = try HearthProcess(data: directory.url, openRules: false)
        let output = await server.output(containing: "Demo accounts")
        #expect(output.contains("The social app:   http://127.0.0.1:\(server.port)/"), "\(output)")
        #expect(output.contains("http://127.0.0.1:\(server.port)/console"))
        #expect(output.contains("ann@demo.hearth"))
        // The app and the console come from the copy compiled into the binary.
        let page = try await httpRequest("GET", server.url("/"))
        #expect(page.status == 200)
        #expect(page.text.contains("/app/boot.js"))
        #expect(try await httpRequest("GET", server.url("/app/main.js")).status == 200)
        #expect(try await httpRequest("GET", server.url("/lib/hearth.js")).status == 200)
        #expect(try await httpRequest("GET", server.url("/console/")).status == 200)
        // The app's rules are in force: people read posts, nobody writes as nobody.
        #expect(try await httpRequest("GET", server.url("/posts.json?shallow=true")).status == 200)
        let write = try await httpRequest("PUT", server.url("/posts/x.json"), body: Data(#"{"title":"x"}"#.utf8))
        #expect(write.status == 401)
        #expect(server.terminate() == 0)
    }

    @Test func aDataFolderWithOtherDataGetsNoDemoUnasked() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli-nodemo")
        defer { directory.remove() }
        let first = try HearthProcess(data: directory.url)
        #expect(try await httpRequest("PUT", first.url("/mine.json"), body: Data("1".utf8)).status == 200)
        #expect(first.terminate() == 0)

        let server = try HearthProcess(data: directory.url, openRules: false)
        let token = try String(contentsOf: directory.url.appendingPathComponent("admin-token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let admin = ["Authorization": "Bearer \(token)"]
        #expect(try await httpRequest("GET", server.url("/mine.json"), headers: admin).text == "1")
        // Closed rules, no demo people, no demo accounts file.
        #expect(try await httpRequest("GET", server.url("/mine.json")).status == 401)
        try await Task.sleep(for: .seconds(2))
        #expect(try await httpRequest("GET", server.url("/people.json"), headers: admin).text == "null")
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("demo-accounts.json").path))
        #expect(server.terminate() == 0)
    }

    @Test func rulesCheckReportsEveryProblemWithLineAndColumn() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli")
        defer { directory.remove() }
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/rules").standardized
        let good = try await HearthProcess.run(["rules", "check", fixtures.appendingPathComponent("friendlypix-web-database-rules.json").path])
        #expect(good.status == 0)
        #expect(good.stdout.hasSuffix("friendlypix-web-database-rules.json: OK\n"))

        let bad = directory.url.appendingPathComponent("bad.json")
        let text = """
            {
              "rules": {
                ".read": "auth.uid ==",
                "a": {".write": "foo == 1", ".bogus": true},
                "$x": {}, "$y": {},
                "b": {".validate": "$z == 1"}
              }
            }
            """
        try Data(text.utf8).write(to: bad)
        let checked = try await HearthProcess.run(["rules", "check", bad.path])
        #expect(checked.status == 1)
        let lines = checked.stdout.split(separator: "\n").map { $0.replacingOccurrences(of: bad.path, with: "F") }
        #expect(lines == [
            "F:3:26: error: expected a value, found the end of the expression",
            "F:4:22: error: unknown variable 'foo'",
            #"F:4:33: error: unknown rule ".bogus""#,
            "F:5:15: error: only one $wildcard is allowed at each level",
            "F:6:25: error: unknown wildcard $z: no $ key above this rule binds it",
            "F: 5 errors",
        ])
        // A JSON syntax error stops parsing: it is the one problem reported.
        try Data(#"{"rules": {"a": }}"#.utf8).write(to: bad)
        let syntax = try await HearthProcess.run(["rules", "check", bad.path])
        #expect(syntax.status == 1)
        #expect(syntax.stdout.contains(":1:17: error: unexpected character '}'"))
    }

    @Test func usersAddListClaimsAndDelete() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli")
        defer { directory.remove() }
        let data = directory.url.path

        let added = try await HearthProcess.run(["users", "add", "--email", "Ann@Example.com", "--name", "Ann", "--data", data])
        #expect(added.status == 0, "\(added.stderr)")
        let lines = added.stdout.split(separator: "\n")
        let uid = String(try #require(lines.first))
        #expect(uid.count == 28)
        // No password given: one is generated and printed once.
        #expect(lines.count == 2 && lines[1].hasPrefix("password: ") && lines[1].count == 26)

        let piped = try await HearthProcess.run(
            ["users", "add", "--uid", "boss", "--password-stdin", "--email", "boss@example.com", "--claims", #"{"admin":true}"#,
             "--data", data], stdin: Data("s3cret-pw\n".utf8))
        #expect(piped.stdout == "boss\n")

        let duplicate = try await HearthProcess.run(["users", "add", "--email", "ann@example.com", "--data", data])
        #expect(duplicate.status == 1)
        #expect(duplicate.stderr.contains("error: EMAIL_EXISTS"))

        let listed = try await HearthProcess.run(["users", "list", "--data", data])
        #expect(listed.stdout.contains("boss  boss@example.com  password  -  {\"admin\":true}"))
        #expect(listed.stdout.contains("\(uid)  ann@example.com  password  \"Ann\""))

        let claims = try await HearthProcess.run(["users", "claims", "boss", #"{"admin":true,"level":2}"#, "--data", data])
        #expect(claims.stdout == #"{"admin":true,"level":2}"# + "\n")
        let reserved = try await HearthProcess.run(["users", "claims", "boss", #"{"sub":"x"}"#, "--data", data])
        #expect(reserved.status == 1)
        #expect(reserved.stderr.contains("INVALID_CLAIMS"))

        #expect(try await HearthProcess.run(["users", "delete", "boss", "--data", data]).status == 0)
        let missing = try await HearthProcess.run(["users", "delete", "boss", "--data", data])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("USER_NOT_FOUND"))
        let json = try await HearthProcess.run(["users", "list", "--json", "--data", data])
        #expect(json.stdout.split(separator: "\n").count == 1)
        #expect(json.stdout.contains(#""email":"ann@example.com""#))
    }

    @Test func filesPutListGetAndRemove() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli")
        defer { directory.remove() }
        let data = directory.url.path
        let local = directory.url.appendingPathComponent("photo.jpg")
        let content = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try content.write(to: local)

        let put = try await HearthProcess.run(["files", "put", local.path, "alice/full/p1/photo.jpg", "--data", data])
        #expect(put.status == 0, "\(put.stderr)")
        #expect(put.stdout == "300000 bytes stored as alice/full/p1/photo.jpg (image/jpeg)\n")
        _ = try await HearthProcess.run(["files", "put", local.path, "notes.txt", "--content-type", "text/plain", "--data", data])

        let top = try await HearthProcess.run(["files", "ls", "--data", data])
        #expect(top.stdout.contains("  alice/\n"))
        #expect(top.stdout.contains("text/plain"))
        #expect(!top.stdout.contains("photo.jpg"))
        let all = try await HearthProcess.run(["files", "ls", "-r", "alice/", "--data", data])
        #expect(all.stdout.contains("300000  image/jpeg"))
        #expect(all.stdout.hasSuffix("alice/full/p1/photo.jpg\n"))

        let copy = directory.url.appendingPathComponent("copy.jpg")
        let get = try await HearthProcess.run(["files", "get", "alice/full/p1/photo.jpg", copy.path, "--data", data])
        #expect(get.status == 0)
        #expect(try Data(contentsOf: copy) == content)

        #expect(try await HearthProcess.run(["files", "rm", "notes.txt", "--data", data]).stdout == "deleted notes.txt\n")
        let missing = try await HearthProcess.run(["files", "rm", "notes.txt", "--data", data])
        #expect(missing.status == 1)
        #expect(missing.stderr == "error: Not Found.\n")
        let hostile = try await HearthProcess.run(["files", "put", local.path, "../outside", "--data", data])
        #expect(hostile.status == 1)
        #expect(hostile.stderr.hasPrefix("error: Invalid object name"))
        let noFile = try await HearthProcess.run(["files", "put", "/no/such/file", "x", "--data", data])
        #expect(noFile.status == 1)
        #expect(noFile.stderr == "error: no such local file\n")
        // A bad storage rules file stops serve before it starts.
        let rules = directory.url.appendingPathComponent("storage.rules")
        try Data("service firebase.storage {\n  match /a { allow fetch; }\n}\n".utf8).write(to: rules)
        let serve = try await HearthProcess.run(["serve", "--port", "0", "--data", data, "--storage-rules", rules.path])
        #expect(serve.status != 0)
        #expect(serve.stderr.contains("2:14: unknown method 'fetch'"))
        let check = try await HearthProcess.run(["rules", "check", rules.path])
        #expect(check.status == 1)
        #expect(check.stdout.contains("storage.rules:2:14: error: unknown method 'fetch'"))
    }

    @Test func importThenExportRoundTrips() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli")
        defer { directory.remove() }
        let input = directory.url.appendingPathComponent("in.json")
        let document = #"{"users":{"alice":{"name":"Alice","age":30},"bob":{"name":"Bob","tags":["a","b"]}},"count":2.5}"#
        try Data(document.utf8).write(to: input)
        let data = directory.url.appendingPathComponent("data").path

        let imported = try await HearthProcess.run(["import", input.path, "--path", "/app", "--data", data])
        #expect(imported.status == 0, "import failed: \(imported.stderr)")

        let exported = try await HearthProcess.run(["export", "--path", "/app", "--data", data])
        #expect(exported.status == 0)
        let expected = #"{"count":2.5,"users":{"alice":{"age":30,"name":"Alice"},"bob":{"name":"Bob","tags":["a","b"]}}}"#
        #expect(exported.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == expected)

        // Importing again at the same path replaces, and other paths are untouched.
        try Data(#"{"x":1}"#.utf8).write(to: input)
        #expect(try await HearthProcess.run(["import", input.path, "--path", "/other", "--data", data]).status == 0)
        try Data(#"{"count":3}"#.utf8).write(to: input)
        #expect(try await HearthProcess.run(["import", input.path, "--path", "/app", "--data", data]).status == 0)
        let output = directory.url.appendingPathComponent("out.json")
        let toFile = try await HearthProcess.run(["export", "--data", data, "--output", output.path])
        #expect(toFile.status == 0)
        let written = try String(contentsOf: output, encoding: .utf8)
        #expect(written.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"app":{"count":3},"other":{"x":1}}"#)
    }

    @Test func largeImportIsAtomicAndExportsIntact() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli-large")
        defer { directory.remove() }
        // About 20 MB: bigger than one log record, so the import is split into many.
        var text = "{"
        for index in 0..<100_000 {
            if index > 0 { text += "," }
            text += #""item\#(index)":{"name":"Item number \#(index) with some padding text","n":\#(index)}"#
        }
        text += "}"
        let input = directory.url.appendingPathComponent("big.json")
        try Data(text.utf8).write(to: input)
        let data = directory.url.appendingPathComponent("data").path
        let imported = try await HearthProcess.run(["import", input.path, "--path", "/big", "--data", data])
        #expect(imported.status == 0, "import failed: \(imported.stderr)")
        let exported = try await HearthProcess.run(["export", "--path", "/big/item99999", "--data", data])
        #expect(exported.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            == #"{"n":99999,"name":"Item number 99999 with some padding text"}"#)
        let all = try await HearthProcess.run(["export", "--path", "/big", "--data", data])
        let object = try JSONSerialization.jsonObject(with: Data(all.stdout.utf8)) as? [String: Any]
        #expect(object?.count == 100_000)
    }

    @Test func badInputIsRefusedAndChangesNothing() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli-bad")
        defer { directory.remove() }
        let data = directory.url.appendingPathComponent("data").path
        let input = directory.url.appendingPathComponent("in.json")
        try Data(#"{"keep":true}"#.utf8).write(to: input)
        #expect(try await HearthProcess.run(["import", input.path, "--data", data]).status == 0)

        try Data(#"{"a":1,"#.utf8).write(to: input)
        let broken = try await HearthProcess.run(["import", input.path, "--data", data])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("Invalid data; couldn't parse JSON object, array, or value."))

        try Data(#"{"bad.key":1}"#.utf8).write(to: input)
        let badKey = try await HearthProcess.run(["import", input.path, "--data", data])
        #expect(badKey.status != 0)
        #expect(badKey.stderr.contains("couldn't parse key beginning at 1:2"))

        let badPath = try await HearthProcess.run(["export", "--path", "/a$b", "--data", data])
        #expect(badPath.status != 0)
        #expect(badPath.stderr.contains("Invalid path: Invalid token in path"))

        let missing = try await HearthProcess.run(["import", directory.url.appendingPathComponent("nope.json").path, "--data", data])
        #expect(missing.status != 0)

        let exported = try await HearthProcess.run(["export", "--data", data])
        #expect(exported.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"keep":true}"#)
    }

    @Test func badFilesAndProxyOptionsAreRefusedBeforeAnythingStarts() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli-options")
        defer { directory.remove() }
        let data = directory.url.appendingPathComponent("data").path
        let cases: [([String], String)] = [
            (["--files-origin", "files.example.com"], "--files-origin must be an origin"),
            (["--files-origin", "https://files.example.com/o"], "--files-origin must be an origin"),
            (["--files-port", "70000"], "--files-port must be between 0 and 65535"),
            (["--port", "9123", "--files-port", "9123"], "--files-port must differ from --port"),
            (["--trusted-proxy", "proxy.example.com"], "--trusted-proxy proxy.example.com is not an IP address"),
        ]
        for (arguments, message) in cases {
            let result = try await HearthProcess.run(["serve", "--data", data] + arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: data), "a refused start made the data folder")
    }

    @Test func dataFolderInUseByServerIsRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli-busy")
        defer { directory.remove() }
        let server = try HearthProcess(data: directory.url)
        let result = try await httpRequest("PUT", server.url("/a.json"), body: Data("1".utf8))
        #expect(result.status == 200)

        let export = try await HearthProcess.run(["export", "--data", directory.url.path])
        #expect(export.status != 0)
        #expect(export.stderr.contains("in use"))
        let second = try await HearthProcess.run(["serve", "--port", "0", "--data", directory.url.path])
        #expect(second.status != 0)

        #expect(server.terminate() == 0)
        let after = try await HearthProcess.run(["export", "--data", directory.url.path])
        #expect(after.status == 0)
        #expect(after.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"a":1}"#)
    }

    @Test func serveShutsDownGracefullyOnSIGINT() async throws {
        let directory = try TemporaryDirectory(prefix: "hearth-cli-int")
        defer { directory.remove() }
        let server = try HearthProcess(data: directory.url)
        #expect(try await httpRequest("PUT", server.url("/x.json"), body: Data(#"{"y":2}"#.utf8)).status == 200)
        #expect(server.interrupt() == 0)
        let restarted = try HearthProcess(data: directory.url)
        let read = try await httpRequest("GET", restarted.url("/x/y.json"))
        #expect(read.text == "2")
        #expect(restarted.terminate() == 0)
    }
}
