import Foundation
import HearthCore
import HearthFiles
import Testing

/// The storage rules language: parsing (with line and column for errors), matching, the
/// request and resource variables, and evaluation with Firebase's error semantics.
@Suite struct StorageRulesTests {
    static let bucket = "hearth.appspot.com"
    static let now: Int64 = 1_700_000_000_000

    static func claims(_ uid: String, _ extra: [String: Any] = [:]) -> Node {
        var payload: [String: Any] = ["sub": uid, "user_id": uid, "firebase": ["sign_in_provider": "password"]]
        for (key, value) in extra { payload[key] = value }
        let data = try! JSONSerialization.data(withJSONObject: payload)
        return try! JSONParser.parse(Array(data)).node
    }

    static func object(
        _ name: String, size: Int64 = 100, type: String = "image/jpeg", metadata: [String: String] = [:]
    ) -> StoredObject {
        StoredObject(
            bucket: bucket, name: name, size: size, contentType: type, md5Hash: "bWQ1", generation: 1_700_000_000_000_000,
            timeCreated: now - 1000, updated: now - 1000, customMetadata: metadata, blob: "blob")
    }

    static func allows(
        _ rules: StorageRules, _ method: StorageRulesDocument.Method, _ name: String, by uid: String? = nil,
        claims extra: [String: Any] = [:], incoming: StoredObject? = nil, existing: StoredObject? = nil
    ) -> Bool {
        rules.allows(StorageRules.Request(
            method: method, bucket: bucket, name: name, authClaims: uid.map { claims($0, extra) }, time: now,
            incoming: incoming, existing: existing))
    }

    static func rules(_ text: String) throws -> StorageRules { try StorageRules(parsing: text) }

    /// Rules with `body` inside `match /b/{bucket}/o`, version 2.
    static func inBucket(_ body: String, version: Int = 2) throws -> StorageRules {
        try rules("rules_version = '\(version)';\nservice firebase.storage {\n  match /b/{bucket}/o {\n\(body)\n  }\n}\n")
    }

    // MARK: - FriendlyPix's real storage.rules

    static let friendlyPix = try! StorageRules(parsing: String(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/rules/friendlypix-web-storage.rules").standardized,
        encoding: .utf8))

    @Test func friendlyPixLoadsAsVersionOne() {
        #expect(Self.friendlyPix.document.version == 1)
    }

    @Test func friendlyPixImagesAreReadableByAnyone() {
        // "allow read;" on thumbnails and full images, signed in or not.
        #expect(Self.allows(Self.friendlyPix, .get, "alice/thumb/p1/photo.jpg"))
        #expect(Self.allows(Self.friendlyPix, .get, "alice/full/p1/photo.jpg", by: "bob"))
        // Outside the two folders nothing is allowed, and listing needs rules version 2.
        #expect(!Self.allows(Self.friendlyPix, .get, "alice/other/p1/photo.jpg"))
        #expect(!Self.allows(Self.friendlyPix, .get, "alice/full/p1/deeper/photo.jpg"))
        #expect(!Self.allows(Self.friendlyPix, .list, "alice/full/p1", by: "alice"))
    }

    @Test func friendlyPixOwnersUploadSmallImagesOnly() {
        let thumb = "alice/thumb/p1/photo.jpg"
        let full = "alice/full/p1/photo.jpg"
        // isOwner(userId) && isImageBelowMaxSize(1) for thumbnails…
        #expect(Self.allows(Self.friendlyPix, .create, thumb, by: "alice", incoming: Self.object(thumb, size: 1024 * 1024 - 1)))
        #expect(!Self.allows(Self.friendlyPix, .create, thumb, by: "alice", incoming: Self.object(thumb, size: 1024 * 1024)))
        // …and 5 MB for full images.
        #expect(Self.allows(Self.friendlyPix, .create, full, by: "alice", incoming: Self.object(full, size: 4 * 1024 * 1024)))
        #expect(!Self.allows(Self.friendlyPix, .create, full, by: "alice", incoming: Self.object(full, size: 5 * 1024 * 1024)))
        // contentType.matches('image/.*'): the whole type must match.
        #expect(!Self.allows(Self.friendlyPix, .create, full, by: "alice", incoming: Self.object(full, type: "text/plain")))
        #expect(!Self.allows(Self.friendlyPix, .create, full, by: "alice", incoming: Self.object(full, type: "x-image/png")))
        #expect(Self.allows(Self.friendlyPix, .update, full, by: "alice", incoming: Self.object(full), existing: Self.object(full)))
        // Not the owner: refused, signed in or not.
        #expect(!Self.allows(Self.friendlyPix, .create, full, by: "bob", incoming: Self.object(full)))
        #expect(!Self.allows(Self.friendlyPix, .create, full, incoming: Self.object(full)))
    }

    @Test func friendlyPixOwnersDeleteTheirImages() {
        let full = "alice/full/p1/photo.jpg"
        // isResourceBeingDeleted(): request.resource == null on a delete.
        #expect(Self.allows(Self.friendlyPix, .delete, full, by: "alice", existing: Self.object(full)))
        #expect(Self.allows(Self.friendlyPix, .delete, "alice/thumb/p1/photo.jpg", by: "alice", existing: Self.object(full)))
        #expect(!Self.allows(Self.friendlyPix, .delete, full, by: "bob", existing: Self.object(full)))
        #expect(!Self.allows(Self.friendlyPix, .delete, full, existing: Self.object(full)))
    }

    @Test func friendlyPixAdminsMayWriteAnything() {
        let full = "alice/full/p1/movie.mp4"
        // isAdmin(): request.auth.token.admin == true, whatever the size or type.
        let big = Self.object(full, size: 50 * 1024 * 1024, type: "video/mp4")
        #expect(Self.allows(Self.friendlyPix, .create, full, by: "root", claims: ["admin": true], incoming: big))
        #expect(Self.allows(Self.friendlyPix, .delete, full, by: "root", claims: ["admin": true], existing: big))
        #expect(!Self.allows(Self.friendlyPix, .create, full, by: "root", claims: ["admin": false], incoming: big))
        // Signed out, request.auth is null: isAdmin() errors and grants nothing.
        #expect(!Self.allows(Self.friendlyPix, .create, full, incoming: big))
    }

    // MARK: - Parsing

    static func syntaxError(_ text: String) -> StorageRulesSyntaxError? {
        do {
            _ = try StorageRules(parsing: text)
            return nil
        } catch {
            return error
        }
    }

    @Test func syntaxErrorsSayWhere() throws {
        let missingBrace = Self.syntaxError("service firebase.storage {\n  match /b/{bucket}/o {\n    allow read: if true;\n}\n")
        #expect(missingBrace?.position == SourcePosition(line: 5, column: 1))
        let unknownMethod = try #require(Self.syntaxError("service firebase.storage {\n  match /a {\n    allow fetch;\n  }\n}"))
        #expect(unknownMethod.position == SourcePosition(line: 3, column: 5))
        #expect(unknownMethod.message.contains("unknown method 'fetch'"))
        let badExpression = try #require(Self.syntaxError("service firebase.storage {\n  match /a {\n    allow read: if 1 + ;\n  }\n}"))
        #expect(badExpression.position == SourcePosition(line: 3, column: 24))
        let unterminated = try #require(Self.syntaxError("service firebase.storage {\n  match /a { allow read: if 'abc; }\n}"))
        #expect(unterminated.message == "unterminated string")
        #expect(unterminated.position.line == 2)
        #expect(Self.syntaxError("rules_version = '3';\nservice firebase.storage {}")?.message.contains("rules_version") == true)
        #expect(Self.syntaxError("service cloud.firestore {}")?.message.contains("firebase.storage") == true)
        #expect(Self.syntaxError("")?.message.contains("no 'service firebase.storage'") == true)
        // Version 1 allows {path=**} only as the last segment; version 2 anywhere (once).
        #expect(Self.syntaxError("service firebase.storage { match /{p=**}/x { allow read; } }") != nil)
        #expect(Self.syntaxError("rules_version = '2'; service firebase.storage { match /{p=**}/x { allow read; } }") == nil)
        #expect(Self.syntaxError("rules_version = '2'; service firebase.storage { match /{p=**}/{q=**} { allow read; } }") != nil)
    }

    @Test func commentsAndOptionalSemicolonsParse() throws {
        let rules = try Self.rules("""
            // A comment
            rules_version = '2';
            /* a block
               comment */
            service firebase.storage {
              match /b/{bucket}/o {
                match /public/{file} {
                  allow read: if true   // no semicolon before }
                }
              }
            }
            """)
        #expect(Self.allows(rules, .get, "public/a.txt"))
    }

    // MARK: - Matching

    @Test func everyMatchingBlockIsConsideredAndAnyAllowGrants() throws {
        let rules = try Self.inBucket("""
            match /{allPaths=**} { allow read, write: if false; }
            match /users/{userId}/{file} { allow read: if request.auth.uid == userId; }
            """)
        #expect(Self.allows(rules, .get, "users/alice/a.png", by: "alice"))
        #expect(!Self.allows(rules, .get, "users/alice/a.png", by: "bob"))
        // Rules do not cascade: a deeper path is not covered by /users/{userId}/{file}.
        #expect(!Self.allows(rules, .get, "users/alice/sub/a.png", by: "alice"))
    }

    @Test func recursiveWildcardsBindPaths() throws {
        let rules = try Self.inBucket("""
            match /docs/{rest=**} { allow read: if rest[0] == 'open' && rest.size() >= 1; }
            match /all/{rest=**} { allow list; }
            """)
        #expect(Self.allows(rules, .get, "docs/open/a/b.txt"))
        #expect(!Self.allows(rules, .get, "docs/closed/a.txt"))
        // Version 2: zero segments match too, so listing "all" itself is covered.
        #expect(Self.allows(rules, .list, "all"))
        #expect(Self.allows(rules, .list, "all/x"))
        let v1 = try Self.inBucket("match /all/{rest=**} { allow read; }", version: 1)
        #expect(!Self.allows(v1, .get, "all"))
        #expect(Self.allows(v1, .get, "all/x/y"))
    }

    @Test func methodsAreCoveredByReadAndWrite() throws {
        let rules = try Self.inBucket("""
            match /g/{f} { allow get; }
            match /c/{f} { allow create; }
            match /w/{f} { allow write; }
            """)
        #expect(Self.allows(rules, .get, "g/a"))
        #expect(!Self.allows(rules, .list, "g"))
        #expect(Self.allows(rules, .create, "c/a", incoming: Self.object("c/a")))
        #expect(!Self.allows(rules, .update, "c/a", incoming: Self.object("c/a"), existing: Self.object("c/a")))
        for method in [StorageRulesDocument.Method.create, .update, .delete] {
            #expect(Self.allows(rules, method, "w/a", incoming: Self.object("w/a")))
        }
        #expect(!Self.allows(rules, .get, "w/a"))
    }

    // MARK: - Variables

    @Test func resourceIsNullUntilTheObjectExists() throws {
        let rules = try Self.inBucket("""
            match /once/{f} { allow create: if resource == null; }
            match /meta/{f} { allow update: if resource.metadata.owner == request.auth.uid
                                             && request.resource.metadata.owner == resource.metadata.owner; }
            """)
        #expect(Self.allows(rules, .create, "once/a", by: "alice", incoming: Self.object("once/a")))
        #expect(!Self.allows(rules, .create, "once/a", by: "alice", incoming: Self.object("once/a"), existing: Self.object("once/a")))
        let mine = Self.object("meta/a", metadata: ["owner": "alice"])
        #expect(Self.allows(rules, .update, "meta/a", by: "alice", incoming: mine, existing: mine))
        #expect(!Self.allows(rules, .update, "meta/a", by: "bob", incoming: mine, existing: mine))
        let stolen = Self.object("meta/a", metadata: ["owner": "bob"])
        #expect(!Self.allows(rules, .update, "meta/a", by: "alice", incoming: stolen, existing: mine))
    }

    @Test func theIncomingObjectHasNoGenerationOrTimesYet() throws {
        let rules = try Self.inBucket("""
            match /a/{f} { allow create: if request.resource.generation > 0; }
            match /b/{f} { allow create: if request.resource.size > 0 && request.resource.md5Hash is string
                                           && request.resource.name == 'b/' + f && request.resource.bucket == bucket; }
            """)
        #expect(!Self.allows(rules, .create, "a/x", incoming: Self.object("a/x")))
        #expect(Self.allows(rules, .create, "b/x", incoming: Self.object("b/x")))
    }

    @Test func authAndTokenClaims() throws {
        let rules = try Self.inBucket("""
            match /signed/{f} { allow read: if request.auth != null; }
            match /verified/{f} { allow read: if request.auth.token.email_verified == true; }
            match /roles/{f} { allow read: if 'editor' in request.auth.token.roles; }
            match /safe/{f} { allow read: if request.auth.token.get('tier', 'free') == 'free'; }
            """)
        #expect(Self.allows(rules, .get, "signed/a", by: "alice"))
        #expect(!Self.allows(rules, .get, "signed/a"))
        #expect(Self.allows(rules, .get, "verified/a", by: "alice", claims: ["email_verified": true]))
        // A claim the token lacks is an error, which denies.
        #expect(!Self.allows(rules, .get, "verified/a", by: "alice"))
        #expect(Self.allows(rules, .get, "roles/a", by: "alice", claims: ["roles": ["viewer", "editor"]]))
        #expect(!Self.allows(rules, .get, "roles/a", by: "alice", claims: ["roles": ["viewer"]]))
        #expect(Self.allows(rules, .get, "safe/a", by: "alice"))
    }

    @Test func requestTimeAndPath() throws {
        let rules = try Self.inBucket("""
            match /until/{f} { allow read: if request.time < timestamp.date(2023, 12, 31); }
            match /since/{f} { allow read: if request.time > timestamp.date(2024, 1, 1); }
            match /fresh/{f} { allow read: if request.time < resource.timeCreated + duration.value(5, 's'); }
            match /p/{f} { allow read: if request.path[1] == bucket && request.path[3] == 'p' && request.method == 'get'; }
            """)
        #expect(Self.allows(rules, .get, "until/a"))
        #expect(!Self.allows(rules, .get, "since/a"))
        #expect(Self.allows(rules, .get, "fresh/a", existing: Self.object("fresh/a")))
        #expect(Self.allows(rules, .get, "p/a"))
    }

    // MARK: - Evaluation

    static func condition(_ expression: String, functions: String = "") throws -> Bool {
        let rules = try rules("""
            rules_version = '2';
            service firebase.storage {
              \(functions)
              match /b/{bucket}/o/{f} { allow read: if \(expression); }
            }
            """)
        return allows(rules, .get, "x")
    }

    @Test(arguments: [
        ("7 / 2 == 3", true), ("-7 / 2 == -3", true), ("-7 % 2 == -1", true), ("10.0 / 4 == 2.5", true),
        ("1 == 1.0", true), ("1 is int && 1.0 is float && 1 is number", true), ("'a' + 'b' == 'ab'", true),
        ("[1, 2] == [1, 2]", true), ("{'a': 1} == {'a': 1}", true), ("2 in [1, 2]", true), ("'k' in {'k': 1}", true),
        ("'abc'.matches('a')", false), ("'abc'.matches('a.*')", true), ("'image/png'.matches('image/.*')", true),
        ("'a.b.c'.replace('\\\\.', '-') == 'a-b-c'", true), ("'a/b/c'.split('/') == ['a', 'b', 'c']", true),
        ("'Straße'.size() == 6", true), ("'AbC'.lower() == 'abc' && 'abc'.upper() == 'ABC'", true),
        ("'  x '.trim() == 'x'", true), ("'abcdef'[1:4] == 'bcd'", true), ("[1, 2, 3][1] == 2", true),
        ("['a', 'b'].hasAll(['a']) && ['a'].hasAny(['b', 'a']) && ['a', 'a'].hasOnly(['a', 'b'])", true),
        ("{'a': 1, 'b': 2}.keys() == ['a', 'b']", true), ("{'a': {'b': 3}}.get(['a', 'b'], 0) == 3", true),
        ("int('42') == 42 && float(2) == 2.0 && string(1) == '1' && string(true) == 'true'", true),
        ("math.abs(-3) == 3 && math.floor(2.7) == 2 && math.ceil(2.1) == 3 && math.round(2.5) == 3", true),
        ("true ? 1 == 1 : false", true), ("!(1 == 2)", true),
        // Errors: a missing field, a division by zero, an index out of range, a type mismatch.
        ("{'a': 1}.b == 1", false), ("1 / 0 == 0", false), ("[1][3] == 1", false), ("1 < 'a'", false),
        ("'abc'[1:9] == 'bc'", false), ("9223372036854775807 + 1 > 0", false), ("undefinedFunction()", false),
        ("1 / 0 == 0 || true", true), ("true || 1 / 0 == 0", true), ("1 / 0 == 0 && false", false),
        ("(1 / 0 == 0) ? true : true", false), ("!(1 / 0 == 0)", false),
        ("'a' == 1", false), ("null == null", true), ("{'a': 1}.a is int", true),
    ])
    func expressions(_ expression: String, _ expected: Bool) throws {
        #expect(try Self.condition(expression) == expected, "\(expression)")
    }

    @Test func functionsBindArgumentsLazilyAndShadow() throws {
        let functions = """
            function ignores(x) { return true; }
            function reads(x) { return x == 1; }
            function twice(x) { let y = x * 2; let z = y + 1; return z == 2 * x + 1; }
            function sizeBelow(limitMB) { return 3 * 1024 * 1024 < limitMB * 1024 * 1024; }
            function loop(n) { return loop(n); }
            """
        #expect(try Self.condition("ignores(1 / 0)", functions: functions))
        #expect(!(try Self.condition("reads(1 / 0)", functions: functions)))
        #expect(try Self.condition("twice(5)", functions: functions))
        #expect(try Self.condition("sizeBelow(5)", functions: functions))
        #expect(!(try Self.condition("sizeBelow(1)", functions: functions)))
        #expect(!(try Self.condition("loop(1)", functions: functions)))
        // A function in a match shadows one outside it.
        let rules = try Self.rules("""
            rules_version = '2';
            function allowed() { return false; }
            service firebase.storage {
              match /b/{bucket}/o {
                match /inner/{f} {
                  function allowed() { return true; }
                  allow read: if allowed();
                }
                match /outer/{f} { allow read: if allowed(); }
              }
            }
            """)
        #expect(Self.allows(rules, .get, "inner/a"))
        #expect(!Self.allows(rules, .get, "outer/a"))
    }

    @Test func closedAndOpenRules() {
        #expect(!Self.allows(StorageRules.closed, .get, "a"))
        #expect(!Self.allows(StorageRules.closed, .create, "a", by: "alice", incoming: Self.object("a")))
        #expect(Self.allows(StorageRules.open, .create, "a/b/c", incoming: Self.object("a/b/c")))
        #expect(Self.allows(StorageRules.open, .list, ""))
    }
}
