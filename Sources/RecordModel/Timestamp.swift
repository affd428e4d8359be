// Timestamp: CloudKit's date value, milliseconds since 1970-01-01T00:00:00Z.
//
// CloudKit keeps dates at millisecond precision (Web Services TIMESTAMP is an integer number of
// milliseconds). Storing the integer rather than a `Date` makes equality exact, ordering cheap
// and the binary codec trivial; `Date` is available at the edges.

import Foundation

/// A point in time at CloudKit's millisecond precision.
///
/// ```swift
/// let t = Timestamp(millisecondsSince1970: 1_700_000_000_000)
/// let d: Date = t.date
/// ```
public struct Timestamp: Sendable, Hashable, Comparable, Codable {
    /// Milliseconds since 1970-01-01T00:00:00Z (may be negative).
    public var millisecondsSince1970: Int64

    /// The instant `millisecondsSince1970` ms after 1970-01-01T00:00:00Z.
    @inlinable
    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    /// Rounds `date` to the nearest millisecond, as CloudKit does when it stores a date.
    public init(_ date: Date) {
        let ms = (date.timeIntervalSince1970 * 1000).rounded()
        if ms >= 9.2e18 {
            self.millisecondsSince1970 = .max
        } else if ms <= -9.2e18 {
            self.millisecondsSince1970 = .min
        } else {
            self.millisecondsSince1970 = Int64(ms)
        }
    }

    /// The same instant as a Foundation `Date`.
    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    /// Earlier instants first.
    @inlinable
    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }
}

extension Timestamp: CustomStringConvertible {
    /// ISO 8601 with milliseconds, e.g. `2023-11-14T22:13:20.000Z`.
    public var description: String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: date)
    }
}
