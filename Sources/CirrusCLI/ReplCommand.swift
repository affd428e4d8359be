// `cirrus repl`: the interactive shell. Without --db it opens the demo database, building it in
// the per-user cache on first use. On a terminal: prompt, libedit line editing, persistent history
// and tab completion; otherwise commands are read line by line without prompts (scriptable), and
// the exit status is 1 if any command failed.

import ArgumentParser
import Cirrus
import CirrusShell
import Foundation
import RecordModel

struct ReplCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "Interactive shell: check predicates, run and explain queries, edit records.",
        discussion: """
            Without --db, opens the demo database (CloudKit's Artwork/Artist/Note examples and 100,000 \
            places), generated on first use into $XDG_CACHE_HOME/cirrus (or ~/.cache/cirrus). Type \
            `help` at the prompt; docs/repl.md has the full syntax. Reads commands from standard \
            input without prompts when it is not a terminal.

            Examples:
              cirrus repl
              echo "query Place where kind == 'museum' sort -population limit 3" | cirrus repl
              cirrus repl --db places --database private --as _alice
            """)

    @Option(help: ArgumentHelp("The container directory (default: the demo database).", valueName: "DIR"))
    var db: String?

    @Option(help: ArgumentHelp("Generated places in the demo database.", valueName: "N"))
    var demoPlaces: Int = DemoDatabase.defaultPlaceCount

    @OptionGroup var target: DatabaseOptions

    func validate() throws {
        if demoPlaces < 0 || demoPlaces > 2_000_000 { throw ValidationError("--demo-places is from 0 to 2000000") }
    }

    func run() async throws {
        let cache = DemoDatabase.defaultCacheDirectory()
        let interactive = isatty(0) != 0
        var path = db ?? ""
        var user = target.user
        if db == nil {
            do {
                let outcome = try await DemoDatabase.ensure(cacheDirectory: cache, placeCount: demoPlaces) {
                    printError($0)
                }
                path = outcome.path
            } catch {
                printError("cirrus repl: cannot build the demo database: \(error)")
                throw ExitCode(1)
            }
            user = user ?? DemoDatabase.builder
        }
        let container: Container
        do {
            container = try Container.open(at: path, environment: target.target(zone: nil).environment)
        } catch {
            printError("cirrus repl: \(error)")
            throw ExitCode(1)
        }
        let scope: Database.Scope = target.database == "private" ? .private(owner: user ?? "") : .public
        var session = ReplSession(
            container: container, identity: user.map { .user($0) } ?? .anonymous, scope: scope, width: terminalWidth())
        var failed = false
        if interactive {
            print("Cirrus \(db == nil ? "demo database" : path) — type `help` for commands, `quit` or Ctrl-D to leave.")
            // Only for the history file: without the directory the session runs without history.
            try? FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
            // A stray Ctrl-C must not end the session (commands are short; quit or Ctrl-D leave).
            signal(SIGINT, SIG_IGN)
            let snapshot = session
            let editor = LineEditor(historyPath: cache + "/history") { line, word in
                snapshot.completions(line: line, word: word)
            }
            while let line = editor.readLine(prompt: session.prompt) {
                let out = await session.execute(line)
                LineEditor.completer = { [session] l, w in session.completions(line: l, word: w) }
                FileHandle.standardOutput.write(Data(out.text.utf8))
                if out.quit { break }
            }
            _ = editor
        } else {
            while let line = readLine(strippingNewline: true) {
                let out = await session.execute(line)
                FileHandle.standardOutput.write(Data(out.text.utf8))
                failed = failed || out.isError
                if out.quit { break }
            }
        }
        do {
            try container.close()
        } catch {
            FileHandle.standardError.write(Data("cirrus: closing the database failed: \(error)\n".utf8))
            failed = true
        }
        if failed { throw ExitCode(1) }
    }
}
