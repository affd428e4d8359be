// The REPL's help table: read from its text (ReplHelp.table), every command named by its syntax's
// first word with a summary and an example, each example dispatched by a session (no "unknown
// command"), and the parser's handling of lines it does not expect.

import Cirrus
import CirrusShell
import Foundation
import Testing

@Suite("REPL help")
struct ReplHelpTests {
    @Test func everyCommandHasItsSyntaxSummaryAndExample() {
        let commands = ReplHelp.commands
        #expect(commands.count == 24)
        #expect(Set(commands.map(\.name)).count == commands.count)
        for c in commands {
            #expect(c.syntax.split(separator: " ").first.map(String.init) == c.name, "\(c.name)")
            #expect(c.summary.hasSuffix(".") || c.summary.hasSuffix(")"), "\(c.name): \(c.summary)")
            #expect(!c.summary.contains("  "), "\(c.name): summary lines joined with one space")
            #expect(c.example.split(separator: " ").first.map(String.init) == c.name, "\(c.name): \(c.example)")
            #expect(ReplHelp.text(for: c.name) == "\(c.syntax)\n  \(c.summary)\n  example: \(c.example)\n")
        }
        for name in ["check", "query", "next", "explain", "save", "quit", "help"] {
            #expect(commands.contains { $0.name == name }, "\(name)")
        }
    }

    @Test func summariesSpanningLinesAreJoinedAndStrayLinesIgnored() {
        let text = """
              indented before any command
            get [TYPE] RECORDNAME
              Print one record
              (in the current zone).
              example: get Place louvre
            vars
              List the bound variables.
            """
        let parsed = ReplHelp.commands(from: text)
        #expect(parsed.map(\.name) == ["get", "vars"])
        #expect(parsed.first?.syntax == "get [TYPE] RECORDNAME")
        #expect(parsed.first?.summary == "Print one record (in the current zone).")
        #expect(parsed.first?.example == "get Place louvre")
        #expect(parsed.last?.summary == "List the bound variables.")
        #expect(parsed.last?.example == "")
    }

    @Test func everyExampleIsACommandTheSessionKnows() async throws {
        let (container, dir) = try await makeDemo()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var session = ReplSession(container: container, identity: .user(DemoDatabase.builder), width: 80)
        for c in ReplHelp.commands where !["quit", "import", "coredata"].contains(c.name) {
            let out = await session.execute(c.example)
            #expect(!out.text.contains("unknown command"), "\(c.example): \(out.text)")
        }
    }
}
