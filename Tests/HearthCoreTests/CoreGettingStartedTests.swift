import HearthCore
import Testing

/// The getting-started article's code (HearthCore.docc), as written there.
@Suite("The core, as the article shows it")
struct CoreGettingStartedTests {
    @Test func writeReadAndQuery() throws {
        var state = DatabaseState()
        let scores = try Path(parsing: "/scores")
        let value = try JSONParser.parse(Array(#"{"ana": {"n": 3}, "bo": {"n": 7}, "cy": {"n": 5}}"#.utf8))
        let (next, _) = try state.applying(.set(scores, value), now: 1_700_000_000_000)
        state = next
        #expect(state.value(at: try Path(parsing: "/scores/bo/n")) == .int(7))

        let top = Query(order: .child(try Path(parsing: "n")), limit: .last(2))
        let best = state.queryValue(top, at: scores)
        #expect(JSONWriter.string(best) == #"{"bo":{"n":7},"cy":{"n":5}}"#)
        #expect(JSONWriter.string(state.value(at: scores)) == #"{"ana":{"n":3},"bo":{"n":7},"cy":{"n":5}}"#)
    }
}
