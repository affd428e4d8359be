// The store's deadline moves with the server's answers (Deadline in PostgresStore.swift): work
// whose statements are each answered in time runs to its end, however long it takes in all;
// work that hears nothing for the timeout loses. No server is needed: the work here notes its
// "answers" itself. The margins are wide (a 1.5 s timeout against 0.1 s between answers), so a
// busy machine does not turn a pass into a failure.

import Testing

@testable import CirrusPostgres

@Suite struct DeadlineTests {
    static let timeout = Duration.milliseconds(1500)

    static func timedOut() -> PostgresStoreError {
        PostgresStoreError(.networkFailure, "no answer within the test's timeout")
    }

    @Test func workAnsweredThroughoutRunsPastTheTimeout() async throws {
        let start = ContinuousClock.now
        let answers = try await Deadline.race(Self.timeout) {
            // 30 answers 0.1 s apart: twice the timeout in all.
            for _ in 0..<30 {
                try await Task.sleep(for: .milliseconds(100))
                Deadline.answered()
            }
            return 30
        } onTimeout: {
            Self.timedOut()
        }
        #expect(answers == 30)
        #expect(ContinuousClock.now - start >= .seconds(3))
    }

    @Test func workThatStopsBeingAnsweredLosesATimeoutAfterItsLastAnswer() async throws {
        let start = ContinuousClock.now
        await #expect(throws: PostgresStoreError.self) {
            try await Deadline.race(Self.timeout) {
                // Answered for 1 s, then silent for 6 s.
                for _ in 0..<10 {
                    try await Task.sleep(for: .milliseconds(100))
                    Deadline.answered()
                }
                try await Task.sleep(for: .seconds(6))
                return 0
            } onTimeout: {
                Self.timedOut()
            }
        }
        let took = ContinuousClock.now - start
        // At the last answer (≥ 1 s) plus the timeout, not at the first deadline (1.5 s) nor
        // at the work's end (7 s).
        #expect(took >= .milliseconds(2500))
        #expect(took < .seconds(6))
    }

    @Test func answersOutsideADeadlineAreIgnored() {
        #expect(Deadline.progress == nil)
        Deadline.answered()
        #expect(Deadline.progress == nil)
    }
}
