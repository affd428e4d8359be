// CollectingLogHandler: a swift-log handler that keeps every message, so tests can assert what a
// container reported through `ContainerOptions.logger` (and keep it off the test output).

import Foundation
import Logging

/// The messages logged through the loggers made by `logger(label:)`, in order. Thread-safe.
///
/// ```swift
/// let log = LogCollector()
/// var options = ContainerOptions(logger: log.logger())
/// _ = try Container.open(at: dir, options: options)
/// #expect(log.messages.contains { $0.level == .warning })
/// ```
public final class LogCollector: @unchecked Sendable {
    // @unchecked: `entries` is only touched under `lock`.
    private let lock = NSLock()
    private var entries: [(level: Logger.Level, message: String)] = []

    /// An empty collector.
    public init() {}

    /// Every message logged so far, with its level.
    public var messages: [(level: Logger.Level, message: String)] { lock.withLock { entries } }

    /// A logger whose messages (every level) this collector keeps.
    public func logger(label: String = "cirrus.test") -> Logger {
        var l = Logger(label: label) { _ in Handler(collector: self) }
        l.logLevel = .trace
        return l
    }

    fileprivate func add(_ level: Logger.Level, _ message: String) {
        lock.withLock { entries.append((level, message)) }
    }

    struct Handler: LogHandler {
        let collector: LogCollector
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) { collector.add(event.level, "\(event.message)") }
    }
}
