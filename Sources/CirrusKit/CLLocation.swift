// CLLocation and CLLocationCoordinate2D where CoreLocation does not exist (Linux): the members
// CloudKit code uses — the initializers, coordinate, altitude, accuracies, course, speed,
// timestamp and `distance(from:)`. Where CoreLocation exists its own types are used instead.

#if canImport(CoreLocation)
    @_exported import CoreLocation
#else
    import RecordModel

    /// Degrees of latitude or longitude.
    public typealias CLLocationDegrees = Double
    /// Metres.
    public typealias CLLocationDistance = Double
    /// Metres of accuracy; negative means invalid.
    public typealias CLLocationAccuracy = Double
    /// Degrees from true north; negative means invalid.
    public typealias CLLocationDirection = Double
    /// Accuracy of a direction in degrees; negative means invalid.
    public typealias CLLocationDirectionAccuracy = Double
    /// Metres per second; negative means invalid.
    public typealias CLLocationSpeed = Double
    /// Accuracy of a speed in metres per second; negative means invalid.
    public typealias CLLocationSpeedAccuracy = Double

    /// A latitude and longitude in degrees (WGS 84).
    ///
    /// ```swift
    /// let louvre = CLLocationCoordinate2D(latitude: 48.8606, longitude: 2.3376)
    /// ```
    public struct CLLocationCoordinate2D: Sendable, Hashable {
        /// Degrees north of the equator (−90…90).
        public var latitude: CLLocationDegrees
        /// Degrees east of Greenwich (−180…180).
        public var longitude: CLLocationDegrees

        /// (0, 0).
        public init() {
            latitude = 0
            longitude = 0
        }

        /// A coordinate.
        public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// The invalid coordinate (latitude and longitude −180).
    public let kCLLocationCoordinate2DInvalid = CLLocationCoordinate2D(latitude: -180, longitude: -180)

    /// Whether latitude is within ±90 and longitude within ±180.
    public func CLLocationCoordinate2DIsValid(_ coord: CLLocationCoordinate2D) -> Bool {
        abs(coord.latitude) <= 90 && abs(coord.longitude) <= 180
    }

    /// A coordinate from its latitude and longitude.
    public func CLLocationCoordinate2DMake(
        _ latitude: CLLocationDegrees, _ longitude: CLLocationDegrees
    ) -> CLLocationCoordinate2D {
        CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
    }

    /// A location: coordinate, altitude, accuracies, course, speed and time. Immutable, so
    /// `Sendable` as Apple's is.
    ///
    /// ```swift
    /// let here = CLLocation(latitude: 48.8583, longitude: 2.3375)
    /// let metres = here.distance(from: CLLocation(latitude: 48.8606, longitude: 2.3376))
    /// ```
    open class CLLocation: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
        /// Latitude and longitude.
        public let coordinate: CLLocationCoordinate2D
        /// Metres above sea level.
        public let altitude: CLLocationDistance
        /// Metres above the WGS 84 ellipsoid (the same as `altitude` here).
        public var ellipsoidalAltitude: CLLocationDistance { altitude }
        /// Radius of uncertainty of the coordinate in metres; negative: invalid.
        public let horizontalAccuracy: CLLocationAccuracy
        /// Uncertainty of the altitude in metres; negative: invalid.
        public let verticalAccuracy: CLLocationAccuracy
        /// Direction of travel in degrees from true north; negative: invalid.
        public let course: CLLocationDirection
        /// Accuracy of `course`; negative: invalid.
        public let courseAccuracy: CLLocationDirectionAccuracy
        /// Metres per second; negative: invalid.
        public let speed: CLLocationSpeed
        /// Accuracy of `speed`; negative: invalid.
        public let speedAccuracy: CLLocationSpeedAccuracy
        /// When the location was determined.
        public let timestamp: Date

        /// A location at `latitude`, `longitude`: altitude 0, horizontal accuracy 0, the other
        /// accuracies, course and speed invalid (−1), timestamp now.
        public convenience init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
            self.init(
                coordinate: CLLocationCoordinate2D(latitude: latitude, longitude: longitude), altitude: 0,
                horizontalAccuracy: 0, verticalAccuracy: -1, course: -1, courseAccuracy: -1, speed: -1,
                speedAccuracy: -1, timestamp: Date())
        }

        /// A location with altitude, accuracies and a timestamp; course and speed invalid.
        public convenience init(
            coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
            horizontalAccuracy hAccuracy: CLLocationAccuracy,
            verticalAccuracy vAccuracy: CLLocationAccuracy, timestamp: Date
        ) {
            self.init(
                coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
                course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1, timestamp: timestamp)
        }

        /// A location with course and speed.
        public convenience init(
            coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
            horizontalAccuracy hAccuracy: CLLocationAccuracy,
            verticalAccuracy vAccuracy: CLLocationAccuracy, course: CLLocationDirection, speed: CLLocationSpeed,
            timestamp: Date
        ) {
            self.init(
                coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy,
                course: course, courseAccuracy: -1, speed: speed, speedAccuracy: -1, timestamp: timestamp)
        }

        /// A location with every member.
        public init(
            coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
            horizontalAccuracy hAccuracy: CLLocationAccuracy,
            verticalAccuracy vAccuracy: CLLocationAccuracy, course: CLLocationDirection,
            courseAccuracy: CLLocationDirectionAccuracy, speed: CLLocationSpeed, speedAccuracy: CLLocationSpeedAccuracy,
            timestamp: Date
        ) {
            self.coordinate = coordinate
            self.altitude = altitude
            self.horizontalAccuracy = hAccuracy
            self.verticalAccuracy = vAccuracy
            self.course = course
            self.courseAccuracy = courseAccuracy
            self.speed = speed
            self.speedAccuracy = speedAccuracy
            self.timestamp = timestamp
            super.init()
        }

        /// The great-circle distance in metres to `location`, on a sphere of the Earth's mean
        /// radius (6 371 008.8 m). CoreLocation's figure may differ by up to about 0.5 %.
        public func distance(from location: CLLocation) -> CLLocationDistance {
            let r = 6_371_008.8
            let φ1 = coordinate.latitude * .pi / 180
            let φ2 = location.coordinate.latitude * .pi / 180
            let dφ = φ2 - φ1
            let dλ = (location.coordinate.longitude - coordinate.longitude) * .pi / 180
            let a = sin(dφ / 2) * sin(dφ / 2) + cos(φ1) * cos(φ2) * sin(dλ / 2) * sin(dλ / 2)
            return 2 * r * atan2(a.squareRoot(), max(0, 1 - a).squareRoot())
        }

        /// `<+48.8583,+2.3375> +/- 0.00m`, as CoreLocation prints it.
        open override var description: String {
            String(
                format: "<%+.8f,%+.8f> +/- %.2fm (speed %.2f mps / course %.2f) @ ", coordinate.latitude,
                coordinate.longitude, horizontalAccuracy, speed, course) + timestamp.description
        }

        /// Equal when every member is.
        open override func isEqual(_ object: Any?) -> Bool {
            guard let o = object as? CLLocation else { return false }
            return coordinate == o.coordinate && altitude == o.altitude && horizontalAccuracy == o.horizontalAccuracy
                && verticalAccuracy == o.verticalAccuracy && course == o.course && speed == o.speed
                && timestamp == o.timestamp
        }

        /// Hashes the coordinate.
        open override var hash: Int {
            var h = Hasher()
            h.combine(coordinate)
            return h.finalize()
        }

        /// The location itself: it is immutable.
        open func copy(with zone: NSZone? = nil) -> Any { self }

        /// Locations archive securely.
        public static var supportsSecureCoding: Bool { true }

        /// Archives every member.
        open func encode(with coder: NSCoder) {
            coder.encode(coordinate.latitude, forKey: "latitude")
            coder.encode(coordinate.longitude, forKey: "longitude")
            coder.encode(altitude, forKey: "altitude")
            coder.encode(horizontalAccuracy, forKey: "horizontalAccuracy")
            coder.encode(verticalAccuracy, forKey: "verticalAccuracy")
            coder.encode(course, forKey: "course")
            coder.encode(courseAccuracy, forKey: "courseAccuracy")
            coder.encode(speed, forKey: "speed")
            coder.encode(speedAccuracy, forKey: "speedAccuracy")
            coder.encode(timestamp.timeIntervalSinceReferenceDate, forKey: "timestamp")
        }

        /// Reads what `encode(with:)` wrote.
        public required init?(coder: NSCoder) {
            coordinate = CLLocationCoordinate2D(
                latitude: coder.decodeDouble(forKey: "latitude"), longitude: coder.decodeDouble(forKey: "longitude"))
            altitude = coder.decodeDouble(forKey: "altitude")
            horizontalAccuracy = coder.decodeDouble(forKey: "horizontalAccuracy")
            verticalAccuracy = coder.decodeDouble(forKey: "verticalAccuracy")
            course = coder.decodeDouble(forKey: "course")
            courseAccuracy = coder.decodeDouble(forKey: "courseAccuracy")
            speed = coder.decodeDouble(forKey: "speed")
            speedAccuracy = coder.decodeDouble(forKey: "speedAccuracy")
            timestamp = Date(timeIntervalSinceReferenceDate: coder.decodeDouble(forKey: "timestamp"))
            super.init()
        }
    }
#endif
