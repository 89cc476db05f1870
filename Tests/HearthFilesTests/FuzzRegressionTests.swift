import HearthCore
import HearthFiles
import Testing

/// Storage inputs that `scripts/fuzz` found mishandled.
@Suite("Fuzz regressions: files")
struct FilesFuzzRegressionTests {
    /// `fuzz-multipart`: a Content-Type of ";" split into no pieces and trapped (a crash of the
    /// whole server on any upload); it is refused as an invalid content type.
    @Test func aContentTypeOfOnlyASemicolonIsRefused() throws {
        for contentType in [";", " ; ", ";;"] {
            #expect(throws: FilesError.badRequest("Invalid content type: \(contentType.debugDescription).")) {
                try ObjectName.validatedContentType(contentType)
            }
        }
        #expect(try ObjectName.validatedContentType("image/png; q=1") == "image/png; q=1")
    }

    /// A "/" followed by a combining mark is one Character, so segments split at characters hid
    /// an empty or a ".." segment from the name check.
    @Test func namesAreCheckedSegmentBySegmentAtEverySlash() throws {
        #expect(throws: FilesError.self) { try ObjectName.validated("a//\u{301}x") }
        #expect(throws: FilesError.self) { try ObjectName.validated("a/../\u{301}x") }
        #expect(try ObjectName.validated("a/\u{301}x") == "a/\u{301}x")
    }

    /// The rules match the segments the name is stored under: "users/bob/\u{301}x" is three
    /// segments, not the two ("users", "bob/\u{301}x") a two-level drop box rule would allow.
    @Test func rulesMatchTheNameSegmentsAtEverySlash() throws {
        let rules = try StorageRules(parsing: """
            rules_version = '2';
            service firebase.storage { match /b/{bucket}/o { match /{folder}/{file} { allow write; } } }
            """)
        func allows(_ name: String) -> Bool {
            rules.allows(StorageRules.Request(method: .create, bucket: "hearth.appspot.com", name: name, authClaims: nil, time: 0))
        }
        #expect(allows("drop/file.txt"))
        #expect(!allows("users/bob/\u{301}x"))
    }

    /// Whether `condition` grants a read, in rules that have only it.
    static func grants(_ condition: String) throws -> Bool {
        let rules = try StorageRules(parsing: """
            rules_version = '2';
            service firebase.storage { match /b/{bucket}/o { match /{file} { allow read: if \(condition); } } }
            """)
        return rules.allows(StorageRules.Request(
            method: .get, bucket: "hearth.appspot.com", name: "f", authClaims: nil, time: 1_700_000_000_000))
    }

    /// `fuzz-storage-rules`: `timestamp.date(4200, 1, 1)` overflowed the nanoseconds of a
    /// timestamp and trapped, which took the server down on every request the rule was
    /// evaluated for. Timestamps and durations past 64 bits of nanoseconds (the years 1677 to
    /// 2262) are errors now, which grant nothing, as any failing condition.
    @Test(arguments: [
        "request.time < timestamp.date(4200, 1, 1)",
        "timestamp.value(9223372036854775807) > request.time",
        "duration.value(1e300, 'w') > duration.value(1, 's')",
        "duration.value(math.sqrt(-1), 's') > duration.value(1, 's')",
        "duration.time(9223372036854775807, 0, 0, 0) > duration.value(1, 's')",
        "request.time + duration.value(9e18, 'ns') + duration.value(9e18, 'ns') > request.time",
        "request.time - timestamp.value(-9223372036854) > duration.value(1, 's')",
        "duration.abs(duration.time(0, 0, 0, -9223372036854775807) - duration.value(1, 'ns')) > duration.value(1, 's')",
        "-(duration.time(0, 0, 0, -9223372036854775807) - duration.value(1, 'ns')) > duration.value(1, 's')",
        "timestamp.value(-9223372036854).date() < request.time",
    ])
    func timestampsAndDurationsOutOfRangeGrantNothing(_ condition: String) throws {
        #expect(try !Self.grants(condition))
    }

    @Test func timestampsAndDurationsInRangeStillWork() throws {
        #expect(try Self.grants("request.time < timestamp.date(2200, 1, 1)"))
        #expect(try Self.grants("request.time + duration.value(1, 'd') > request.time"))
        #expect(try Self.grants("timestamp.value(-1).nanos() == 999000000 && timestamp.value(-1).seconds() == 59"))
        #expect(try Self.grants("timestamp.value(1700000000123).date() == timestamp.date(2023, 11, 14)"))
        #expect(try Self.grants("timestamp.value(1700000000123).time() == duration.time(22, 13, 20, 123000000)"))
    }
}
