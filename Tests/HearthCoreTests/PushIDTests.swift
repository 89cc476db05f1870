import Testing
@testable import HearthCore

@Suite struct PushIDTests {
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")

    static let digitValues = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($0.element, $0.offset) })

    /// The 0–63 value of each character of an ID.
    static func digits(_ id: String) -> [Int] {
        id.map { character in digitValues[character] ?? -1 }
    }

    /// The time in the first eight characters (big-endian base 64).
    static func time(_ id: String) -> Int64 {
        digits(id).prefix(8).reduce(Int64(0)) { $0 * 64 + Int64($1) }
    }

    /// The twelve random digits.
    static func randomPart(_ id: String) -> [Int] { Array(digits(id).suffix(12)) }

    /// `digits` plus one, in base 64 with carry.
    static func incremented(_ digits: [Int]) -> [Int] {
        var result = digits
        var index = result.count - 1
        while index >= 0 {
            if result[index] < 63 {
                result[index] += 1
                return result
            }
            result[index] = 0
            index -= 1
        }
        return result
    }

    @Test func alphabetIsInASCIIOrder() {
        #expect(String(decoding: PushIDGenerator.alphabet, as: UTF8.self) == String(Self.alphabet))
        #expect(Self.alphabet.map(\.asciiValue!) == Self.alphabet.map(\.asciiValue!).sorted())
        #expect(Set(Self.alphabet).count == 64)
    }

    @Test func idsHave20AlphabetCharacters() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 7)
        for step in 0..<500 {
            let id = generator.next(now: 1_700_000_000_000 + Int64(step / 3), using: &random)
            #expect(id.count == 20)
            #expect(id.utf8.count == 20)
            #expect(id.allSatisfy { Self.alphabet.contains($0) }, "\(id)")
        }
    }

    @Test(arguments: [0, 1, 63, 64, 4_095, 1_700_000_000_123, 281_474_976_710_655] as [Int64])
    func firstEightCharactersEncodeTheTime(_ now: Int64) {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 8)
        let id = generator.next(now: now, using: &random)
        #expect(Self.time(id) == now)
    }

    @Test func documentationExamplePrefix() {
        let example = "-INOQPH-aV_psbk3ZXEX"
        let time = Self.time(example)
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 9)
        let id = generator.next(now: time, using: &random)
        #expect(id.prefix(8) == example.prefix(8))
        #expect(Self.time("-------" + "0" + "------------") == 1)
        #expect(Self.time("0-------" + "------------") == 1 << 42)
    }

    @Test func sameMillisecondIncrementsTheRandomPart() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 10)
        let first = generator.next(now: 5_000, using: &random)
        let second = generator.next(now: 5_000, using: &random)
        #expect(Self.time(second) == 5_000)
        #expect(Self.randomPart(second) == Self.incremented(Self.randomPart(first)))
        #expect(second > first)
    }

    @Test func clockSteppingBackKeepsIDsIncreasing() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 11)
        let first = generator.next(now: 1_000_000, using: &random)
        let back = generator.next(now: 999_000, using: &random)
        #expect(Self.time(back) == 1_000_000)
        #expect(Self.randomPart(back) == Self.incremented(Self.randomPart(first)))
        #expect(back > first)
        let forward = generator.next(now: 1_000_001, using: &random)
        #expect(Self.time(forward) == 1_000_001)
        #expect(forward > back)
    }

    @Test func aNewMillisecondDrawsNewRandomness() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 12)
        var previous = generator.next(now: 100, using: &random)
        var fresh = 0
        for now in 101..<200 as Range<Int64> {
            let id = generator.next(now: now, using: &random)
            #expect(Self.time(id) == now)
            #expect(id > previous)
            if Self.randomPart(id) != Self.incremented(Self.randomPart(previous)) { fresh += 1 }
            previous = id
        }
        #expect(fresh >= 95)
    }

    @Test func tenThousandIDsWithAFixedClockStrictlyIncrease() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 13)
        var ids: [String] = []
        for _ in 0..<10_000 { ids.append(generator.next(now: 1_700_000_000_000, using: &random)) }
        var carries = 0
        var notIncreasing: [String] = []
        var notIncremented: [String] = []
        for (previous, next) in zip(ids, ids.dropFirst()) {
            if !(previous < next) || !Array(previous.utf8).lexicographicallyPrecedes(Array(next.utf8)) {
                notIncreasing.append("\(previous) !< \(next)")
            }
            let randomPart = Self.randomPart(next)
            if randomPart != Self.incremented(Self.randomPart(previous)) { notIncremented.append(next) }
            if randomPart.last == 0 { carries += 1 }
        }
        #expect(notIncreasing.isEmpty)
        #expect(notIncremented.isEmpty)
        #expect(Set(ids).count == 10_000)
        #expect(ids.allSatisfy { Self.time($0) == 1_700_000_000_000 })
        // The last digit wrapped (carrying into the next) about every 64 IDs.
        #expect(carries >= 10_000 / 64 - 1)
    }

    @Test func idsIncreaseWhateverTheClockDoes() {
        var generator = PushIDGenerator()
        var random = SeededGenerator(seed: 14)
        var clock = SeededGenerator(seed: 15)
        var now: Int64 = 1_600_000_000_000
        var previous = ""
        for _ in 0..<5_000 {
            now += Int64.random(in: -3...3, using: &clock)
            let id = generator.next(now: now, using: &random)
            #expect(id > previous)
            previous = id
        }
    }

    /// A generator that counts its draws.
    struct CountingGenerator: RandomNumberGenerator {
        var inner: SeededGenerator
        var draws: [UInt64] = []
        mutating func next() -> UInt64 {
            let value = inner.next()
            draws.append(value)
            return value
        }
    }

    /// A new millisecond's 72 random bits come from two draws (a draw from the system generator
    /// is a system call): ten digits from the first, read from its top bits, and two from the second.
    @Test func randomDigitsComeFromTwoDraws() {
        var generator = PushIDGenerator()
        var random = CountingGenerator(inner: SeededGenerator(seed: 99))
        for step in 0..<200 {
            let id = generator.next(now: 1_700_000_000_000 + Int64(step), using: &random)
            #expect(random.draws.count == 2)
            let (first, second) = (random.draws[0], random.draws[1])
            func digit(_ word: UInt64, _ index: Int) -> Int { Int((word >> UInt64(58 - 6 * index)) & 63) }
            var expected: [Int] = (0..<10).map { digit(first, $0) }
            expected += (0..<2).map { digit(second, $0) }
            #expect(Self.randomPart(id) == expected)
            random.draws = []
        }
        // Within a millisecond the digits are incremented, not drawn.
        _ = generator.next(now: 1_700_000_000_199, using: &random)
        #expect(random.draws.isEmpty)
    }

    @Test func theSameSeedGivesTheSameIDs() {
        func run(seed: UInt64) -> [String] {
            var generator = PushIDGenerator()
            var random = SeededGenerator(seed: seed)
            return (0..<20).map { generator.next(now: 1_000 + Int64($0 / 4), using: &random) }
        }
        #expect(run(seed: 42) == run(seed: 42))
        #expect(run(seed: 42) != run(seed: 43))
        #expect(Set(run(seed: 42).map { $0.suffix(12) }).count == 20)
    }
}
