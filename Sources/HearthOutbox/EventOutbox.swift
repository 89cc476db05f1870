/// Where a store keeps the events its commits recorded, for the dispatcher to deliver: each
/// store (a database's log, the accounts, the files' metadata) records its events in its own
/// transactions, so an event exists exactly when its change does.
///
/// Events of one subscriber are read in ``StoredEvent/sequence`` order. The dispatcher is the
/// only reader and remover of a subscriber's events; recording goes through the store's own
/// commits (``SQLiteOutbox/record(_:in:)``).
public protocol EventOutbox: Sendable {
    /// Names the store, for logs, metrics and the console: `database/<name>`, `accounts`, `files`.
    var source: String { get }

    /// Up to `limit` waiting events of `subscriber` after `sequence`, oldest first.
    func pending(for subscriber: String, after sequence: Int64, limit: Int) async throws -> [StoredEvent]

    /// Marks events delivered to `subscriber` (at least once is kept: an event whose mark was
    /// lost to a crash is delivered again). They no longer count as waiting for it.
    func remove(_ sequences: [Int64], for subscriber: String) async throws

    /// Counts a failed delivery of an event to `subscriber`.
    func recordFailure(of sequence: Int64, for subscriber: String) async throws

    /// Moves an event of `subscriber` to the dead-letter list after `attempts` failed
    /// deliveries, with the last failure's description, and keeps at most `limit` dead letters
    /// of that subscriber: the oldest beyond it are dropped (an outsider whose writes keep
    /// failing a function must not fill the disk). Returns how many were dropped.
    @discardableResult
    func deadLetter(
        _ sequence: Int64, for subscriber: String, attempts: Int, reason: String, at time: Int64, keeping limit: Int
    ) async throws -> Int

    /// Dead letters, oldest first, of one subscriber or of all.
    func deadLetters(for subscriber: String?, limit: Int) async throws -> [DeadLetter]

    /// Puts a dead letter back at the end of its subscriber's queue, with its ID and body, and
    /// returns it; nil when there is no such dead letter.
    func replay(deadLetter sequence: Int64) async throws -> StoredEvent?

    /// Removes a dead letter for good; false when there was none.
    func discard(deadLetter sequence: Int64) async throws -> Bool

    /// How many events wait, by subscriber.
    func backlog() async throws -> [String: Int]

    /// How many events wait for `subscriber`.
    func waiting(for subscriber: String) async throws -> Int

    /// Forgets the subscribers not in `subscribers` (functions removed since their events were
    /// recorded): their waiting events are dropped. Returns how many each had waiting.
    func retain(subscribers: Set<String>) async throws -> [String: Int]
}
