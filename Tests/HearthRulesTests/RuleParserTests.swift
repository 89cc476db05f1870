import HearthCore
import Testing
@testable import HearthRules

/// The expression parser: precedence, literals, and errors with file line and column.
@Suite struct RuleParserTests {
    @Test(arguments: [
        ("1 + 2 * 3", "(1 + (2 * 3))"),
        ("(1 + 2) * 3", "((1 + 2) * 3)"),
        ("1 - 2 - 3", "((1 - 2) - 3)"),
        ("6 / 2 % 4", "((6 / 2) % 4)"),
        ("1 + 2 < 3 * 4", "((1 + 2) < (3 * 4))"),
        ("a < b == c >= d", "((a < b) == (c >= d))"),
        ("a == b && c !== d || e", "(((a == b) && (c !== d)) || e)"),
        ("a || b && c", "(a || (b && c))"),
        ("!a == b", "((!a) == b)"),
        ("!!a", "(!(!a))"),
        ("-a * -2", "((-a) * (-2))"),
        ("- x.val()", "(-x.val())"),
        ("a && b ? c : d", "((a && b) ? c : d)"),
        ("a ? b : c ? d : e", "(a ? b : (c ? d : e))"),
        ("a ? b ? c : d : e", "(a ? (b ? c : d) : e)"),
        ("data.child('a/b').val()", "data.child('a/b').val()"),
        ("auth.token.admin === true", "(auth.token.admin === true)"),
        ("auth.token['email_verified']", "auth.token.email_verified"),
        ("newData.val().matches(/^[a-z]+\\/x$/i)", "newData.val().matches(/^[a-z]+/x$/i)"),
        ("data.hasChildren(['a', 'b'])", "data.hasChildren(['a', 'b'])"),
        ("1.5e3 == 1500", "(1500 == 1500)"),
        ("0.25 + .5", "(0.25 + 0.5)"),
        ("'it\\'s' + \"a \\\"b\\\"\"", "('it\\'s' + 'a \"b\"')"),
        ("'\\u0041\\n' == \"A\\n\"", "('A\n' == 'A\n')"),
        ("null == null && true != false", "((null == null) && (true != false))"),
        ("$uid === auth.uid", "($uid === auth.uid)"),
        ("query.orderByChild == 'x' && query.limitToFirst <= 10", "((query.orderByChild == 'x') && (query.limitToFirst <= 10))"),
        ("a / b / c", "((a / b) / c)"),
        ("x.length / 2", "(x.length / 2)"),
    ])
    func precedence(_ text: String, _ expected: String) throws {
        #expect(try parseRule(text).description == expected)
    }

    @Test(arguments: [
        ("", 0), ("   ", 3), ("a &&", 4), ("(a", 2), ("a)", 1), ("a = b", 2), ("a & b", 2), ("a | b", 2),
        ("'open", 0), ("\"open", 0), ("a ? b", 5), ("foo()", 3), ("data.", 5), ("data.child(", 11),
        ("data.child('a'", 14), ("x.child(/a/)", 8), ("/a/", 0), ("[1]", 0), ("a.child([1])", 8),
        ("s.matches(/a/g)", 10), ("s.matches(/abc", 10), ("1abc", 0), ("a # b", 2), ("1 2", 2),
        ("s.matches('b')", 10), ("s.matches(/(/)", 10), ("s.matches()", 9), ("d.hasChildren([])", 14),
        ("data.nosuch()", 5), ("data.exists(1)", 11), ("s.replace('a')", 9), ("s.toLowerCase('x')", 13),
        ("d.hasChildren(['a'], ['b'])", 13),
        ("a.child(1,)", 10), ("data.hasChildren(['a',)", 22), ("x.1", 1),
    ])
    func syntaxErrors(_ text: String, _ offset: Int) {
        #expect(throws: RuleSyntaxError.self) { try RuleExpression.parse(text) }
        do {
            _ = try RuleExpression.parse(text)
        } catch {
            #expect(error.offset == offset, "\(text): \(error.message)")
        }
    }

    // A small document with errors on several lines. Columns: the expression's first character is
    // one past its opening quote.
    static let document = """
        {
          // comment line
          "rules": {
            ".read": "auth != null &&",
            "a": {
              ".write": "data.child('x') = 1",
              "$id": {
                ".validate": "$id.length > 3 && $other == 'x'"
              }
            },
            "b": { ".read": "frobnicate == 1" },
            "c": { ".write": "s.matches('x')" }
          }
        }
        """

    @Test func documentLoadsButCompileReportsTheFirstErrorInTheFile() throws {
        let rules = try RulesDocument(parsing: Self.document)
        #expect(throws: RulesError.self) { try rules.compileAll() }
        do {
            try rules.compileAll()
        } catch {
            // `    ".read": "` puts the quote at column 14; "auth != null &&" is 15 long.
            #expect(error.position == SourcePosition(line: 4, column: 30))
            #expect(error.message.contains("found the end of the expression"))
        }
    }

    @Test func errorPositionsInsideTheFile() throws {
        let rules = try RulesDocument(parsing: Self.document)
        let a = try #require(rules.root.children["a"])
        let write = try #require(a.write)
        #expect(write.position == SourcePosition(line: 6, column: 17))
        #expect(throws: RulesError("assignment is not allowed; use == or ===", at: SourcePosition(line: 6, column: 34))) {
            try RuleExpression.parse(write)
        }
    }

    @Test func unboundWildcardIsReportedWhereItIsUsed() throws {
        let text = """
            {"rules": {
              "$id": {
                ".validate": "$id.length > 3 && $other == 'x'"
              }
            }}
            """
        let rules = try RulesDocument(parsing: text)
        do {
            try rules.compileAll()
            Issue.record("expected an error")
        } catch {
            // quote at column 18; `$other` is at offset 18.
            #expect(error.position == SourcePosition(line: 3, column: 37))
            #expect(error.message.contains("$other"))
        }
    }

    @Test func unknownVariableIsReported() throws {
        let rules = try RulesDocument(parsing: #"{"rules": {"b": {".read": "frobnicate == 1"}}}"#)
        do {
            try rules.compileAll()
            Issue.record("expected an error")
        } catch {
            #expect(error.position == SourcePosition(line: 1, column: 28))
            #expect(error.message == "unknown variable 'frobnicate'")
        }
    }

    @Test func compileAllReturnsEveryExpressionIncludingWildcards() throws {
        let rules = try RulesDocument(parsing: """
            {"rules": {
              ".read": true,
              "a": {".write": "auth != null", "$x": {".validate": "$x.beginsWith('p')", "$y": {".read": "$y == $x"}}}
            }}
            """)
        let compiled = try rules.compileAll()
        #expect(compiled.count == 4)
        let sources = Set(compiled.keys.map(\.source))
        #expect(sources == ["true", "auth != null", "$x.beginsWith('p')", "$y == $x"])
    }

    @Test func regexNeedsMatchesAndArrayNeedsHasChildren() {
        #expect(throws: RuleSyntaxError(message: "a regular expression is only allowed as the argument of matches()", offset: 8)) {
            try RuleExpression.parse("x.child(/a/)")
        }
        #expect(throws: RuleSyntaxError(message: "an array is only allowed as the argument of hasChildren()", offset: 8)) {
            try RuleExpression.parse("a.child([1])")
        }
    }

    @Test func divisionIsNotARegex() throws {
        #expect(try parseRule("(a) / 2 / (b)").description == "((a / 2) / b)")
        #expect(try parseRule("x.length/2 == 1").description == "((x.length / 2) == 1)")
    }

    @Test func offsetsCountCharactersNotBytes() {
        // "é" is two UTF-8 bytes but one column.
        do {
            _ = try RuleExpression.parse("'é' == = 1")
            Issue.record("expected an error")
        } catch {
            #expect(error.offset == 7)
        }
    }
}
