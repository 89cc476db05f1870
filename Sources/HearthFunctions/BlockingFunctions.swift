import AsyncHTTPClient
import Foundation
import HearthAuth
import NIOCore
import NIOHTTP1

/// The server's blocking functions, one at most per event (as in Firebase), as the account
/// service asks them (``HearthAuth/AccountBlockingHooks``). The time limit is the account
/// service's (``HearthAuth/AuthService/Policy/blockingFunctionTimeout``); each call is also
/// recorded in ``FunctionActivity`` for the console.
public struct BlockingFunctions: AccountBlockingHooks {
    public let functions: [AccountBlockingEvent.Kind: BlockingFunction]
    let projectID: String
    let client: HTTPClient
    let activity: FunctionActivity
    let now: @Sendable () -> Int64
    /// The longest answer read from a function.
    static let maxAnswerBytes = 64 * 1024

    /// - Throws: ``FunctionError`` when two functions block the same event.
    public init(
        _ functions: [BlockingFunction], projectID: String, client: HTTPClient, activity: FunctionActivity,
        now: @escaping @Sendable () -> Int64
    ) throws {
        var byKind: [AccountBlockingEvent.Kind: BlockingFunction] = [:]
        for function in functions {
            if let other = byKind[function.trigger.kind] {
                throw FunctionError.invalidDefinition(
                    function: function.name, "\(other.name) already blocks \(function.trigger.kind.rawValue): one function per event")
            }
            byKind[function.trigger.kind] = function
        }
        self.functions = byKind
        self.projectID = projectID
        self.client = client
        self.activity = activity
        self.now = now
    }

    public func handles(_ kind: AccountBlockingEvent.Kind) -> Bool { functions[kind] != nil }

    public func run(_ event: AccountBlockingEvent) async throws(AuthError) -> AccountBlockingResponse {
        guard let function = functions[event.kind] else { return AccountBlockingResponse() }
        let started = ContinuousClock.now
        let outcome: Result<AccountBlockingResponse, AuthError>
        do throws(AuthError) {
            outcome = .success(try await call(function, event))
        } catch {
            outcome = .failure(error)
        }
        var reason: String?
        if case .failure(let error) = outcome { reason = error.detail ?? error.code }
        activity.add(FunctionActivity.Entry(
            function: function.name, source: "accounts", eventID: event.id, result: reason == nil ? "ok" : "refused", reason: reason,
            attempt: 1, durationMilliseconds: (ContinuousClock.now - started).milliseconds, time: event.time))
        return try outcome.get()
    }

    private func call(_ function: BlockingFunction, _ event: AccountBlockingEvent) async throws(AuthError) -> AccountBlockingResponse {
        switch function.runtime {
        case .swift(let handler):
            do {
                return try await handler(event)
            } catch let error as AuthError {
                throw AccountBlockingResponse.refusal(error.message)
            } catch {
                throw AccountBlockingResponse.refusal("\(error)")
            }
        case .http(let url, let signer):
            let token = BlockingEventToken.make(event, trigger: function.trigger, projectID: projectID, audience: url)
            let body = Array(#"{"data":{"jwt":"\#(token)"}}"#.utf8)
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "User-Agent", value: "Hearth-Auth")
            for (name, value) in signer?.headers(id: event.id, timestamp: now() / 1000, body: body) ?? [] {
                request.headers.add(name: name, value: value)
            }
            request.body = .bytes(ByteBuffer(bytes: body))
            let status: Int
            let answer: ByteBuffer
            do {
                // The account service's time limit cancels this call; the deadline is a backstop.
                let response = try await client.execute(request, timeout: .seconds(60))
                status = Int(response.status.code)
                answer = try await response.body.collect(upTo: Self.maxAnswerBytes)
            } catch {
                throw AccountBlockingResponse.refusal("Failed to make request to the blocking function \(function.name): \(error)")
            }
            return try BlockingFunctionAnswer.parse(status: status, body: Array(buffer: answer))
        }
    }
}
