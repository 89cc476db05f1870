import HearthClient

/// Watches `query`'s value until the task is cancelled or `owner` goes away: each value goes
/// to `show`; a failure goes to `fail`, in words. The listening loop every ViewModel shares.
@MainActor
func watchValue<Owner: AnyObject & Sendable>(
    _ query: DatabaseQuery, for owner: Owner, show: @escaping @MainActor (Owner, DataSnapshot) async throws -> Void,
    fail: @escaping @MainActor (Owner, String) -> Void
) -> Task<Void, Never> {
    Task { [weak owner] in
        do {
            for try await event in query.observe(.value) {
                guard let owner else { return }
                try await show(owner, event.snapshot)
            }
        } catch is CancellationError {
        } catch {
            if let owner { fail(owner, SocialError.words(for: error)) }
        }
    }
}
