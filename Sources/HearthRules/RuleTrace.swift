import HearthCore

/// The rules evaluated while deciding one read or write, in evaluation order: what the
/// console's rules simulator shows. Normal enforcement passes no trace, so it pays nothing
/// for it; the simulator passes one to the same ``SecurityRules`` functions, so what it shows
/// is what enforcement decides.
///
/// Not thread-safe: one trace belongs to one synchronous evaluation.
public final class RuleTrace {
    /// One rule evaluated.
    public struct Step: Sendable, Equatable {
        public enum Kind: String, Sendable {
            case read = ".read"
            case write = ".write"
            case validate = ".validate"
        }

        public let kind: Kind
        /// The data location the rule was evaluated at (its `data`), wildcards bound.
        public let path: Path
        /// The expression as written.
        public let expression: String
        /// Where the rule's value starts in the rules text (comments counted).
        public let position: SourcePosition
        /// True when the expression evaluated to the boolean `true`.
        public let result: Bool
        /// Why the expression is false when it did not evaluate to a boolean: its run-time error.
        public let error: String?

        public init(kind: Kind, path: Path, expression: String, position: SourcePosition, result: Bool, error: String? = nil) {
            self.kind = kind
            self.path = path
            self.expression = expression
            self.position = position
            self.result = result
            self.error = error
        }
    }

    /// The steps so far, in evaluation order.
    public private(set) var steps: [Step] = []

    public init() {}

    /// Evaluates `rule` at `context` and records the outcome.
    func evaluate(_ rule: CompiledRule.Rule, _ kind: Step.Kind, in context: RuleContext) -> Bool {
        var failure: String?
        var result = false
        do throws(RuleEvaluationError) {
            let value = try rule.expression.value(in: context)
            result = value == .bool(true)
            if case .bool = value {} else { failure = "the rule gave a \(value.typeName), not a boolean" }
        } catch {
            let at = RuleExpression.position(ofOffset: error.offset, quoteAt: rule.source.position)
            failure = "\(error.message) (line \(at.line), column \(at.column))"
        }
        steps.append(Step(
            kind: kind, path: context.location, expression: rule.source.source, position: rule.source.position,
            result: result, error: failure))
        return result
    }
}

extension CompiledRule.Rule {
    /// The rule's verdict at `context`, recorded in `trace` when there is one.
    @inline(__always)
    func passes(_ kind: RuleTrace.Step.Kind, in context: RuleContext, trace: RuleTrace?) -> Bool {
        guard let trace else { return expression.evaluate(in: context) }
        return trace.evaluate(self, kind, in: context)
    }
}
