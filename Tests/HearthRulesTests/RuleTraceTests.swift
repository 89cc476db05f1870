import Foundation
import HearthCore
import Testing
@testable import HearthRules

/// The evaluation trace the rules simulator shows: which `.read`, `.write` and `.validate`
/// rules were evaluated, where, with what outcome, and at which line of the rules text.
@Suite struct RuleTraceTests {
    /// Comments, a block comment over several lines and an expression holding an escaped line
    /// break, so that line numbers are only right when counted in the original text.
    static let text = #"""
        {
          // Admins (a token claim) read everything; the rest is opened below.
          "rules": {
            /* The root:
               admins only. */
            ".read": "auth != null && auth.token.admin === true",
            "posts": {
              ".read": true,
              "$postId": {
                ".write": "auth != null &&\n (!data.exists() || data.child('uid').val() === auth.uid)",
                ".validate": "newData.hasChildren(['uid', 'text'])",
                "uid": { ".validate": "newData.val() === auth.uid" },
                "text": { ".validate": "newData.isString() && newData.val().length < 10" },
                "at": { ".validate": "newData.val() <= now" }
              }
            },
            "secret": { /* open only when the switch is on */ ".read": "root.child('open').val() === true" },
            "inbox": { "$uid": { ".read": "$uid === auth.uid", ".write": "$uid === auth.uid" } }
          }
        }
        """#

    static let rules = try! SecurityRules(parsing: text)
    static let now: Int64 = 1_000

    /// The 1-based line and column of the value that starts with `expression` (its opening
    /// quote, or its first letter for a bare `true`), found in the text independently of the parser.
    static func position(of expression: String, quoted: Bool = true) -> SourcePosition {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() {
            if let range = line.range(of: (quoted ? "\"" : "") + expression) {
                return SourcePosition(line: index + 1, column: line.distance(from: line.startIndex, to: range.lowerBound) + 1)
            }
        }
        fatalError("no rule \(expression)")
    }

    static func requester(_ auth: Node) -> SecurityRules.Requester { .init(auth: auth, now: now) }

    static func path(_ text: String) -> Path { try! Path(parsing: text) }

    static func write(
        _ paths: [String], as auth: Node, before: Node = .null, after: Node
    ) -> (denial: SecurityRules.WriteDenial?, steps: [RuleTrace.Step]) {
        let trace = RuleTrace()
        do {
            try rules.authorizeWrite(
                changing: paths.map(path), by: requester(auth), before: before, after: after, trace: trace)
            return (nil, trace.steps)
        } catch {
            return (error, trace.steps)
        }
    }

    // MARK: - Reads

    @Test func aReadIsGrantedByTheFirstTrueRuleFromTheRootDown() {
        let trace = RuleTrace()
        let grant = Self.rules.read(Self.path("posts/p1"), by: Self.requester(signedIn("alice")), root: .null, trace: trace)
        #expect(grant?.location == Self.path("posts"))
        #expect(trace.steps.map(\.kind) == [.read, .read])
        #expect(trace.steps.map(\.path) == [.root, Self.path("posts")])
        #expect(trace.steps.map(\.result) == [false, true])
        #expect(trace.steps[0].position == Self.position(of: "auth != null && auth.token.admin"))
        #expect(trace.steps[0].position.line == 6)
        #expect(trace.steps[1].position == Self.position(of: "true,", quoted: false))
        #expect(trace.steps[1].expression == "true")
        #expect(trace.steps.allSatisfy { $0.error == nil })
    }

    @Test func aGrantAboveWinsOverADenialBelow() {
        let admin = signedIn("root", token: ["admin": "true"])
        let trace = RuleTrace()
        let grant = Self.rules.read(Self.path("secret"), by: Self.requester(admin), root: tree(#"{"open": false}"#), trace: trace)
        #expect(grant?.location == .root)
        // The .read at /secret is never evaluated: cascading stops at the first grant.
        #expect(trace.steps.count == 1)
        #expect(trace.steps.first?.result == true)
    }

    @Test func aDeniedReadListsEveryRuleOnTheWayWithItsDataAndRoot() {
        for (open, allowed) in [(false, false), (true, true)] {
            let trace = RuleTrace()
            let grant = Self.rules.read(
                Self.path("secret"), by: Self.requester(signedIn("alice")), root: tree(#"{"open": \#(open)}"#), trace: trace)
            #expect((grant != nil) == allowed)
            #expect(trace.steps.map(\.result) == [false, allowed])
            #expect(trace.steps.last?.path == Self.path("secret"))
            #expect(trace.steps.last?.position == Self.position(of: "root.child('open')"))
            #expect(trace.steps.last?.position.line == 17)
        }
    }

    @Test func wildcardsAreBoundInTheTracedPath() {
        let trace = RuleTrace()
        #expect(Self.rules.read(Self.path("inbox/bob"), by: Self.requester(signedIn("alice")), root: .null, trace: trace) == nil)
        #expect(trace.steps.map(\.path) == [.root, Self.path("inbox/bob")])
        #expect(trace.steps.last?.expression == "$uid === auth.uid")
        #expect(trace.steps.last?.position == Self.position(of: "$uid === auth.uid"))
        let own = RuleTrace()
        #expect(Self.rules.read(Self.path("inbox/alice"), by: Self.requester(signedIn("alice")), root: .null, trace: own) != nil)
        #expect(own.steps.last?.result == true)
    }

    // MARK: - Writes

    @Test func aWriteGrantedButRefusedByAValidateNamesThatValidateAndItsLine() {
        let post = tree(#"{"posts": {"p1": {"uid": "alice", "text": "far too long for the rule"}}}"#)
        let (denial, steps) = Self.write(["posts/p1"], as: signedIn("alice"), after: post)
        #expect(denial?.reason == .validationFailed(location: Self.path("posts/p1/text")))
        let write = steps.first { $0.kind == .write }
        #expect(write?.result == true)
        #expect(write?.position == Self.position(of: "auth != null &&\\n"))
        #expect(write?.position.line == 10)
        let failed = steps.last
        #expect(failed?.kind == .validate)
        #expect(failed?.result == false)
        #expect(failed?.path == Self.path("posts/p1/text"))
        #expect(failed?.position == Self.position(of: "newData.isString()"))
        #expect(failed?.position.line == 13)
        // The .validate of the post itself ran and passed before it.
        #expect(steps.contains { $0.kind == .validate && $0.path == Self.path("posts/p1") && $0.result })
    }

    @Test func anAllowedWriteListsTheGrantAndEveryValidate() {
        let post = tree(#"{"posts": {"p1": {"uid": "alice", "text": "hi", "at": 900}}}"#)
        let (denial, steps) = Self.write(["posts/p1"], as: signedIn("alice"), after: post)
        #expect(denial == nil)
        #expect(steps.filter { $0.kind == .write }.map(\.result) == [true])
        let validated = Set(steps.filter { $0.kind == .validate }.map(\.path))
        #expect(validated == Set(["posts/p1", "posts/p1/uid", "posts/p1/text", "posts/p1/at"].map(Self.path)))
        #expect(steps.allSatisfy { $0.result })
    }

    @Test func nowIsTheRequestersClock() {
        let late = tree(#"{"posts": {"p1": {"uid": "alice", "text": "hi", "at": 2000}}}"#)
        let (denial, steps) = Self.write(["posts/p1"], as: signedIn("alice"), after: late)
        #expect(denial?.reason == .validationFailed(location: Self.path("posts/p1/at")))
        #expect(steps.last?.position == Self.position(of: "newData.val() <= now"))
    }

    @Test func dataDecidesWhoMayOverwrite() {
        let before = tree(#"{"posts": {"p1": {"uid": "alice", "text": "hi"}}}"#)
        let after = tree(#"{"posts": {"p1": {"uid": "bob", "text": "mine"}}}"#)
        let (denial, steps) = Self.write(["posts/p1"], as: signedIn("bob"), before: before, after: after)
        #expect(denial?.reason == .noWriteGrant)
        #expect(steps.filter { $0.kind == .write }.map(\.result) == [false])
        #expect(Self.write(["posts/p1"], as: .null, before: before, after: after).steps.first { $0.kind == .write }?.result == false)
    }

    @Test func aRunTimeErrorIsFalseAndSaysWhyAndWhere() {
        // `text` is a number: `.length` of it is null, and `null < 10` is a type error.
        let post = tree(#"{"posts": {"p1": {"uid": "alice", "text": 5}}}"#)
        let (_, steps) = Self.write(["posts/p1"], as: signedIn("alice"), after: post)
        #expect(steps.last?.result == false)
        // `newData.isString()` is false first: && short-circuits, so no error.
        #expect(steps.last?.error == nil)
        let rules = try! SecurityRules(parsing: #"{"rules": {".read": "auth.uid.length > 'a'"}}"#)
        let trace = RuleTrace()
        #expect(rules.read(.root, by: Self.requester(signedIn("alice")), root: .null, trace: trace) == nil)
        let error = try! #require(trace.steps.first?.error)
        #expect(error.contains("needs two numbers or two strings"))
        #expect(error.contains("line 1"))
    }

    @Test func everyPathOfAMultiPathUpdateMustPass() {
        let after = tree(#"{"posts": {"p1": {"uid": "alice", "text": "ok"}}, "inbox": {"bob": {"m": "hi"}}}"#)
        let (denial, steps) = Self.write(["posts/p1", "inbox/bob/m"], as: signedIn("alice"), after: after)
        #expect(denial?.path == Self.path("inbox/bob/m"))
        #expect(denial?.reason == .noWriteGrant)
        // The first path's rules are in the trace too, then the second's.
        #expect(steps.first { $0.kind == .write }?.path == Self.path("posts/p1"))
        #expect(steps.last { $0.kind == .write }?.path == Self.path("inbox/bob"))
        #expect(steps.last { $0.kind == .write }?.result == false)
    }

    @Test func tracingNeverChangesTheVerdict() {
        let cases: [(String, Node, Node)] = [
            ("posts/p1", signedIn("alice"), tree(#"{"posts": {"p1": {"uid": "alice", "text": "hi"}}}"#)),
            ("posts/p1", signedIn("alice"), tree(#"{"posts": {"p1": {"uid": "bob", "text": "hi"}}}"#)),
            ("posts/p1", .null, tree(#"{"posts": {"p1": {"uid": "alice", "text": "hi"}}}"#)),
            ("inbox/alice", signedIn("alice"), tree(#"{"inbox": {"alice": 1}}"#)),
            ("secret", signedIn("root", token: ["admin": "true"]), tree(#"{"secret": 1}"#)),
        ]
        for (path, auth, after) in cases {
            var plainAllowed = true
            do {
                try Self.rules.authorizeWrite(changing: [Self.path(path)], by: Self.requester(auth), before: .null, after: after)
            } catch {
                plainAllowed = false
            }
            let traced = Self.write([path], as: auth, after: after)
            #expect(plainAllowed == (traced.denial == nil), "\(path)")
            let readPlain = Self.rules.read(Self.path(path), by: Self.requester(auth), root: after)
            let readTraced = Self.rules.read(Self.path(path), by: Self.requester(auth), root: after, trace: RuleTrace())
            #expect(readPlain == readTraced, "\(path)")
        }
    }
}
