import HearthSocialServer
import Testing

/// FriendlyPix's moderation of posts and comments: shouting to sentence case, listed words masked.
@Suite("Moderating the text of posts and comments")
struct TextModerationTests {
    let moderation = TextModeration(maskedWords: ["darn", "Heck"])

    @Test("Text that is not shouting and has no listed word is left as it is", arguments: [
        "A quiet afternoon at the beach.", "I love NYC in the fall!", "", "12345 !", "Wow! Nice! Photo",
    ])
    func leftAlone(_ text: String) {
        #expect(moderation.moderate(text) == TextModeration.Outcome(text: text, moderated: false))
    }

    @Test("Shouting becomes sentence case, each run of ! a full stop", arguments: [
        ("THIS IS THE BEST PHOTO EVER", "This is the best photo ever"),
        ("WOW!!! LOOK AT THIS. AMAZING", "Wow. Look at this. Amazing"),
        ("nice!!!", "Nice."),
        ("wow! so! good!", "Wow. So. Good."),
        ("GREAT SHOT? YES", "Great shot? Yes"),
        ("ÉTÉ À PARIS", "Été à paris"),
        ("LINE ONE\nLINE TWO", "Line one\nLine two"),
    ])
    func shouting(_ text: String, _ expected: String) {
        #expect(moderation.moderate(text) == TextModeration.Outcome(text: expected, moderated: true))
    }

    @Test("Listed words are masked whole, in any case; a longer word containing one is not")
    func masking() {
        #expect(moderation.moderate("Oh darn, the Heck with it") == .init(text: "Oh ****, the **** with it", moderated: true))
        #expect(moderation.moderate("darning socks in Heckington") == .init(text: "darning socks in Heckington", moderated: false))
        #expect(moderation.moderate("DARN!!!") == .init(text: "****.", moderated: true))
        #expect(TextModeration(maskedWords: []).moderate("darn") == .init(text: "darn", moderated: false))
    }

    @Test("Shouting is more than half the letters upper case, or three !")
    func shoutingDetection() {
        #expect(TextModeration.isShouting("OK GO"))
        #expect(!TextModeration.isShouting("Ok Go"))
        #expect(TextModeration.isShouting("a!b!c!"))
        #expect(!TextModeration.isShouting("a!b!"))
        #expect(!TextModeration.isShouting("123 456"))
    }
}
