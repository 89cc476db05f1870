import Testing

@testable import HearthEngine
@testable import HearthServer

/// Which database a request's Host names when it gives no `ns=`.
@Suite("Database from the Host")
struct DatabaseNameTests {
    @Test(arguments: [
        ("mydb.firebaseio.com", "mydb"),
        ("MyDB.localhost:9000", "mydb"),
        ("beta.example.co.uk:443", "beta"),
        ("a1-b2.localhost", "a1-b2"),
    ])
    func aHostNameNamesItsFirstLabel(host: String, expected: String) {
        #expect(DatabaseResponder.databaseName(host: host) == expected)
    }

    @Test(arguments: [
        "127.0.0.1", "127.0.0.1:9000", "10.0.0.1", "[::1]:9000", "[::1]",
        "localhost", "localhost:9000", ".localhost", "a.", "a..:80", "",
    ])
    func addressesAndSingleLabelsNameNoDatabase(host: String) {
        #expect(DatabaseResponder.databaseName(host: host) == nil)
    }

    @Test func noHostNamesNoDatabase() {
        #expect(DatabaseResponder.databaseName(host: nil) == nil)
    }
}
