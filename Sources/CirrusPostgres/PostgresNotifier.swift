// PostgresNotifier: a container's notification streams in this process, and the one
// connection that LISTENs for them. The outbox and what fires are PostgresStore+Subscriptions.swift.
//
// One dedicated connection per container and process (not one per stream, not one of the
// pool's), opened when the first stream opens and closed when the last one ends or the
// container closes. It LISTENs on the namespace's channel; a request that fired notifications
// sends `pg_notify(channel, tenant key)` at its commit, and the listener wakes that tenant's
// streams in this process. Each stream then reads its tenant's outbox rows of its subscriber
// after the last position it read, in commit order, filters them by what its identity may read
// (AccessRules.canRead, with the container's schema of now) and yields them.
//
// Where a stream starts: after the tenant's last committed sequence once the listener is
// LISTENing (so nothing committed after that is missed: it is in the outbox, and its wake-up
// arrives). `notifications()` returns at once, before that read; a request of this process
// that reaches its after-writes hook while a stream of its tenant has not read its start yet
// moves the start before itself, so a write made through this container after `notifications()`
// returned is delivered, as on the embedded engine. A write through another process in that
// window may or may not be (it is concurrent with the opening).
//
// Failures do not end a stream (an AsyncStream cannot carry an error): a lost listener
// connection is opened again (waiting 0.1 s, doubling to 5 s), after which every stream reads
// the outbox (wake-ups sent meanwhile were lost); a failed outbox read is retried likewise. A
// stream ends when its consumer stops iterating and when the container closes. A stream that
// falls more than the outbox's retention behind (ten minutes) misses the rows pruned meanwhile.

import CirrusFacade
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import RecordModel

/// The notification streams of one container in this process and their LISTEN connection.
final class PostgresNotifier: Sendable {
    /// One open stream.
    struct Stream {
        var tenant: String
        /// The earliest sequence a request of this process wrote at while the stream had not
        /// read its start yet (see the file header), minus one.
        var hookStart: Int64?
        var started = false
        var wake: AsyncStream<Void>.Continuation
        var output: AsyncStream<RecordNotification>.Continuation
        var task: Task<Void, Never>?
    }

    struct State {
        var streams: [Int: Stream] = [:]
        var nextKey = 0
        var listener: Task<Void, Never>?
        var listening = false
        /// Numbers listeners, so a cancelled one's last word does not touch its successor's state.
        var generation = 0
        var closed = false
    }

    /// nil when the container's URL does not parse (it did when the container connected, so
    /// this does not happen; the listener then logs and stops).
    let configuration: PostgresConnection.Configuration?
    let channel: String
    let logger: Logger
    private let state = NIOLockedValueBox(State())

    /// A notifier LISTENing on `channel` over its own connection made with `configuration`.
    init(configuration: PostgresConnection.Configuration?, channel: String) {
        self.configuration = configuration
        self.channel = channel
        self.logger = Logger(label: "cirrus.postgres.notifications")
    }

    /// The configuration of a listening connection to `url` (parsed as `PostgresStore.connect`
    /// does; nil when it does not parse).
    static func configuration(url: String, namespace: String, timeout: Duration) -> PostgresConnection.Configuration? {
        guard let c = URLComponents(string: url), let host = c.host, !host.isEmpty, let user = c.user, !user.isEmpty
        else { return nil }
        let database = String(c.path.drop(while: { $0 == "/" }))
        var config = PostgresConnection.Configuration(
            host: host, port: c.port ?? 5432, username: user, password: c.password,
            database: database.isEmpty ? user : database, tls: .disable)
        config.options.connectTimeout = Deadline.nanoseconds(timeout)
        config.options.additionalStartupParameters = [
            ("application_name", String("cirrus listen \(namespace)".prefix(63)))
        ]
        return config
    }

    /// A stream of notifications of `tenant`: `start` reads the tenant's last committed
    /// sequence, `read` the rows after a position (already filtered: nil for a row this
    /// identity may not read). Ends at once when the notifier is closed.
    func open(
        tenant: String, start: @escaping @Sendable () async throws -> Int64,
        read: @escaping @Sendable (OutboxPosition) async throws -> [(OutboxPosition, RecordNotification?)]
    ) -> AsyncStream<RecordNotification> {
        let (output, outputContinuation) = AsyncStream.makeStream(of: RecordNotification.self)
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let key: Int? = state.withLockedValue { s in
            if s.closed { return nil }
            s.nextKey += 1
            s.streams[s.nextKey] = Stream(tenant: tenant, wake: wake, output: outputContinuation)
            return s.nextKey
        }
        guard let key else {
            outputContinuation.finish()
            return output
        }
        outputContinuation.onTermination = { [weak self] _ in self?.remove(key) }
        let task = Task { [weak self] () -> Void in
            guard let self else { return }
            await self.serve(key, wakes: wakes, output: outputContinuation, start: start, read: read)
        }
        let keep = state.withLockedValue { s in
            guard s.streams[key] != nil else { return false }
            s.streams[key]?.task = task
            if s.listener == nil {
                s.generation += 1
                let generation = s.generation
                s.listener = Task { [weak self] () -> Void in
                    guard let self else { return }
                    await self.listen(generation)
                }
            }
            return true
        }
        if !keep { task.cancel() }
        return output
    }

    /// A request of this process writes `tenant` at `sequence` (its after-writes hook): streams
    /// of the tenant that have not read their start yet start before it.
    func writing(tenant: String, sequence: Int64) {
        state.withLockedValue { s in
            for (k, st) in s.streams where st.tenant == tenant && !st.started {
                s.streams[k]?.hookStart = min(st.hookStart ?? .max, sequence - 1)
            }
        }
    }

    /// Ends every stream and the listener; later `open`s end at once.
    func close() {
        let (streams, listener) = state.withLockedValue { s in
            s.closed = true
            defer {
                s.streams = [:]
                s.listener = nil
                s.listening = false
            }
            return (Array(s.streams.values), s.listener)
        }
        listener?.cancel()
        for st in streams {
            st.task?.cancel()
            st.wake.finish()
            st.output.finish()
        }
    }

    /// Forgets a stream whose consumer stopped; the listener stops with the last stream.
    private func remove(_ key: Int) {
        let (stream, listener) = state.withLockedValue { s -> (Stream?, Task<Void, Never>?) in
            let st = s.streams.removeValue(forKey: key)
            guard s.streams.isEmpty, let l = s.listener else { return (st, nil) }
            s.listener = nil
            s.listening = false
            return (st, l)
        }
        stream?.task?.cancel()
        stream?.wake.finish()
        listener?.cancel()
    }

    /// One stream's reader (see the file header).
    private func serve(
        _ key: Int, wakes: AsyncStream<Void>, output: AsyncStream<RecordNotification>.Continuation,
        start: @Sendable () async throws -> Int64,
        read: @Sendable (OutboxPosition) async throws -> [(OutboxPosition, RecordNotification?)]
    ) async {
        var waiting = wakes.makeAsyncIterator()
        var position: OutboxPosition? = nil
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            if !state.withLockedValue({ $0.listening }) {
                // The listener wakes every stream when it starts listening.
                guard await waiting.next() != nil else { return }
                continue
            }
            do {
                if position == nil {
                    let committed = try await start()
                    position = .after(
                        state.withLockedValue { s -> Int64 in
                            s.streams[key]?.started = true
                            return min(committed, s.streams[key]?.hookStart ?? committed)
                        })
                }
                while let after = position {
                    let rows = try await read(after)
                    for (p, n) in rows {
                        position = p
                        if let n { output.yield(n) }
                    }
                    if rows.count < PostgresStore.outboxPage { break }
                }
                pause = .milliseconds(100)
            } catch {
                if Task.isCancelled { return }
                logger.warning("reading notifications failed (retrying in \(pause)): \(error)")
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
                continue
            }
            guard await waiting.next() != nil else { return }
        }
    }

    /// The listener: a connection LISTENing on the channel, opened again when lost, until
    /// cancelled.
    private func listen(_ generation: Int) async {
        guard let configuration else {
            logger.error("no connection configuration to listen on \(channel): notification streams stay empty")
            return
        }
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let conn = try await PostgresConnection.connect(
                    configuration: configuration, id: 1, logger: logger)
                do {
                    try await conn.listen(on: channel) { notifications in
                        setListening(true, generation)
                        pause = .milliseconds(100)
                        for try await n in notifications { wake(tenant: n.payload) }
                    }
                } catch {
                    if !Task.isCancelled { logger.warning("listening on \(channel) failed: \(error)") }
                }
                setListening(false, generation)
                try? await conn.close()
            } catch {
                if !Task.isCancelled { logger.warning("connecting to listen on \(channel) failed: \(error)") }
            }
            if Task.isCancelled { return }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(5))
        }
    }

    /// Marks the listener as listening or not; when it starts, every stream reads the outbox.
    private func setListening(_ on: Bool, _ generation: Int) {
        let wakes = state.withLockedValue { s -> [AsyncStream<Void>.Continuation] in
            guard !s.closed, s.listener != nil, s.generation == generation else { return [] }
            s.listening = on
            return on ? s.streams.values.map(\.wake) : []
        }
        for w in wakes { w.yield() }
    }

    /// Wakes the streams of `tenant`.
    private func wake(tenant: String) {
        for w in state.withLockedValue({ s in s.streams.values.filter { $0.tenant == tenant }.map(\.wake) }) {
            w.yield()
        }
    }
}
