import ServiceLifecycle

/// Closes the databases nobody used for ``DatabaseLimits/idleAfter`` and nothing holds (see
/// `DatabaseOperations.closeIdleDatabases(unusedFor:)`), every `interval`, so the databases
/// a server keeps open are the ones in use.
public struct IdleDatabaseService: Service {
    let operations: DatabaseOperations
    let interval: Duration

    /// Closes idle databases every `interval` until the service group shuts down.
    public func run() async throws {
        await repeatUntilShutdown(every: interval) { [operations] in
            operations.closeIdleDatabases(unusedFor: operations.limits.idleAfter)
        }
    }

    /// Checks `operations`' databases every `interval`.
    public init(operations: DatabaseOperations, interval: Duration) {
        self.operations = operations
        self.interval = interval
    }
}
