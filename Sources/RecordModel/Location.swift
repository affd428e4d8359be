// Location: CloudKit's CLLocation-shaped value.
//
// Only latitude and longitude take part in queries (NEAR, distance sort). The other members are
// stored and returned as given; a negative accuracy means "unknown", as in Core Location.

/// A geographic location with Core Location's optional measurements.
///
/// ```swift
/// let eiffel = Location(latitude: 48.8584, longitude: 2.2945)
/// ```
public struct Location: Sendable, Hashable, Codable {
    /// Degrees, −90…90.
    public var latitude: Double
    /// Degrees, −180…180.
    public var longitude: Double
    /// Metres above sea level.
    public var altitude: Double
    /// Radius of uncertainty in metres; negative when unknown.
    public var horizontalAccuracy: Double
    /// Metres; negative when unknown.
    public var verticalAccuracy: Double
    /// Degrees from true north, 0…360; negative when unknown.
    public var course: Double
    /// Metres per second; negative when unknown.
    public var speed: Double
    /// When the location was determined, if known.
    public var timestamp: Timestamp?

    /// A location; only latitude and longitude are required. Accuracies, course and speed default to
    /// unknown (negative), except `horizontalAccuracy`, which defaults to 0.
    public init(
        latitude: Double, longitude: Double, altitude: Double = 0,
        horizontalAccuracy: Double = 0, verticalAccuracy: Double = -1,
        course: Double = -1, speed: Double = -1, timestamp: Timestamp? = nil
    ) {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.course = course
        self.speed = speed
        self.timestamp = timestamp
    }

    /// Whether latitude and longitude are finite and within range.
    public var hasValidCoordinates: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }
}

extension Location: CustomStringConvertible {
    /// `(latitude, longitude)` in degrees, e.g. `(48.8584, 2.2945)`.
    public var description: String { "(\(latitude), \(longitude))" }
}
