import Foundation
import HearthCore
import HearthEngine
import HearthAuth
import HearthFunctions
import HearthOutbox
import Hummingbird

/// The functions for admins and the console:
/// - `GET /.hearth/functions`: each function (its trigger, where it runs, its process, what
///   waits for it and what was dropped) and the latest delivery attempts and scheduled runs;
/// - `GET /.hearth/functions/logs?function=<name>`: the latest lines its process printed;
/// - `GET /.hearth/functions/dead-letters[?function=<name>]`: the events given up on, with the
///   last failure;
/// - `POST /.hearth/functions/dead-letters/replay` and `/discard` with `{"source", "sequence"}`:
///   put one back at the end of its function's queue, or remove it for good.
///
/// Without functions (`hearth serve` without `--functions`) the list is empty.
struct FunctionsAdminResponder: Sendable {
    static let path = "/.hearth/functions"
    static let logsPath = "/.hearth/functions/logs"
    static let deadLettersPath = "/.hearth/functions/dead-letters"
    static let replayPath = "/.hearth/functions/dead-letters/replay"
    static let discardPath = "/.hearth/functions/dead-letters/discard"
    static let paths = [path, logsPath, deadLettersPath, replayPath, discardPath]

    let functions: FunctionsService?
    let admin: AdminCredential

    struct Listing: Encodable {
        struct Function: Encodable {
            var name: String
            /// `event`, `callable`, `https` or `schedule`.
            var kind: String
            /// The event type, or the schedule, or the HTTP path.
            var trigger: String
            var ref: String?
            var instance: String?
            /// `process` (its own, in `process`), `webhook` (an endpoint elsewhere) or `server`
            /// (Swift, in the server's process).
            var runsIn: String
            /// A process's ID and how often it was started, for functions that run in one.
            var process: Process?
            /// Waiting events by source.
            var waiting: [String: Int]
            var dropped: [String: Int]
        }

        struct Process: Encodable {
            var pid: Int32?
            var starts: Int
            var port: Int
        }

        var functions: [Function]
        var recent: [FunctionActivity.Entry]
    }

    struct DeadLetterListing: Encodable {
        struct Letter: Encodable {
            var source: String
            var sequence: Int64
            var function: String
            var id: String
            /// How many times it was tried, the last failure included.
            var attempts: Int
            var failedAt: Int64
            var reason: String
            var event: String
        }

        var deadLetters: [Letter]
    }

    /// Failures are thrown, and written by the namespace's ``RealtimeDatabaseErrors``.
    func respond(to request: Request) async throws -> Response {
        let parameters = try await admin.admit(request, methods: [.get, .post])
        switch (request.uri.path, request.method) {
        case (Self.path, .get): return JSONResponse.encoding(list())
        case (Self.logsPath, .get):
            guard let name = parameters["function"] else { throw HearthError(.invalidData, "Name the function: ?function=<name>.") }
            return JSONResponse.encoding(["lines": functions?.activity.recentLines(function: name) ?? []])
        case (Self.deadLettersPath, .get): return JSONResponse.encoding(try await deadLetters(function: parameters["function"]))
        case (Self.replayPath, .post), (Self.discardPath, .post):
            let (source, sequence) = try await Self.target(of: request)
            guard let functions else { throw HearthError(.notFound, "No such dead letter.") }
            if request.uri.path == Self.replayPath {
                guard let replayed = try await functions.replay(deadLetter: sequence, from: source) else {
                    throw HearthError(.notFound, "No such dead letter.")
                }
                return JSONResponse.encoding(["sequence": replayed.sequence])
            }
            guard let outbox = functions.outboxes[source], try await outbox.discard(deadLetter: sequence) else {
                throw HearthError(.notFound, "No such dead letter.")
            }
            return JSONResponse.encoding(["discarded": sequence])
        default:
            throw HearthError(.invalidData, "Invalid method for \(request.uri.path): \(request.method.rawValue).")
        }
    }

    private func list() -> Listing {
        guard let functions else { return Listing(functions: [], recent: []) }
        let processes = Dictionary(uniqueKeysWithValues: functions.processes.map { ($0.function, $0) })
        var waiting: [String: [String: Int]] = [:]
        for (queue, count) in functions.backlog.waiting { waiting[queue.function, default: [:]][queue.source] = count }
        var dropped: [String: [String: Int]] = [:]
        for (queue, count) in functions.backlog.dropped { dropped[queue.function, default: [:]][queue.source] = count }
        func entry(
            _ name: String, kind: String, trigger: String, ref: String? = nil, instance: String? = nil, invoker: (any EventInvoker)? = nil,
            runsIn: String? = nil
        ) -> Listing.Function {
            Listing.Function(
                name: name, kind: kind, trigger: trigger, ref: ref, instance: instance,
                runsIn: processes[name] != nil ? "process" : runsIn ?? (invoker is SwiftFunctionInvoker ? "server" : "webhook"),
                process: processes[name].map { Listing.Process(pid: $0.processIdentifier, starts: $0.startCount, port: $0.port) },
                waiting: waiting[name] ?? [:], dropped: dropped[name] ?? [:])
        }
        var listed: [Listing.Function] = functions.functions.map { function in
            switch function.trigger {
            case .database(let trigger):
                entry(function.name, kind: "event", trigger: trigger.change.eventType, ref: trigger.ref.description,
                      instance: trigger.instance.description, invoker: function.invoker)
            case .storage(let trigger):
                entry(function.name, kind: "event", trigger: trigger.change.eventType, instance: trigger.bucket, invoker: function.invoker)
            case .account(let trigger):
                entry(function.name, kind: "event", trigger: trigger.change.eventType, invoker: function.invoker)
            }
        }
        listed += (functions.blocking?.functions.values ?? [:].values).map { function in
            var runsIn = "webhook"
            if case .swift = function.runtime { runsIn = "server" }
            return entry(function.name, kind: "blocking", trigger: function.trigger.kind.rawValue, runsIn: runsIn)
        }
        listed += functions.httpFunctions.values.map { function in
            entry(function.name, kind: function.isCallable ? "callable" : "https", trigger: "/\(function.region)/\(function.name)")
        }
        listed += (functions.scheduler?.functions ?? []).map {
            entry($0.name, kind: "schedule", trigger: $0.schedule.description, runsIn: $0.runsInServer ? "server" : nil)
        }
        return Listing(functions: listed.sorted { $0.name < $1.name }, recent: functions.activity.recent())
    }

    private func deadLetters(function: String?) async throws -> DeadLetterListing {
        var letters: [DeadLetterListing.Letter] = []
        guard let functions else { return DeadLetterListing(deadLetters: []) }
        for (source, outbox) in functions.outboxes.sorted(by: { $0.key < $1.key }) {
            for letter in try await outbox.deadLetters(for: function, limit: 500) {
                // Shown as the function would get it (an unreadable one as it is kept).
                let event = (try? functions.envelope.structured(letter.event)) ?? letter.event.body
                letters.append(DeadLetterListing.Letter(
                    source: source, sequence: letter.sequence, function: letter.event.subscriber, id: letter.event.id,
                    // The outbox counts the failures recorded before the one that gave up on it.
                    attempts: letter.attempts, failedAt: letter.failedAt, reason: letter.reason,
                    event: String(decoding: event, as: UTF8.self)))
            }
        }
        return DeadLetterListing(deadLetters: letters)
    }

    static func target(of request: Request) async throws(HearthError) -> (source: String, sequence: Int64) {
        let bytes: ByteBuffer
        do {
            bytes = try await request.body.collect(upTo: 16 * 1024)
        } catch {
            throw HearthError(.invalidData, "The request body is too large.")
        }
        let node = try JSONParser.parseDocument(Array(buffer: bytes))
        guard case .string(let source) = node.child(ChildKey("source")), let sequence = node.child(ChildKey("sequence")).integerValue else {
            throw HearthError(.invalidData, "The body must name \"source\" (a string) and \"sequence\" (a number).")
        }
        return (source, sequence)
    }
}
