// ServeProcess: one real `cirrus serve` process for ServeKillTests — started on a container
// directory with port 0 (the server picks a free loopback port and prints it), and SIGKILLed. It
// owns the process and its log file; it knows nothing of records.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `cirrus serve` process listening on 127.0.0.1.
final class ServeProcess {
    let process: Process
    /// The port it listens on, read from its first line.
    let port: Int
    /// Where its standard output and error go.
    let logPath: String

    private init(process: Process, port: Int, logPath: String) {
        self.process = process
        self.port = port
        self.logPath = logPath
    }

    /// The URL path of `operation` in the public database of development.
    func path(_ operation: String, container: String, query: String) -> String {
        "/database/1/\(container)/development/public/\(operation)?\(query)"
    }

    /// Starts `cirrus serve` on `directory` and waits until it listens (at most 60 s: a debug
    /// build on a loaded machine replays the log slowly).
    static func start(cirrus: String, directory: String, container: String, logPath: String) throws -> ServeProcess {
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let log = FileHandle(forWritingAtPath: logPath)
        else { throw ServeFailure("cannot write \(logPath)") }
        defer { try? log.close() }  // the child has its own descriptor
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cirrus)
        p.arguments = ["serve", "--db", directory, "--container", container, "--port", "0"]
        p.standardOutput = log
        p.standardError = log
        try p.run()
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let port = listeningPort(in: text) {
                return ServeProcess(process: p, port: port, logPath: logPath)
            }
            guard p.isRunning else { throw ServeFailure("cirrus serve exited: \(text)") }
            usleep(20_000)
        }
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
        throw ServeFailure("cirrus serve did not listen within 60 s")
    }

    /// The port in `cirrus serve: http://127.0.0.1:PORT/database/1/…`.
    static func listeningPort(in text: String) -> Int? {
        guard let r = text.range(of: "http://127.0.0.1:") else { return nil }
        let digits = text[r.upperBound...].prefix { $0.isASCII && $0.isNumber }
        guard text[r.upperBound...].dropFirst(digits.count).first == "/" else { return nil }
        return Int(digits)
    }

    /// SIGKILL now (nothing when it already exited) and reap the process.
    func killNow() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// The server's output so far, for failure messages.
    var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}

/// A server that could not be started.
struct ServeFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
