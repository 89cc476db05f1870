import Testing

/// The recorded official-SDK event scenarios (`Tests/Events/recorded/*.json`) replayed against
/// the sync core in-process: its listeners must report, step by step, the events the official
/// Firebase JS SDK's reported, and its writes end as the SDK's did, with a server scripted
/// from the SDK's own session (``ScriptedServer``).
@Suite("Recorded scenarios replayed against the sync core")
struct ScenarioReplayTests {
    @Test("The core raises the official SDK's events", arguments: RecordedTranscript.names)
    func replay(_ scenario: String) throws {
        let transcript = try RecordedTranscript.load(scenario)
        #expect(transcript.format == 1)
        var client = ReplayedClient(transcript)
        client.play(transcript.setup)
        var actual: [[JSONValue]] = []
        for step in transcript.steps {
            client.play(step.timeline)
            actual.append(client.events)
        }
        #expect(client.problems.isEmpty, "\(client.problems)")
        // Every local write ends as the SDK's did: accepted, or refused.
        let results = (transcript.setup + transcript.steps.flatMap(\.timeline)).filter { $0.kind == .result && $0.isLocal }
        for result in results {
            guard let call = result.of else { continue }
            #expect(client.outcomes[call] == (result.error == nil), "the write of seq \(call): the SDK's \(result.error ?? "ok")")
        }
        let difference = EventComparison.difference(
            expected: transcript.steps.map(\.events), actual: actual, steps: transcript.steps.map(\.step))
        let notes = client.serverNotes.isEmpty ? "" : "\nthe scripted server: " + client.serverNotes.joined(separator: "; ")
        #expect(difference == nil, "\(difference ?? "")\(notes)")
    }
}
