import ServiceLifecycle

/// Closes the databases nobody used for ``DatabaseLimits/idleAfter`` and nothing holds (see
/// ``DatabaseOperations/closeIdleDatabases(unusedFor:)``), every `interval`, so the databases
/// a server keeps open are the ones in use.
public struct IdleDatabaseService: Service {
    public let operations: DatabaseOperations
    public let interval: Duration

    public func run() async throws {
        await repeatUntilShutdown(every: interval) { [operations] in
            operations.closeIdleDatabases(unusedFor: operations.limits.idleAfter)
        }
    }

    public init(operations: DatabaseOperations, interval: Duration) {
        self.operations = operations
        self.interval = interval
    }
}
