import ServiceLifecycle

/// Closes the databases nobody used for ``DatabaseLimits/idleAfter`` and nothing holds (see
/// ``DatabaseOperations/closeIdleDatabases(unusedFor:)``), every `interval`, so the databases
/// a server keeps open are the ones in use.
struct IdleDatabaseService: Service {
    let operations: DatabaseOperations
    let interval: Duration

    func run() async throws {
        await repeatUntilShutdown(every: interval) { [operations] in
            operations.closeIdleDatabases(unusedFor: operations.limits.idleAfter)
        }
    }
}
