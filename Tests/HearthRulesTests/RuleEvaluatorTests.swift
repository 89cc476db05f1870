import HearthCore
import Testing
@testable import HearthRules

/// Evaluation semantics, as Firebase documents them: operators without coercion, snapshots, strings, regexes,
/// variables, and "an error is false".
@Suite struct RuleEvaluatorTests {
    // MARK: - Operators

    @Test(arguments: [
        // equality: identical, no coercion
        ("1 == 1", true), ("1 === 1.0", true), ("1 == 2", false), ("1 == '1'", false), ("'1' === 1", false),
        ("'a' == 'a'", true), ("'a' == 'A'", false), ("true == true", true), ("true == 1", false),
        ("null == null", true), ("null === false", false), ("0 == false", false), ("'' == false", false),
        ("'' == null", false), ("0 == null", false),
        ("1 != 2", true), ("1 !== 1", false), ("1 != '1'", true), ("null != null", false), ("'x' !== 'x'", false),
        // arithmetic
        ("1 + 2 == 3", true), ("'a' + 'b' == 'ab'", true), ("7 - 10 == -3", true), ("3 * 4 == 12", true),
        ("7 / 2 == 3.5", true), ("7 % 4 == 3", true), ("-7 % 4 == -3", true), ("0.1 + 0.2 == 0.3", false),
        ("-(2) == -2", true), ("--2 == 2", true), ("2 + 3 * 4 == 14", true), ("(2 + 3) * 4 == 20", true),
        ("1 / 0 == 1 / 0", false), // NaN never equals (division by zero is NaN, as in targaryen)
        // comparisons
        ("1 < 2", true), ("2 < 1", false), ("1 <= 1", true), ("2 >= 3", false), ("3 > 2.5", true),
        ("'a' < 'b'", true), ("'b' < 'a'", false), ("'a' < 'ab'", true), ("'B' < 'a'", true), ("'abc' >= 'abc'", true),
        ("null <= null", true), ("null < null", false),
        // logic
        ("true && true", true), ("true && false", false), ("false && true", false), ("false && false", false),
        ("true || false", true), ("false || true", true), ("false || false", false), ("true || true", true),
        ("!false", true), ("!true", false), ("!!true", true),
        ("true ? true : false", true), ("false ? true : false", false), ("1 < 2 ? 'y' == 'y' : false", true),
        // literals
        ("true", true), ("false", false), ("'true' == 'true'", true),
    ])
    func operatorTruthTable(_ text: String, _ expected: Bool) {
        #expect(evaluate(text) == expected, "\(text)")
    }

    @Test(arguments: [
        // no coercion: type errors, which make the rule false even where negated
        "'a' + 1 == 'a1'", "!('a' + 1 == 'a1')", "1 + true == 2", "!(1 + null == 1)", "'3' - 1 == 2", "!('3' - 1 == 2)",
        "'2' * 2 == 4", "!(1 < '2')", "1 < '2'", "!('a' > 1)", "!(null < 1)", "true < false", "!(true < false)",
        "1 && true", "true && 1", "!(true && 'x')", "0 || true", "false || 'x'", "!1", "!null", "-'a' == 'a'",
        "!(-true == 1)", "1 ? true : true", "null ? true : true",
        // non-boolean final values do not grant
        "1", "'true'", "null", "auth", "data", "now",
        // errors inside an || or ?: branch still fail the whole expression
        "(1 + 'a' == 'x') || true", "true ? 1 + 'a' == 'x' : true",
    ])
    func errorsAndNonBooleansAreFalse(_ text: String) {
        #expect(evaluate(text) == false, "\(text)")
    }

    @Test func shortCircuitSkipsTheOtherSide() {
        #expect(evaluate("false && 1 + 'a' == 'x'") == false)
        #expect(evaluate("true || 1 + 'a' == 'x'") == true)
        #expect(evaluate("true || data.parent().exists()") == true)
        #expect(evaluate("false ? 1 + 'a' : true") == true)
    }

    @Test func values() {
        #expect(valueOf("1 + 2") == .number(3))
        #expect(valueOf("'a' + 'b' + 'c'") == .string("abc"))
        #expect(valueOf("7 / 2") == .number(3.5))
        #expect(valueOf("1 < 2 ? 'yes' : 'no'") == .string("yes"))
        #expect(valueOf("'a' + 1") == nil)
        #expect(valueOf("null") == .null)
    }

    // MARK: - Variables

    @Test func authVariable() {
        let signedOut = RuleContext()
        #expect(evaluate("auth == null", signedOut) == true)
        #expect(evaluate("auth != null", signedOut) == false)
        #expect(evaluate("auth.uid == null", signedOut) == true) // members of null are null
        #expect(evaluate("auth.token.admin === true", signedOut) == false)

        let user = RuleContext(auth: signedIn("alice", token: ["admin": "true", "email": "\"a@x.com\"", "name": "\"Alice\""]))
        #expect(evaluate("auth != null", user) == true)
        #expect(evaluate("auth == null", user) == false)
        #expect(evaluate("auth.uid === 'alice'", user) == true)
        #expect(evaluate("auth.provider === 'password'", user) == true)
        #expect(evaluate("auth.token.admin === true", user) == true)
        #expect(evaluate("auth.token.admin === 'true'", user) == false)
        #expect(evaluate("auth.token.email.endsWith('@x.com')", user) == true)
        #expect(evaluate("auth.token.missing === null", user) == true)
        #expect(evaluate("auth.token.missing.deeper === null", user) == true)
        #expect(evaluate("auth.token['name'] == 'Alice'", user) == true)

        let other = RuleContext(auth: signedIn("bob", token: ["admin": "false"]))
        #expect(evaluate("auth.token.admin === true", other) == false)
        let plain = RuleContext(auth: signedIn("carol"))
        #expect(evaluate("auth.token.admin === true", plain) == false)
    }

    @Test func nowAndWildcards() {
        let context = RuleContext(now: 1_700_000_000_000, location: Path(keys: [ChildKey("users"), ChildKey("u1")]),
                                  wildcards: ["$uid": "u1", "other": "x"])
        #expect(evaluate("now == 1700000000000", context) == true)
        #expect(evaluate("now > 0 && now < 1800000000000", context) == true)
        #expect(evaluate("$uid == 'u1'", context) == true)
        #expect(evaluate("$uid.length == 2", context) == true)
        #expect(evaluate("$other == 'x'", context) == true) // bindings may omit the $
        #expect(evaluate("$missing == null", context) == false) // unbound wildcard: error
        #expect(evaluate("$uid == 1", context) == false) // wildcards are strings
    }

    @Test func queryVariable() {
        let plain = RuleContext()
        #expect(evaluate("query.orderByKey == false && query.orderByChild == null && query.limitToFirst == null", plain) == true)
        let query = RuleContext(query: RuleQuery(orderByChild: "owner", equalTo: .string("u1"), limitToFirst: 10))
        #expect(evaluate("query.orderByChild == 'owner' && query.equalTo == 'u1' && query.limitToFirst <= 50", query) == true)
        #expect(evaluate("query.orderByValue", query) == false)
        #expect(evaluate("query.nonsense == null", query) == false)
    }

    // MARK: - Snapshots

    static let data = tree("""
        {
          "users": {
            "u1": {"name": "Ann", "age": 31, "admin": true, "score": 2.5, ".priority": 7},
            "u2": {"name": "Bob", ".priority": "p"}
          },
          "flag": false,
          "text": "hello"
        }
        """)

    @Test func snapshotMethods() {
        let atU1 = RuleContext(root: Self.data, location: Path(keys: [ChildKey("users"), ChildKey("u1")]))
        let cases: [(String, Bool)] = [
            ("data.exists()", true),
            ("data.child('name').val() == 'Ann'", true),
            ("data.child('age').val() == 31", true),
            ("data.child('age').val() == 31.0", true),
            ("data.child('age').val() === '31'", false),
            ("data.child('admin').val() === true", true),
            ("data.child('score').val() > 2", true),
            ("data.child('missing').val() == null", true),
            ("data.child('missing').exists()", false),
            ("data.child('missing').child('deeper').exists()", false),
            ("root.child('users/u1/name').val() == 'Ann'", true),
            ("root.child('users').child('u2/name').val() == 'Bob'", true),
            ("root.child('/users//u2/').child('name').val() == 'Bob'", true),
            ("data.parent().child('u2').exists()", true),
            ("data.parent().parent().child('flag').val() == false", true),
            ("data.parent().parent().parent().exists()", false), // parent() of the root errors
            ("root.parent() == null", false),
            ("data.hasChild('name')", true),
            ("data.hasChild('nope')", false),
            ("root.hasChild('users/u2/name')", true),
            ("data.hasChildren()", true),
            ("data.child('name').hasChildren()", false),
            ("data.child('missing').hasChildren()", false),
            ("data.hasChildren(['name', 'age'])", true),
            ("data.hasChildren(['name', 'nope'])", false),
            ("data.hasChildren(['name'])", true),
            ("data.hasChildren([auth.uid])", false), // non-string (null) key: error
            ("data.hasChildren([1])", false), // non-string: error
            ("data.getPriority() == 7", true),
            ("data.parent().child('u2').getPriority() == 'p'", true),
            ("data.child('name').getPriority() == null", true),
            ("data.child('age').isNumber()", true),
            ("data.child('score').isNumber()", true),
            ("data.child('name').isNumber()", false),
            ("data.child('name').isString()", true),
            ("data.child('age').isString()", false),
            ("data.child('admin').isBoolean()", true),
            ("data.child('name').isBoolean()", false),
            ("data.isString() || data.isNumber() || data.isBoolean()", false),
            ("data.child('missing').isString()", false),
            ("data.val() == null", false), // an object's val() is not null
            ("data.val() != null", true),
            ("data.val() == data.val()", false), // …and equals nothing
            ("data.child('name').val().length == 3", true),
            ("data.child(auth.uid).exists()", false), // auth is null: child(null) errors
            ("data.child(1).exists()", false),
            ("data == null", false), // snapshots cannot be compared
            ("data.val", false),
            ("newData.exists()", false), // no newData in a read
        ]
        for (text, expected) in cases {
            #expect(evaluate(text, atU1) == expected, "\(text)")
        }
    }

    @Test func newDataSeesTheStateAfterTheWrite() {
        let after = tree("""
            {"users": {"u1": {"name": "Annie"}, "u2": {"name": "Bob"}}, "text": "hello"}
            """)
        let context = RuleContext(
            root: Self.data, newRoot: after, location: Path(keys: [ChildKey("users"), ChildKey("u1"), ChildKey("name")]))
        #expect(evaluate("data.val() == 'Ann' && newData.val() == 'Annie'", context) == true)
        #expect(evaluate("root.child('flag').exists() && !newData.parent().parent().parent().child('flag').exists()", context) == true)
        #expect(evaluate("newData.parent().child('age').exists()", context) == false)
        #expect(evaluate("newData.isString() && newData.val().length < 10", context) == true)
        let deleting = RuleContext(root: Self.data, newRoot: .null, location: Path(keys: [ChildKey("text")]))
        #expect(evaluate("data.exists() && !newData.exists()", deleting) == true)
    }

    // MARK: - Strings

    @Test(arguments: [
        ("'hello'.length == 5", true), ("''.length == 0", true), ("'héllo'.length == 5", true), ("'😀'.length == 2", true),
        ("'hello'.contains('ell')", true), ("'hello'.contains('xyz')", false), ("'hello'.contains('')", true),
        ("'hello'.beginsWith('he')", true), ("'hello'.beginsWith('lo')", false),
        ("'hello'.endsWith('lo')", true), ("'hello'.endsWith('he')", false), ("'hello'.endsWith('hello!')", false),
        ("'a.b.c'.replace('.', '/') == 'a/b/c'", true), ("'aaa'.replace('a', 'bb') == 'bbbbbb'", true),
        ("'abc'.replace('x', 'y') == 'abc'", true), ("'a-b'.replace('-', '') == 'ab'", true),
        ("'MiXeD'.toLowerCase() == 'mixed'", true), ("'MiXeD'.toUpperCase() == 'MIXED'", true),
        ("'Hello'.toLowerCase().beginsWith('he')", true),
        // arguments must be strings; methods need a string receiver
        ("'hello'.contains(1)", false), ("'hello'.beginsWith(null)", false), ("'a'.replace('a', 1) == '1'", false),
        ("'hello'.contains == null", false), ("'hello'.other == null", true), ("'x'.child('a').exists()", false),
        ("data.child('name').val().exists()", false), ("now.toUpperCase() == now", false),
        ("auth.contains('x')", false), ("(1).toLowerCase() == 1", false), ("null.length == null", true),
    ])
    func stringMembers(_ text: String, _ expected: Bool) {
        #expect(evaluate(text) == expected, "\(text)")
    }

    @Test(arguments: [
        ("'abc'.matches(/b/)", true), ("'abc'.matches(/^b/)", false), ("'abc'.matches(/^abc$/)", true),
        ("'abcd'.matches(/^abc$/)", false), ("'ABC'.matches(/^abc$/)", false), ("'ABC'.matches(/^abc$/i)", true),
        ("'user_42'.matches(/^[a-z]+_[0-9]+$/)", true), ("'user-42'.matches(/^[a-z]+_[0-9]+$/)", false),
        ("'aaa'.matches(/^a{3}$/)", true), ("'aaaa'.matches(/^a{2,3}$/)", false), ("'ac'.matches(/^ab?c$/)", true),
        ("'abbbc'.matches(/^ab*c$/)", true), ("'ac'.matches(/^ab+c$/)", false), ("'a.c'.matches(/^a\\.c$/)", true),
        ("'abc'.matches(/^a\\.c$/)", false), ("'x@y.com'.matches(/^[^@]+@[^@]+\\.[a-z]{2,}$/)", true),
        ("'foo bar'.matches(/\\s/)", true), ("'foobar'.matches(/\\d/)", false), ("'a/b'.matches(/a\\/b/)", true),
        ("'a/b'.matches(/a[/]b/)", true), ("'catdog'.matches(/^(cat|dog)+$/)", true), ("'cow'.matches(/^(cat|dog)+$/)", false),
        ("'2026-11-22'.matches(/^\\d{4}-\\d{2}-\\d{2}$/)", true),
        // the receiver must be a string
        ("auth.matches(/x/)", false), ("data.matches(/x/)", false), ("(1).matches(/1/)", false),
    ])
    func regexMatches(_ text: String, _ expected: Bool) {
        #expect(evaluate(text) == expected, "\(text)")
    }

    @Test func regexOnData() {
        let context = RuleContext(root: tree(#"{"email": "Someone@Example.com"}"#), location: Path(keys: [ChildKey("email")]))
        #expect(evaluate("data.val().matches(/^[A-Z0-9._%+-]+@[A-Z0-9.-]+\\.[A-Z]{2,4}$/i)", context) == true)
        #expect(evaluate("data.val().matches(/^[a-z]+@/)", context) == false)
    }
}
