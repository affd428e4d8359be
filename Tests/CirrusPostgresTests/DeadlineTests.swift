// The store's deadline moves with the server's answers (Deadline in PostgresStore.swift): work
// whose statements are each answered in time runs to its end, however long it takes in all;
// work that hears nothing for the timeout loses. No server is needed: the "answers" come from an
// OS thread, every 0.1 s against a 2 s timeout, so that a test pool busy with other suites
// (which delays the deadline's own task, seen at 19 s) can only make the deadline fire later,
// never turn an answered request into a lost one; and the deadline counts from when the work
// begins, so a work task started late (seen under CI's load) loses no time either.

import CirrusFacade
import Foundation
import Testing

@testable import CirrusPostgres

@Suite struct DeadlineTests {
    static let timeout = Duration.milliseconds(2000)

    static func timedOut() -> CirrusError {
        CirrusError(.networkFailure, "no answer within the test's timeout")
    }

    /// `count` answers 0.1 s apart, noted on the current deadline from an OS thread.
    static func answers(_ count: Int) async {
        let progress = Deadline.progress
        await withCheckedContinuation { (k: CheckedContinuation<Void, Never>) in
            Thread {
                for _ in 0..<count {
                    Thread.sleep(forTimeInterval: 0.1)
                    progress?.touch()
                }
                k.resume()
            }.start()
        }
    }

    @Test func workAnsweredThroughoutRunsPastTheTimeout() async throws {
        let start = ContinuousClock.now
        let answered = try await Deadline.race(Self.timeout) {
            #expect(Deadline.progress != nil)
            await Self.answers(40)  // twice the timeout in all
            return 40
        } onTimeout: {
            Self.timedOut()
        }
        #expect(answered == 40)
        #expect(ContinuousClock.now - start >= .seconds(4))
    }

    @Test func workThatStopsBeingAnsweredLosesATimeoutAfterItsLastAnswer() async throws {
        let start = ContinuousClock.now
        await #expect(throws: CirrusError.self) {
            try await Deadline.race(Self.timeout) {
                await Self.answers(10)  // answered for 1 s, then silent
                try await Task.sleep(for: .seconds(60))
                return 0
            } onTimeout: {
                Self.timedOut()
            }
        }
        // After the last answer (≥ 1 s) plus the timeout, not at the first deadline (2 s).
        #expect(ContinuousClock.now - start >= .milliseconds(3000))
    }

    @Test func answersOutsideADeadlineAreIgnored() {
        #expect(Deadline.progress == nil)
        Deadline.answered()
        #expect(Deadline.progress == nil)
    }
}
