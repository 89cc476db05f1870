import Dispatch
import Foundation
import HearthAuth
import HearthCore
@testable import HearthEngine
import HearthRules
import HearthStore
import HearthTesting
import Logging
import Synchronization
import Testing

@testable import HearthServer

/// The upgrade of a long-polling session to a WebSocket (docs/protocol.md §2.3), driven in
/// process: a ``LongPollTransport`` over a real ``RealtimeSession``, its polls answered on
/// threads the test holds and lets go, so the order of two polls is the test's, not the
/// scheduler's.
@Suite("Long-polling upgrade")
struct LongPollUpgradeTests {
    /// A session on an open database and its long-polling transport, whose first packet taken
    /// waits for ``release`` (see ``LongPollTransport/packetTaken``).
    final class Scene: Sendable {
        let directory: TemporaryDirectory
        let data: DataFolder
        let service: RealtimeService
        let session: RealtimeSession
        let transport: LongPollTransport
        /// Yields once when the first packet has been taken.
        let taken: AsyncStream<Void>
        /// Lets the held packet's poll answer.
        var release: DispatchSemaphore { hold.release }
        /// Yields once the session has handled the client's `n`.
        let ended: AsyncStream<Void>
        private let hold: Hold

        /// The first packet taken waits for `release`; the others go on.
        final class Hold: Sendable {
            let taken = Mutex(0)
            let release = DispatchSemaphore(value: 0)
        }

        init() async throws {
            directory = try TemporaryDirectory(prefix: "long-poll-upgrade")
            let logger = Logger(label: "long-poll-upgrade-test")
            data = try DataFolder(url: directory.url.appendingPathComponent("data"), logger: logger)
            let rules = RulesRegistry(defaultRules: try SecurityRules(parsing: TestServer.openRules))
            let operations = DatabaseOperations(
                databases: data, rules: rules, hub: ListenerHub(rules: { rules.loadedRules(named: $0) }), clock: { 0 }, logger: logger)
            let database = try await operations.database(named: "default", creating: true)
            service = RealtimeService(
                operations: operations, admin: AdminCredential(token: nil, emulator: false),
                issuer: await TokenIssuer(
                    privateKey: try TokenIssuer.loadOrCreateKey(at: directory.url.appendingPathComponent("key.pem")), projectID: "test"),
                disconnects: try DisconnectQueueStore(path: directory.url.appendingPathComponent("disconnects.sqlite").path),
                accounts: try AccountStore(path: directory.url.appendingPathComponent("accounts.sqlite").path), logger: logger)
            session = service.openSession(on: database, host: "localhost")
            // The handshake is the connect answer's packet 0, not a poll's.
            _ = session.outbound.takeNow()
            let (taken, tookFirst) = AsyncStream.makeStream(of: Void.self)
            self.taken = taken
            let hold = Hold()
            self.hold = hold
            transport = LongPollTransport(
                id: "lp", password: "pw", callback: "1", session: session, now: 0,
                packetTaken: {
                    let count = hold.taken.withLock { count in
                        defer { count += 1 }
                        return count
                    }
                    guard count == 0 else { return }
                    tookFirst.yield()
                    hold.release.wait()
                })
            // Told when the session has handled `n` (the transport's own hook runs first).
            let (ended, didEnd) = AsyncStream.makeStream(of: Void.self)
            self.ended = ended
            session.endOfTransmission.withLock { hook in
                let upgrade = hook
                hook = .init {
                    upgrade?.run()
                    didEnd.yield()
                }
            }
        }

        /// Hands the client's message to the transport as segment `segment` of a poll's URL.
        func send(_ message: String, segment: Int) throws {
            try transport.receiveSegments(
                ["seg0": "\(segment)", "ts0": "1", "d0": LogRedactionTests.webSafeBase64(message)], now: 0)
        }

        /// A poll answered on a thread of its own (its packet may be held there).
        func pollOnThread() -> Task<String?, Never> {
            let transport = transport
            return Task {
                await withCheckedContinuation { continuation in
                    Thread { continuation.resume(returning: transport.packet(for: 0)) }.start()
                }
            }
        }

        func close() async {
            release.signal()
            await service.close(session)
            data.close()
            directory.remove()
        }
    }

    /// What the SDK's long-polling side receives (BrowserPollConnection, PacketReceiver):
    /// packets in number order, none past a gap, and nothing after the packet `close` names
    /// (the SDK has moved to its WebSocket by then).
    static func delivered(_ answers: [String]) -> [Substring] {
        var packets: [Int: Substring] = [:]
        var closeAfter = Int.max
        for answer in answers {
            for match in answer.matches(of: /pRTLPCB\((\d+),\[(.*?)\]\);/) { packets[Int(match.1)!] = match.2 }
            if let close = answer.firstMatch(of: /pLPCommand\('close',(\d+)\)/) { closeAfter = Int(close.1)! }
        }
        var received: [Substring] = []
        var number = 1
        while number <= closeAfter, let packet = packets[number] {
            received.append(packet)
            number += 1
        }
        return received
    }

    /// A listen's answer taken by one poll while the client's `n` is answered on another: the
    /// `n` is the last packet of the long-poll, so the answer must come before it. (The
    /// browser test `test_values_larger_than_a_frame_travel_both_ways[long-polling]` lost it:
    /// the SDK upgraded and never saw r:2's `ok`.)
    @Test func aListensAnswerTakenBeforeTheEndOfTransmissionReachesTheClient() async throws {
        let scene = try await Scene()
        // Whatever fails, the held thread goes on.
        defer { scene.release.signal() }
        // The listen, then its answer queued for a poll.
        try scene.send(#"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/big","h":""}}}"#, segment: 0)
        await scene.session.outbound.waitForWork()
        // One poll takes the answer and is held there before it answers.
        let first = scene.pollOnThread()
        _ = await scene.taken.first { _ in true }
        // The client ends transmission; the next poll answers with `n`.
        try scene.send(#"{"t":"c","d":{"t":"n","d":{}}}"#, segment: 1)
        _ = await scene.ended.first { _ in true }
        let second = await scene.transport.answerPoll(timeout: .seconds(60))
        #expect(second.contains(#""t":"n""#), "\(second)")
        #expect(scene.transport.isUpgraded)
        // The held poll answers now.
        scene.release.signal()
        let firstAnswer = await first.value ?? ""
        let received = Self.delivered([firstAnswer, second])
        #expect(received.contains { $0.contains(#""r":2"#) }, "the listen's answer is lost: \(firstAnswer) came after \(second)")
        #expect(received.last?.contains(#""t":"n""#) == true, "the end of transmission is not the last packet: \(received)")
        await scene.close()
    }
}
