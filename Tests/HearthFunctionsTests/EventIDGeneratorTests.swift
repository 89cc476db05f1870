import Foundation
import HearthFunctions
import Testing

/// Event IDs: UUID-shaped, never repeated by one generator, and different between generators
/// (the same server before and after a restart).
struct EventIDGeneratorTests {
    @Test func idsAreUUIDShapedAndCountUpAfterTheRandomHalf() {
        let generator = EventIDGenerator(prefix: 0x0123_4567_89ab_cdef)
        #expect(generator.next() == "01234567-89ab-cdef-0000-000000000001")
        #expect(generator.next() == "01234567-89ab-cdef-0000-000000000002")
        let id = generator.next()
        #expect(UUID(uuidString: id) != nil)
        #expect(id == id.lowercased())
    }

    @Test func oneGeneratorNeverRepeatsAndTwoDiffer() async {
        let generator = EventIDGenerator()
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 { group.addTask { (0..<1000).map { _ in generator.next() } } }
            return await group.reduce(into: [String]()) { $0 += $1 }
        }
        #expect(Set(ids).count == 4000)
        #expect(EventIDGenerator().next() != EventIDGenerator().next())
    }
}
