// Clock: time, injected through a small protocol so tests can fix it (LevelDB's Env, NIO's
// embedded event loop): wall time for creation and modification dates and segment headers,
// monotonic time for intervals.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Time, injected so tests can fix it.
public protocol LogClock: Sendable {
    /// Wall-clock milliseconds since 1970 (segment creation info).
    func wallMilliseconds() -> Int64
    /// A monotonic time in nanoseconds (batched durability).
    func monotonicNanoseconds() -> UInt64
}

/// The system clock.
public struct SystemClock: LogClock {
    /// The clock of the machine.
    public init() {}
    /// `CLOCK_REALTIME`, in milliseconds.
    public func wallMilliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
    /// `CLOCK_MONOTONIC`, in nanoseconds.
    public func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
