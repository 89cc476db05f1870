import Foundation
import HearthTesting
import Testing
@testable import HearthAuth

/// What keeps one client from harming others' accounts or the server: failed sign-ins hurt the
/// guessing address, never the account's owner, and sign-ups are limited per address.
/// Time is an injected clock: nothing here waits for it to pass.
@Suite struct AccountAbuseTests {
    static let password = AuthServiceTests.password

    // MARK: - Failed sign-ins

    @Test func failuresFromRotatingAddressesDoNotLockTheOwnerOut() async throws {
        try await AuthServiceTests.withService { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            // The issue's attack: 12 wrong passwords, each from another address.
            for attempt in 0..<12 {
                await #expect(throws: AuthError.invalidLoginCredentials) {
                    try await service.signIn(email: "alice@example.com", password: "wrong", client: "198.51.100.\(attempt)")
                }
            }
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "203.0.113.7")
        }
    }

    @Test func anAccountUnderAttackIsSlowedPerAddressButStaysOpen() async throws {
        var policy = AuthService.Policy()
        policy.failuresPerAccountFromAllAddresses = 20
        try await AuthServiceTests.withService(policy: policy) { service, clock in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            // Before the attack, an address that mistyped once may still try again.
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: "typo", client: "203.0.113.50")
            }
            // Many more failures than the account's limit, from many addresses (two each).
            for attempt in 0..<30 {
                await #expect(throws: AuthError.self) {
                    try await service.signIn(email: "alice@example.com", password: "guess\(attempt)", client: "198.51.100.\(attempt % 15)")
                }
            }
            // Under attack, an address that has failed at the account is stopped there, even
            // with the right password…
            await #expect(throws: AuthError.tooManyAttempts) {
                try await service.signIn(email: "alice@example.com", password: "guess", client: "198.51.100.3")
            }
            await #expect(throws: AuthError.tooManyAttempts) {
                try await service.signIn(email: "alice@example.com", password: Self.password, client: "203.0.113.50")
            }
            // …a fresh address gets one guess…
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: "guess", client: "198.51.100.200")
            }
            await #expect(throws: AuthError.tooManyAttempts) {
                try await service.signIn(email: "alice@example.com", password: "guess", client: "198.51.100.200")
            }
            // …and the owner, from an address that has not failed, signs in, again and again.
            for _ in 0..<3 {
                _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "203.0.113.7")
            }
            // Other accounts are not slowed.
            _ = try await service.signUp(email: "bob@example.com", password: Self.password)
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "bob@example.com", password: "typo", client: "198.51.100.3")
            }
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "bob@example.com", password: "typo", client: "198.51.100.3")
            }
            // The attack's window passes: the account is itself again.
            clock.advance(by: policy.failureWindow)
            await #expect(throws: AuthError.invalidLoginCredentials) {
                try await service.signIn(email: "alice@example.com", password: "typo", client: "203.0.113.50")
            }
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "203.0.113.50")
        }
    }

    @Test func oneAddressGuessingAtManyAccountsIsThrottled() async throws {
        var policy = AuthService.Policy()
        policy.failuresPerAddress = 5
        try await AuthServiceTests.withService(policy: policy) { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            for index in 0..<5 {
                await #expect(throws: AuthError.invalidLoginCredentials) {
                    try await service.signIn(email: "user\(index)@example.com", password: "guess", client: "198.51.100.9")
                }
            }
            await #expect(throws: AuthError.tooManyAttempts) {
                try await service.signIn(email: "alice@example.com", password: Self.password, client: "198.51.100.9")
            }
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "198.51.100.10")
        }
    }

    @Test func addressesOfOneIPv6NetworkCountAsOne() async throws {
        var policy = AuthService.Policy()
        policy.failuresPerAccount = 3
        try await AuthServiceTests.withService(policy: policy) { service, _ in
            _ = try await service.signUp(email: "alice@example.com", password: Self.password)
            for host in 1...3 {
                await #expect(throws: AuthError.invalidLoginCredentials) {
                    try await service.signIn(email: "alice@example.com", password: "guess", client: "2001:db8:7:7::\(host)")
                }
            }
            await #expect(throws: AuthError.tooManyAttempts) {
                try await service.signIn(email: "alice@example.com", password: "guess", client: "2001:db8:7:7::99")
            }
            _ = try await service.signIn(email: "alice@example.com", password: Self.password, client: "2001:db8:7:8::1")
        }
    }

    // MARK: - Sign-ups

    @Test func signUpsFromOneAddressAreLimitedAfterABurst() async throws {
        var policy = AuthService.Policy()
        policy.signUpBurstPerAddress = 3
        policy.signUpsPerAddressPerHour = 2
        try await AuthServiceTests.withService(policy: policy) { service, clock in
            // Anonymous and email sign-ups draw on the same allowance.
            _ = try await service.signUp(email: nil, password: nil, client: "198.51.100.1")
            _ = try await service.signUp(email: "a@example.com", password: Self.password, client: "198.51.100.1")
            _ = try await service.signUp(email: nil, password: nil, client: "198.51.100.1")
            for (email, password) in [(nil, nil), ("b@example.com", Self.password)] as [(String?, String?)] {
                let refused = await #expect(throws: AuthError.self) {
                    try await service.signUp(email: email, password: password, client: "198.51.100.1")
                }
                #expect(refused?.code == "TOO_MANY_ATTEMPTS_TRY_LATER")
            }
            #expect(try await service.store.count() == 3)
            // Bad input is refused before it counts.
            await #expect(throws: AuthError.self) { try await service.signUp(email: "x", password: Self.password, client: "198.51.100.2") }
            // Other addresses, and admins, are not affected.
            for _ in 0..<3 { _ = try await service.signUp(email: nil, password: nil, client: "198.51.100.2") }
            for _ in 0..<5 { _ = try await service.signUp(email: nil, password: nil, client: nil) }
            // Half an hour later (two per hour), one more.
            clock.advance(by: 30 * 60 * 1000)
            _ = try await service.signUp(email: "b@example.com", password: Self.password, client: "198.51.100.1")
            await #expect(throws: AuthError.tooManyRequests) { try await service.signUp(email: nil, password: nil, client: "198.51.100.1") }
        }
    }

    @Test func theIssuesFloodOfAnonymousAccountsIsStoppedAtTheBurst() async throws {
        try await AuthServiceTests.withService { service, _ in
            var made = 0
            var refused = 0
            for _ in 0..<200 {
                do {
                    _ = try await service.signUp(email: nil, password: nil, client: "198.51.100.66")
                    made += 1
                } catch {
                    #expect(error as? AuthError == .tooManyRequests)
                    refused += 1
                }
            }
            #expect(made == AuthService.Policy().signUpBurstPerAddress)
            #expect(refused == 200 - made)
        }
    }

    @Test func emulatorModeDoesNotLimitSignUps() async throws {
        var policy = AuthService.Policy()
        policy.emulator = true
        policy.signUpBurstPerAddress = 1
        try await AuthServiceTests.withService(policy: policy) { service, _ in
            for _ in 0..<5 { _ = try await service.signUp(email: nil, password: nil, client: "198.51.100.1") }
        }
    }

    // MARK: - Hashing

    @Test func passwordHashingGoesThroughTheGate() async throws {
        var policy = AuthService.Policy()
        policy.maxConcurrentHashes = 3
        policy.maxWaitingHashes = 8
        try await AuthServiceTests.withService(policy: policy) { service, _ in
            #expect(service.hashGate.maxRunning == 3 && service.hashGate.maxWaiting == 8)
            // Sign-ups at once all get their turn: two run (one place is kept for sign-ins),
            // and the queue holds the rest.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<10 {
                    group.addTask { _ = try await service.signUp(email: "user\(index)@example.com", password: Self.password) }
                }
                try await group.waitForAll()
            }
            #expect(try await service.store.count() == 10)
            #expect(service.hashGate.occupancy == .init(running: 0, waiting: 0))
        }
        // By default, one hash per core.
        #expect(AuthService.Policy().maxConcurrentHashes >= 1)
    }
}
