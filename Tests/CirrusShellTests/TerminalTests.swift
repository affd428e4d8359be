// Terminal test: drives the real `cirrus repl` on a pseudo-terminal through tmux (send keys, read
// the screen) to prove what transcripts cannot — the prompt, libedit's line editing (Ctrl-A,
// history with Up), tab completion of commands and record types, persistent history, and that
// `quit` ends the process. Skipped when tmux is not installed or the `cirrus` binary is not built.
//
// Each run uses its own tmux server (-L) and its own XDG_CACHE_HOME, so it never touches the
// user's tmux sessions, demo database or history.

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The `cirrus` executable next to the test bundle in the build products directory.
func cirrusBinary() -> String? {
    var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<3 {
        let p = dir.appendingPathComponent("cirrus").path
        if FileManager.default.isExecutableFile(atPath: p) { return p }
        dir = dir.deletingLastPathComponent()
    }
    return nil
}

func tmuxPath() -> String? {
    ["/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
}

/// One tmux server with one window running a command.
struct Tmux {
    let tmux: String
    let socket: String

    /// Runs a tmux command through posix_spawn + waitpid (not Foundation's Process: the tmux
    /// server daemon that the first command starts inherits Process's descriptors, and Process
    /// then never sees its client exit). Output, when `capture`, goes through a temporary file.
    @discardableResult
    func run(_ args: [String], capture: Bool = true) throws -> String {
        let outPath = NSTemporaryDirectory() + "cirrus-tmux-out-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        let quoted = ([tmux, "-L", socket] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            .joined(separator: " ")
        let shell = quoted + " </dev/null >" + (capture ? "'\(outPath)'" : "/dev/null") + " 2>/dev/null"
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(shell), nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { return "" }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return capture ? ((try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "") : ""
    }

    func screen() throws -> String { try run(["capture-pane", "-p", "-t", "repl"]) }

    /// Types literal text.
    func type(_ text: String) throws { try run(["send-keys", "-t", "repl", "-l", text]) }

    /// Presses named keys (Enter, Tab, Up, C-a).
    func press(_ keys: String...) throws { try run(["send-keys", "-t", "repl"] + keys) }

    /// Waits until the screen satisfies `condition` (10 s at most); returns the last screen.
    @discardableResult
    func waitFor(_ what: String, _ condition: (String) -> Bool) throws -> String {
        var s = ""
        for _ in 0..<200 {
            s = try screen()
            if condition(s) { return s }
            usleep(50_000)
        }
        Issue.record("timed out waiting for \(what); screen:\n\(s)")
        return s
    }

    @discardableResult
    func waitFor(_ text: String) throws -> String { try waitFor("\"\(text)\"") { $0.contains(text) } }
}

@Suite("cirrus repl on a terminal (tmux)", .serialized)
struct TerminalTests {
    @Test(
        .enabled(if: tmuxPath() != nil && cirrusBinary() != nil, "needs tmux and a built cirrus"),
        .timeLimit(.minutes(1)))
    func promptLineEditingCompletionAndHistory() throws {
        guard let tmuxBin = tmuxPath(), let cirrus = cirrusBinary() else { return }
        let cache = NSTemporaryDirectory() + "cirrus-tmux-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        let t = Tmux(tmux: tmuxBin, socket: "cirrus-test-\(getpid())")
        defer {
            _ = try? t.run(["kill-server"], capture: false)
            try? FileManager.default.removeItem(atPath: cache)
        }
        let command =
            "env XDG_CACHE_HOME='\(cache)' TERM=xterm '\(cirrus)' repl --demo-places 300; echo EXITED $?; sleep 30"
        try t.run(["new-session", "-d", "-s", "repl", "-x", "120", "-y", "40", command], capture: false)

        // The banner and the prompt. (capture-pane drops trailing blanks: no space after `>`.)
        try t.waitFor("cirrus:public>")
        #expect(try t.screen().contains("type `help` for commands"))

        // Tab completes a command, then a record type.
        try t.type("us")
        try t.press("Tab")
        try t.waitFor("cirrus:public> use")
        try t.type(" Pla")  // libedit inserts the completion without a trailing space
        try t.press("Tab")
        try t.waitFor("cirrus:public> use Place")
        try t.press("Enter")
        try t.waitFor("cirrus:public Place>")

        // Ctrl-A moves to the start of the line: fix a missing first letter.
        try t.type("uery where name == 'Louvre' keys name, kind")
        try t.press("C-a")
        try t.type("q")
        try t.press("Enter")
        // The count line starts a line (the banner's "built 371 records" must not match).
        var s = try t.waitFor("\n1 record")
        #expect(s.contains("louvre"), "screen:\n\(s)")
        #expect(s.contains("museum"))

        // Ctrl-C does not end the session (the final `EXITED 0` shows it lived on).
        try t.press("C-c")

        // A rejected predicate: the caret under the offending part, then the prompt again.
        try t.type("check name CONTAINS[c] 'x'")
        try t.press("Enter")
        s = try t.waitFor("error: Predicate comparison options")
        #expect(s.contains("^^^^^^^^^^^"))

        // Up recalls the query from history (two lines back).
        try t.press("Up")
        try t.press("Up")
        try t.waitFor("> query where name == 'Louvre' keys name, kind")
        try t.press("Enter")
        s = try t.waitFor("query line run twice") { $0.components(separatedBy: "louvre").count - 1 >= 2 }

        // quit ends the process with status 0; the history file holds what was typed.
        try t.type("quit")
        try t.press("Enter")
        try t.waitFor("EXITED 0")
        // libedit's history file escapes blanks (`\040`).
        let history = ((try? String(contentsOfFile: cache + "/cirrus/history", encoding: .utf8)) ?? "")
            .replacingOccurrences(of: "\\040", with: " ")
        #expect(history.contains("use Place"), "history: \(history)")
        #expect(history.contains("query where name == 'Louvre'"))
    }
}
