import HearthAuth

/// A function asked before accounts are made or sign in (Firebase's `beforeUserCreated` and
/// `beforeUserSignedIn`), waited for by the sign-up or sign-in (see ``BlockingFunctions``).
public struct BlockingFunction: Sendable {
    /// Where it runs.
    public enum Runtime: Sendable {
        /// Called over HTTP with Firebase's request (`{"data": {"jwt": …}}`): a function's own
        /// process (unsigned: loopback only), or a webhook (signed by `signer`).
        case http(url: String, signer: WebhookSigner?)
        /// Called in the server's process.
        case swift(@Sendable (AccountBlockingEvent) async throws -> AccountBlockingResponse)
    }

    public var name: String
    public var trigger: BlockingTrigger
    public var runtime: Runtime

    public init(name: String, trigger: BlockingTrigger, runtime: Runtime) {
        self.name = name
        self.trigger = trigger
        self.runtime = runtime
    }

    /// A Swift blocking function. Throw ``AuthError`` (or any error) to refuse: the client gets
    /// `BLOCKING_FUNCTION_ERROR_RESPONSE` with its description.
    public static func swift(
        _ kind: AccountBlockingEvent.Kind, name: String, _ handler: @escaping @Sendable (AccountBlockingEvent) async throws -> AccountBlockingResponse
    ) -> BlockingFunction {
        BlockingFunction(name: name, trigger: BlockingTrigger(kind: kind), runtime: .swift(handler))
    }
}
