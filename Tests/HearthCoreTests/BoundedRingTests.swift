import HearthCore
import Testing

@Suite struct BoundedRingTests {
    @Test func keepsTheNewestValuesOldestFirst() {
        var ring = BoundedRing<Int>(capacity: 3)
        #expect(ring.oldestFirst.isEmpty)
        ring.append(1)
        ring.append(2)
        #expect(ring.oldestFirst == [1, 2])
        for value in 3...7 { ring.append(value) }
        #expect(ring.oldestFirst == [5, 6, 7])
        #expect(ring.count == 3)
    }

    @Test func aRingOfOneKeepsTheLastValue() {
        var ring = BoundedRing<String>(capacity: 1)
        ring.append("a")
        ring.append("b")
        #expect(ring.oldestFirst == ["b"])
    }
}
