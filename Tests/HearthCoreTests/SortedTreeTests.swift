import Testing
@testable import HearthCore

/// An integer key for exercising the tree on its own.
struct IntKey: TreeKey, Hashable, CustomStringConvertible {
    let value: Int
    init(_ value: Int) { self.value = value }
    static func compare(_ lhs: IntKey, _ rhs: IntKey) -> Int { lhs.value == rhs.value ? 0 : (lhs.value < rhs.value ? -1 : 1) }
    var description: String { String(value) }
}

typealias IntTree = SortedTree<IntKey, Int>

@Suite struct SortedTreeTests {
    // MARK: - Basics

    @Test func emptyTree() {
        let tree = IntTree()
        #expect(tree.count == 0)
        #expect(tree.isEmpty)
        #expect(tree.first == nil)
        #expect(tree.last == nil)
        #expect(tree[IntKey(1)] == nil)
        #expect(tree.entry(at: 0) == nil)
        #expect(tree.rank { _ in true } == 0)
        #expect(Array(tree).isEmpty)
        #expect(Array(tree.reversed()).isEmpty)
        #expect(tree.root == nil)
    }

    @Test func insertReplaceAndRemove() {
        var tree = IntTree()
        tree.insert(IntKey(5), 50)
        tree.insert(IntKey(1), 10)
        tree.insert(IntKey(9), 90)
        #expect(tree.count == 3)
        #expect(tree.map(\.key.value) == [1, 5, 9])
        tree.insert(IntKey(5), 55)
        #expect(tree.count == 3)
        #expect(tree[IntKey(5)] == 55)
        tree.remove(IntKey(1))
        #expect(tree.map(\.key.value) == [5, 9])
        #expect(tree.first?.key.value == 5)
        #expect(tree.last?.value == 90)
        tree.remove(IntKey(5))
        tree.remove(IntKey(9))
        #expect(tree.isEmpty)
        #expect(tree.root == nil)
    }

    @Test func removingAMissingKeySharesTheWholeTree() {
        let tree = IntTree(sortedUniqueEntries: (0..<100).map { (IntKey($0 * 2), $0) })
        let same = tree.removing(IntKey(51))
        #expect(same.isIdentical(to: tree))
        #expect(!tree.removing(IntKey(50)).isIdentical(to: tree))
        #expect(!tree.inserting(IntKey(50), 0).isIdentical(to: tree))
    }

    @Test func valueSemantics() {
        var tree = IntTree(entries: [(IntKey(1), 1), (IntKey(2), 2)])
        let copy = tree
        tree.insert(IntKey(3), 3)
        tree.remove(IntKey(1))
        #expect(copy.map(\.key.value) == [1, 2])
        #expect(tree.map(\.key.value) == [2, 3])
        let inserted = copy.inserting(IntKey(0), 0)
        let removed = copy.removing(IntKey(2))
        #expect(copy.count == 2)
        #expect(inserted.map(\.key.value) == [0, 1, 2])
        #expect(removed.map(\.key.value) == [1])
    }

    @Test func buildingFromUnsortedEntriesKeepsTheLastDuplicate() {
        let tree = IntTree(entries: [(IntKey(3), 1), (IntKey(1), 2), (IntKey(3), 3), (IntKey(2), 4), (IntKey(1), 5)])
        #expect(tree.map(\.key.value) == [1, 2, 3])
        #expect(tree.map(\.value) == [5, 4, 3])
        Self.checkInvariants(tree)
    }

    /// Small and large inputs are built by different code (insertion into a sorted array up to
    /// 16 entries, a stable sort above): both keep the last of equal keys, in key order.
    @Test(arguments: [0, 1, 2, 5, 15, 16, 17, 40])
    func buildingFromUnsortedEntriesMatchesAReference(count: Int) {
        var random = SeededGenerator(seed: UInt64(count) + 100)
        for _ in 0..<50 {
            let entries = (0..<count).map { index in (IntKey(Int.random(in: 0..<max(1, count / 2 + 1), using: &random)), index) }
            var reference: [Int: Int] = [:]
            for (key, value) in entries { reference[key.value] = value }
            let tree = IntTree(entries: entries)
            #expect(tree.map(\.key.value) == reference.keys.sorted())
            #expect(tree.map(\.value) == reference.keys.sorted().map { reference[$0]! })
            Self.checkInvariants(tree)
        }
    }

    @Test func inOrderVisitMatchesIteration() {
        var tree = IntTree()
        for value in [5, 3, 9, 1, 4, 7, 11, 0, 2] { tree.insert(IntKey(value), value * 10) }
        var visited: [(Int, Int)] = []
        tree.forEachInOrder { key, value in visited.append((key.value, value)) }
        #expect(visited.map(\.0) == tree.map(\.key.value))
        #expect(visited.map(\.1) == tree.map(\.value))
        IntTree().forEachInOrder { _, _ in Issue.record("an empty tree has no entries") }
    }

    @Test func buildingFromASliceWithAnOffsetStart() {
        let all = (0..<50).map { (IntKey($0), $0 * 10) }
        let tree = IntTree(sortedUniqueEntries: all[10..<20])
        #expect(tree.map(\.key.value) == Array(10..<20))
        #expect(tree[IntKey(15)] == 150)
        Self.checkInvariants(tree)
    }

    @Test func sequentialInsertsStayBalanced() {
        var ascending = IntTree()
        var descending = IntTree()
        for value in 0..<5_000 {
            ascending.insert(IntKey(value), value)
            descending.insert(IntKey(-value), value)
        }
        Self.checkInvariants(ascending)
        Self.checkInvariants(descending)
        for value in stride(from: 0, to: 5_000, by: 2) { ascending.remove(IntKey(value)) }
        Self.checkInvariants(ascending)
        #expect(ascending.count == 2_500)
        #expect(ascending.first?.key.value == 1)
    }

    // MARK: - Randomized comparison with a sorted-array model

    @Test(arguments: [1, 2, 3] as [UInt64])
    func matchesASortedArrayModel(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var tree = IntTree()
        var model: [Int: Int] = [:]
        var snapshots: [(IntTree, [Int: Int])] = []
        let keySpace = 1_500
        for step in 0..<8_000 {
            let key = Int.random(in: 0..<keySpace, using: &generator)
            let roll = Int.random(in: 0..<10, using: &generator)
            if roll < 6 {
                let value = Int.random(in: 0..<1_000_000, using: &generator)
                if roll < 3 { tree.insert(IntKey(key), value) } else { tree = tree.inserting(IntKey(key), value) }
                model[key] = value
            } else {
                if roll < 8 { tree.remove(IntKey(key)) } else { tree = tree.removing(IntKey(key)) }
                model[key] = nil
            }
            if step % 200 == 0 || step == 7_999 {
                Self.compare(tree, with: model, using: &generator)
                snapshots.append((tree, model))
            }
        }
        // Every earlier version is still intact after all the later changes.
        for (old, oldModel) in snapshots {
            #expect(old.map(\.key.value) == oldModel.keys.sorted())
            #expect(old.map(\.value) == oldModel.keys.sorted().map { oldModel[$0]! })
        }
    }

    private static func compare(_ tree: IntTree, with model: [Int: Int], using generator: inout SeededGenerator) {
        let keys = model.keys.sorted()
        #expect(tree.count == keys.count)
        #expect(tree.isEmpty == keys.isEmpty)
        #expect(tree.map(\.key.value) == keys)
        #expect(tree.map(\.value) == keys.map { model[$0]! })
        #expect(tree.reversed().map(\.key.value) == keys.reversed())
        #expect(tree.first?.key.value == keys.first)
        #expect(tree.last?.key.value == keys.last)
        checkInvariants(tree)

        for _ in 0..<40 {
            let probe = Int.random(in: -5..<1_505, using: &generator)
            #expect(tree[IntKey(probe)] == model[probe])

            // rank: the number of keys below the probe.
            let below = keys.filter { $0 < probe }
            #expect(tree.rank { $0.value < probe } == below.count)
            #expect(tree.rank { $0.value <= probe } == keys.filter { $0 <= probe }.count)

            // entries(from:) starts at the first key not below the probe.
            let fromProbe = Array(tree.entries(from: { $0.value < probe }).map(\.key.value))
            #expect(fromProbe == keys.filter { $0 >= probe })
            // entriesDescending(before:) starts at the last key below the probe.
            let beforeProbe = Array(tree.entriesDescending(before: { $0.value < probe }).map(\.key.value))
            #expect(beforeProbe == below.reversed())
            let atMostProbe = Array(tree.entriesDescending(before: { $0.value <= probe }).prefix(3).map(\.key.value))
            #expect(atMostProbe == Array(keys.filter { $0 <= probe }.reversed().prefix(3)))
        }
        if !keys.isEmpty {
            for _ in 0..<40 {
                let index = Int.random(in: 0..<keys.count, using: &generator)
                let entry = tree.entry(at: index)
                #expect(entry?.key.value == keys[index])
                #expect(entry?.value == model[keys[index]])
            }
        }
        #expect(tree.entry(at: keys.count) == nil)
        #expect(tree.entry(at: -1) == nil)
        #expect(tree.rank { _ in true } == keys.count)
        #expect(tree.rank { _ in false } == 0)
        #expect(Array(tree.entries(from: { _ in false }).map(\.key.value)) == keys)
        #expect(Array(tree.entries(from: { _ in true })).isEmpty)
        #expect(Array(tree.entriesDescending(before: { _ in true }).map(\.key.value)) == keys.reversed())
    }

    // MARK: - Structural sharing

    @Test func insertingIntoAMillionEntriesSharesAlmostEverything() throws {
        let count = 1_000_000
        let old = IntTree(sortedUniqueEntries: (0..<count).map { (IntKey($0 * 2), $0) })
        let oldRoot = try #require(old.root)
        #expect(old.count == count)
        let oldHeight = Self.height(old.root)
        #expect(oldHeight <= 21)

        let newKey = IntKey(1_000_001)
        let new = old.inserting(newKey, -1)

        // The old version is unchanged.
        #expect(old.root === oldRoot)
        #expect(old.count == count)
        #expect(old[newKey] == nil)
        #expect(old.rank { $0.value < 1_000_001 } == 500_001)
        #expect(old.entry(at: 500_001)?.key.value == 1_000_002)
        #expect(oldRoot.size == count)

        // The new version has the entry and is a valid tree.
        #expect(new.count == count + 1)
        #expect(new[newKey] == -1)
        #expect(new.entry(at: 500_001)?.key.value == 1_000_001)
        #expect(new.entry(at: 500_002)?.key.value == 1_000_002)
        #expect(new[IntKey(1_999_998)] == 999_999)

        // Only the nodes on the path were copied: everything else is the old version's objects.
        let sharing = Self.sharing(between: new.root, and: old)
        #expect(sharing.fresh >= 1)
        #expect(sharing.fresh <= 2 * oldHeight + 2, "copied \(sharing.fresh) branches")
        #expect(sharing.fresh + sharing.sharedEntries == count + 1)
        #expect(sharing.sharedEntries >= count - 2 * oldHeight)

        // Removing an entry behaves the same way.
        let removedKey = IntKey(777_776)
        let smaller = old.removing(removedKey)
        #expect(smaller.count == count - 1)
        #expect(smaller[removedKey] == nil)
        #expect(old[removedKey] == 388_888)
        let removal = Self.sharing(between: smaller.root, and: old)
        #expect(removal.fresh <= 2 * oldHeight + 2, "copied \(removal.fresh) branches")
        #expect(removal.fresh + removal.sharedEntries == count - 1)

        // A million-entry tree built from sorted input is balanced.
        Self.checkInvariants(new, limit: 2_000)
    }

    /// Counts the branches of `root` that are not objects of `old` (fresh), and the entries
    /// held by subtrees taken over from `old` unchanged (shared).
    private static func sharing(between root: IntTree.Branch?, and old: IntTree) -> (fresh: Int, sharedEntries: Int) {
        guard let node = root else { return (0, 0) }
        if let original = branch(holding: node.key, in: old), original === node {
            return (0, node.size)
        }
        let left = sharing(between: node.left, and: old)
        let right = sharing(between: node.right, and: old)
        return (left.fresh + right.fresh + 1, left.sharedEntries + right.sharedEntries)
    }

    /// The branch object of `tree` that holds `key`.
    private static func branch(holding key: IntKey, in tree: IntTree) -> IntTree.Branch? {
        var node = tree.root
        while let current = node {
            let order = IntKey.compare(key, current.key)
            if order == 0 { return current }
            node = order < 0 ? current.left : current.right
        }
        return nil
    }

    // MARK: - Invariants

    static func height(_ node: IntTree.Branch?) -> Int {
        guard let node else { return 0 }
        return 1 + max(height(node.left), height(node.right))
    }

    /// Checks sizes, key order and the weight balance (neither side more than three times the
    /// other once a node has two or more descendants), visiting at most `limit` branches fully
    /// and the rest by size only when `limit` is small.
    static func checkInvariants(_ tree: IntTree, limit: Int = .max) {
        var visited = 0
        var failures = 0
        func check(_ node: IntTree.Branch?, above: Int?, below: Int?) -> Int {
            guard let node, failures < 5 else { return node?.size ?? 0 }
            visited += 1
            if let above, node.key.value <= above { failures += 1; Issue.record("order broken at \(node.key)") }
            if let below, node.key.value >= below { failures += 1; Issue.record("order broken at \(node.key)") }
            let left: Int
            let right: Int
            if visited < limit {
                left = check(node.left, above: above, below: node.key.value)
                right = check(node.right, above: node.key.value, below: below)
            } else {
                left = node.left?.size ?? 0
                right = node.right?.size ?? 0
            }
            if node.size != left + right + 1 { failures += 1; Issue.record("size wrong at \(node.key)") }
            if left + right > 1 && (left > 3 * right || right > 3 * left) {
                failures += 1
                Issue.record("unbalanced at \(node.key): \(left) vs \(right)")
            }
            return node.size
        }
        let total = check(tree.root, above: nil, below: nil)
        #expect(total == tree.count)
        // Weight balance bounds the height by about 2.41 × log2(n).
        let bound = Int((2.5 * log2Ceiling(tree.count + 1)).rounded(.up)) + 1
        #expect(height(tree.root) <= bound)
    }

    private static func log2Ceiling(_ n: Int) -> Double {
        var bits = 0
        while (1 << bits) < n { bits += 1 }
        return Double(bits)
    }
}
