// Location: CloudKit's CLLocation-shaped value.
//
// Only latitude and longitude take part in queries (NEAR, distance sort). The other members are
// stored and returned as given; a negative accuracy means "unknown", as in Core Location.

/// A geographic location with Core Location's optional measurements.
///
/// ```swift
/// let eiffel = Location(latitude: 48.8584, longitude: 2.2945)
/// ```
///
/// Stored as its coordinates and, only when one of the other members is not at its default, a
/// shared immutable box of them: 24 bytes, so a ``FieldValue`` is 25 instead of 73, and every
/// field value a record holds, decodes, copies or compares moves a third as many bytes
/// (docs/benchmarks.md). A location whose other members are at their defaults — most of them —
/// allocates nothing.
public struct Location: Sendable, Hashable, Codable {
    /// Degrees, −90…90.
    public var latitude: Double
    /// Degrees, −180…180.
    public var longitude: Double
    /// The members other than the coordinates; nil when every one is at its default.
    private var extras: CopyOnWrite<Extras>?

    /// The members other than the coordinates, when one is not at its default (immutable: a
    /// change makes a new box, so copies never share a change).
    private struct Extras: Sendable {
        let altitude: Double
        let horizontalAccuracy: Double
        let verticalAccuracy: Double
        let course: Double
        let speed: Double
        let timestamp: Timestamp?
    }

    /// Metres above sea level.
    public var altitude: Double {
        get { extras?.contents.altitude ?? 0 }
        set { setExtras(altitude: newValue) }
    }
    /// Radius of uncertainty in metres; negative when unknown.
    public var horizontalAccuracy: Double {
        get { extras?.contents.horizontalAccuracy ?? 0 }
        set { setExtras(horizontalAccuracy: newValue) }
    }
    /// Metres; negative when unknown.
    public var verticalAccuracy: Double {
        get { extras?.contents.verticalAccuracy ?? -1 }
        set { setExtras(verticalAccuracy: newValue) }
    }
    /// Degrees from true north, 0…360; negative when unknown.
    public var course: Double {
        get { extras?.contents.course ?? -1 }
        set { setExtras(course: newValue) }
    }
    /// Metres per second; negative when unknown.
    public var speed: Double {
        get { extras?.contents.speed ?? -1 }
        set { setExtras(speed: newValue) }
    }
    /// When the location was determined, if known.
    public var timestamp: Timestamp? {
        get { extras?.contents.timestamp }
        set { setExtras(timestamp: .some(newValue)) }
    }

    /// A location; only latitude and longitude are required. Accuracies, course and speed default to
    /// unknown (negative), except `horizontalAccuracy`, which defaults to 0.
    public init(
        latitude: Double, longitude: Double, altitude: Double = 0,
        horizontalAccuracy: Double = 0, verticalAccuracy: Double = -1,
        course: Double = -1, speed: Double = -1, timestamp: Timestamp? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.extras = Self.extras(altitude, horizontalAccuracy, verticalAccuracy, course, speed, timestamp)
    }

    /// A box of the members, or nil when each is at its default — compared bit for bit, so −0
    /// and a NaN are kept as given.
    private static func extras(
        _ altitude: Double, _ horizontalAccuracy: Double, _ verticalAccuracy: Double, _ course: Double,
        _ speed: Double, _ timestamp: Timestamp?
    ) -> CopyOnWrite<Extras>? {
        if altitude.bitPattern == (0.0).bitPattern, horizontalAccuracy.bitPattern == (0.0).bitPattern,
            verticalAccuracy.bitPattern == (-1.0).bitPattern, course.bitPattern == (-1.0).bitPattern,
            speed.bitPattern == (-1.0).bitPattern, timestamp == nil
        {
            return nil
        }
        return CopyOnWrite(
            Extras(
                altitude: altitude, horizontalAccuracy: horizontalAccuracy, verticalAccuracy: verticalAccuracy,
                course: course, speed: speed, timestamp: timestamp))
    }

    /// Replaces the members given, keeping the others.
    private mutating func setExtras(
        altitude: Double? = nil, horizontalAccuracy: Double? = nil, verticalAccuracy: Double? = nil,
        course: Double? = nil, speed: Double? = nil, timestamp: Timestamp?? = nil
    ) {
        extras = Self.extras(
            altitude ?? self.altitude, horizontalAccuracy ?? self.horizontalAccuracy,
            verticalAccuracy ?? self.verticalAccuracy, course ?? self.course, speed ?? self.speed,
            timestamp ?? self.timestamp)
    }

    /// Whether latitude and longitude are finite and within range.
    public var hasValidCoordinates: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }

    // MARK: equality, hashing, coding — member by member, as if every member were stored

    /// Whether every member is equal (`==` on each, as a struct of them would compare).
    public static func == (a: Location, b: Location) -> Bool {
        a.latitude == b.latitude && a.longitude == b.longitude
            && ((a.extras == nil && b.extras == nil)
                || (a.altitude == b.altitude && a.horizontalAccuracy == b.horizontalAccuracy
                    && a.verticalAccuracy == b.verticalAccuracy && a.course == b.course && a.speed == b.speed
                    && a.timestamp == b.timestamp))
    }

    /// Hashes every member, in declaration order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(latitude)
        hasher.combine(longitude)
        hasher.combine(altitude)
        hasher.combine(horizontalAccuracy)
        hasher.combine(verticalAccuracy)
        hasher.combine(course)
        hasher.combine(speed)
        hasher.combine(timestamp)
    }

    private enum CodingKeys: String, CodingKey {
        case latitude, longitude, altitude, horizontalAccuracy, verticalAccuracy, course, speed, timestamp
    }

    /// Decodes every member by name (`timestamp` may be absent).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            latitude: try c.decode(Double.self, forKey: .latitude),
            longitude: try c.decode(Double.self, forKey: .longitude),
            altitude: try c.decode(Double.self, forKey: .altitude),
            horizontalAccuracy: try c.decode(Double.self, forKey: .horizontalAccuracy),
            verticalAccuracy: try c.decode(Double.self, forKey: .verticalAccuracy),
            course: try c.decode(Double.self, forKey: .course),
            speed: try c.decode(Double.self, forKey: .speed),
            timestamp: try c.decodeIfPresent(Timestamp.self, forKey: .timestamp))
    }

    /// Encodes every member by name (`timestamp` only when known).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(latitude, forKey: .latitude)
        try c.encode(longitude, forKey: .longitude)
        try c.encode(altitude, forKey: .altitude)
        try c.encode(horizontalAccuracy, forKey: .horizontalAccuracy)
        try c.encode(verticalAccuracy, forKey: .verticalAccuracy)
        try c.encode(course, forKey: .course)
        try c.encode(speed, forKey: .speed)
        try c.encodeIfPresent(timestamp, forKey: .timestamp)
    }
}

extension Location: CustomStringConvertible {
    /// `(latitude, longitude)` in degrees, e.g. `(48.8584, 2.2945)`.
    public var description: String { "(\(latitude), \(longitude))" }
}
