import HearthCore
import HearthRules
import HearthStore

extension DatabaseOperations {
    /// An operation the rules simulator judges.
    public enum SimulatedOperation: Sendable {
        /// A read, plain or of a query (which `.read` rules see as the `query` variable).
        case read(Query?)
        case set(JSONParser.Parsed)
        /// A multi-path update: relative paths under the simulated location.
        case update([(path: Path, value: JSONParser.Parsed)])
    }

    /// The rules simulator's verdict: whether the operation would be allowed, why not, and
    /// every rule evaluated on the way.
    public struct Simulation: Sendable {
        /// True when the rules allow the simulated request.
        public var allowed: Bool
        /// Why it was refused, in words; nil when allowed.
        public var reason: String?
        /// Every rule evaluated, in order, with its result.
        public var trace: [RuleTrace.Step]
    }

    /// Judges `operation` at `path` as the rules would judge a request by `auth` now, against
    /// the current data, without changing anything: the same rule functions, the same
    /// resolution of server values and the same clock as a real read or write, with a
    /// ``HearthRules/RuleTrace`` to see which rules decided.
    /// - Parameter rulesText: a draft to judge by instead of the deployed rules.
    /// - Throws: `invalidData` for a draft with an error (`Line L, column C: …`, as a deploy
    ///   says) or for a write the database would refuse as data, before any rule.
    public func simulate(
        _ operation: SimulatedOperation, at path: Path, on database: Database, auth: Node, rulesText: String?
    ) throws -> Simulation {
        let rules: SecurityRules
        if let rulesText {
            do throws(RulesError) {
                rules = try SecurityRules(parsing: rulesText)
            } catch {
                throw HearthError(.invalidData, "Line \(error.position.line), column \(error.position.column): \(error.message)")
            }
        } else {
            rules = try self.rules.rules(for: database)
        }
        let now = clock()
        let before = database.current.state
        let requester = SecurityRules.Requester(auth: auth, now: now)
        let trace = RuleTrace()
        let write: Write
        switch operation {
        case .read(let query):
            let grant = rules.read(path, by: requester, root: before.root, query: RuleQuery(query), trace: trace)
            return Simulation(
                allowed: grant != nil, reason: grant == nil ? "no .read rule allows reading \(path)" : nil, trace: trace.steps)
        case .set(let value):
            write = .set(path, value)
        case .update(let entries):
            guard !entries.isEmpty else { throw HearthError(.invalidData, "An update needs at least one child path.") }
            write = .update(path, entries)
        }
        // As the database's writer does: server values resolved at `now`, then the rules
        // judge every changed path against the combined result.
        let (after, resolved) = try before.applying(write, now: now)
        do {
            try rules.authorizeWrite(
                changing: resolved.changedPaths, by: requester, before: before.root, after: after.root, trace: trace)
            return Simulation(allowed: true, reason: nil, trace: trace.steps)
        } catch {
            return Simulation(allowed: false, reason: error.description, trace: trace.steps)
        }
    }

    /// The `auth` variable of a user signed in with `provider` (such as `password`,
    /// `google.com`, `anonymous`) and the extra token `claims`, as an ID token of theirs gives it.
    public static func simulatedAuth(uid: String, provider: String?, claims: Node) -> Node {
        var token = claims.children == nil ? Node.null : claims
        token = token.setting(.string(uid), at: Path(keys: [ChildKey("sub")]))
        token = token.setting(.string(uid), at: Path(keys: [ChildKey("user_id")]))
        if let provider, !provider.isEmpty {
            token = token.setting(.string(provider), at: Path(keys: [ChildKey("firebase"), ChildKey("sign_in_provider")]))
        }
        return SecurityRules.authVariable(claims: token)
    }
}
