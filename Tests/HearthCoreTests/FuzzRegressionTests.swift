import Testing

@testable import HearthCore

/// Inputs that `scripts/fuzz` found mishandled (the same inputs are seeds in `Fuzz/corpus/`).
@Suite("Fuzz regressions: core")
struct CoreFuzzRegressionTests {
    /// `fuzz-path`: "/\u{30A}" (a "/" with a combining ring above it) is one `Character`, so a
    /// path split at characters kept the "/" inside the key and refused the path, while Firebase
    /// splits at the "/" and reads the key "\u{30A}".
    @Test func aSlashFollowedByACombiningMarkStillEndsAKey() throws {
        let path = try Path(parsing: "/\u{30A}")
        #expect(path.keys == [ChildKey("\u{30A}")])
        #expect(try Path(parsing: path.description) == path)
        let deeper = try Path(parsing: "users/\u{301}x/name")
        #expect(deeper.keys.map(\.string) == ["users", "\u{301}x", "name"])
    }

    /// `fuzz-path`: "é" (U+00E9) and "e\u{301}" are two keys in Firebase (and in Hearth's key
    /// order), but `String`'s equality made them one `ChildKey` to every dictionary.
    @Test func canonicallyEquivalentKeysAreDifferentKeys() {
        let composed = ChildKey("\u{E9}")
        let decomposed = ChildKey("e\u{301}")
        #expect(ChildKey.compare(composed, decomposed) != 0)
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        #expect(Set([Path(keys: [composed]), Path(keys: [decomposed])]).count == 2)
        #expect(ChildKey("same") == ChildKey(String("sa") + "me"))
    }

    /// A multi-path update naming both keys writes both, as Firebase does; before, the second
    /// replaced the first's value and was never written.
    @Test func anUpdateOfTwoCanonicallyEquivalentKeysWritesBoth() throws {
        let update = try JSONParser.parseUpdate(Array(#"{"\u00e9":1,"e\u0301":2}"#.utf8))
        #expect(update.map(\.path.description) == ["/\u{E9}", "/e\u{301}"])
        let (state, _) = try DatabaseState().applying(.update(.root, update), now: 0)
        #expect(state.value(at: Path(keys: [ChildKey("\u{E9}")])) == .int(1))
        #expect(state.value(at: Path(keys: [ChildKey("e\u{301}")])) == .int(2))
    }
}
