import Foundation
import Testing

@testable import RecordModel

/// `Location` stores its coordinates and a box of the other members only when one is not at its
/// default. Checked against a model — a plain struct of the eight members, whose equality,
/// hashing and coding are the compiler's — under the same values and the same changes.
@Suite struct LocationTests {
    /// The model: every member stored, everything synthesized.
    struct Plain: Hashable, Codable {
        var latitude: Double
        var longitude: Double
        var altitude: Double = 0
        var horizontalAccuracy: Double = 0
        var verticalAccuracy: Double = -1
        var course: Double = -1
        var speed: Double = -1
        var timestamp: Timestamp? = nil
    }

    static func location(_ p: Plain) -> Location {
        Location(
            latitude: p.latitude, longitude: p.longitude, altitude: p.altitude,
            horizontalAccuracy: p.horizontalAccuracy, verticalAccuracy: p.verticalAccuracy, course: p.course,
            speed: p.speed, timestamp: p.timestamp)
    }

    static func members(_ l: Location) -> [Double] {
        [l.latitude, l.longitude, l.altitude, l.horizontalAccuracy, l.verticalAccuracy, l.course, l.speed]
    }

    static func members(_ p: Plain) -> [Double] {
        [p.latitude, p.longitude, p.altitude, p.horizontalAccuracy, p.verticalAccuracy, p.course, p.speed]
    }

    /// Bit for bit: −0 and NaN come back as they went in.
    static func sameBits(_ a: [Double], _ b: [Double]) -> Bool { a.map(\.bitPattern) == b.map(\.bitPattern) }

    /// Values each member takes: its default, −0, a NaN, an ordinary value.
    static let values: [Double] = [0, -0.0, -1, .nan, 12.5]

    /// Models from every value in each member (the others at their defaults) and a few mixes.
    static var models: [Plain] {
        var out: [Plain] = [Plain(latitude: 48.8584, longitude: 2.2945)]
        for v in values {
            for k in 0..<5 {
                var p = Plain(latitude: 10, longitude: -20)
                switch k {
                case 0: p.altitude = v
                case 1: p.horizontalAccuracy = v
                case 2: p.verticalAccuracy = v
                case 3: p.course = v
                default: p.speed = v
                }
                out.append(p)
            }
        }
        out.append(Plain(latitude: 1, longitude: 2, timestamp: Timestamp(millisecondsSince1970: -5)))
        out.append(
            Plain(
                latitude: -90, longitude: 180, altitude: 3, horizontalAccuracy: 4, verticalAccuracy: 5, course: 6,
                speed: 7, timestamp: Timestamp(millisecondsSince1970: 8)))
        return out
    }

    @Test func membersReadAsGiven() {
        for p in Self.models {
            let l = Self.location(p)
            #expect(Self.sameBits(Self.members(l), Self.members(p)), "\(p)")
            #expect(l.timestamp == p.timestamp)
        }
    }

    @Test func equalityAndHashingAreTheMembers() {
        let models = Self.models
        for a in models {
            for b in models {
                let la = Self.location(a)
                let lb = Self.location(b)
                #expect((la == lb) == (a == b), "\(a) vs \(b)")
                if la == lb { #expect(la.hashValue == lb.hashValue) }
            }
        }
        // A NaN member is not equal to itself, as in a struct of Doubles.
        let nan = Location(latitude: 0, longitude: 0, altitude: .nan)
        #expect(nan != nan)
    }

    @Test func changesKeepTheOtherMembers() {
        var p = Plain(latitude: 5, longitude: 6)
        var l = Self.location(p)
        let copy = l
        let changes: [(inout Plain, inout Location) -> Void] = [
            {
                $0.altitude = 100; $1.altitude = 100
            },
            {
                $0.speed = 3; $1.speed = 3
            },
            {
                $0.timestamp = Timestamp(millisecondsSince1970: 9); $1.timestamp = Timestamp(millisecondsSince1970: 9)
            },
            {
                $0.altitude = 0; $1.altitude = 0
            },
            {
                $0.speed = -1; $1.speed = -1
            },
            {
                $0.timestamp = nil; $1.timestamp = nil
            },
            {
                $0.verticalAccuracy = -0.0; $1.verticalAccuracy = -0.0
            },
            {
                $0.course = 45; $1.course = 45
            },
            {
                $0.latitude = -7; $1.latitude = -7
            },
        ]
        for change in changes {
            change(&p, &l)
            #expect(Self.sameBits(Self.members(l), Self.members(p)), "\(p)")
            #expect(l.timestamp == p.timestamp)
            #expect(l == Self.location(p))
        }
        // A copy taken before the changes saw none of them.
        #expect(copy == Location(latitude: 5, longitude: 6))
    }

    @Test func codingIsTheMembers() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for p in Self.models where !Self.members(p).contains(where: \.isNaN) {
            let l = Self.location(p)
            let mine = try encoder.encode(l)
            #expect(mine == (try encoder.encode(p)), "\(p)")
            let back = try JSONDecoder().decode(Location.self, from: mine)
            #expect(Self.sameBits(Self.members(back), Self.members(p)) && back.timestamp == p.timestamp)
            // And what the model writes reads back the same.
            #expect(try JSONDecoder().decode(Location.self, from: try encoder.encode(p)) == l)
        }
        // A member missing is an error, as for the model.
        let partial = Data(#"{"latitude":1,"longitude":2}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Location.self, from: partial) }
    }

    /// The reason for the box: a field value stays small, so records copy and compare less.
    @Test func aFieldValueIsSmall() {
        #expect(MemoryLayout<Location>.size == 24)
        #expect(MemoryLayout<FieldValue>.size <= 25)
    }
}
