// DataSet: a deterministic generated record set for the suites.
//
// Places clustered around 1 000 "cities" (centres uniform on the sphere between 60°S and 70°N,
// city sizes Zipf(0.7), points Gaussian with σ = 65 km around the centre, 10% scattered
// uniformly), a Double price (log-normal, cents), an Int64 rank (a permutation of 0..<n), a
// two-word name and an 8-word description drawn Zipf(1.0) from a 50 000-word vocabulary. The
// same seed gives the same data on every machine.

import Foundation
import Indexes
import RecordModel

struct DataSet {
    var locations: [Location] = []
    var prices: [Double] = []
    var ranks: [Int64] = []
    var names: [String] = []
    var texts: [String] = []
    var vocabulary: [String] = []

    static func word(_ i: Int) -> String {
        var s = ""
        var k = i
        repeat {
            s.append(Character(Unicode.Scalar(UInt8(97 + k % 26))))
            k /= 26
        } while k > 0
        return s + "x"  // never a stop word
    }

    struct Zipf {
        var cdf: [Double]
        init(n: Int, s: Double) {
            var acc = 0.0
            cdf = (1...n).map { k in
                acc += 1 / pow(Double(k), s)
                return acc
            }
            cdf = cdf.map { $0 / acc }
        }
        func sample(_ rng: inout Rng) -> Int {
            let u = rng.unit()
            var lo = 0
            var hi = cdf.count - 1
            while lo < hi {
                let m = (lo + hi) / 2
                if cdf[m] < u { lo = m + 1 } else { hi = m }
            }
            return lo
        }
    }

    init(size: Int, seed: UInt64 = 42) {
        var rng = Rng(state: seed)
        vocabulary = (0..<50_000).map(Self.word)
        let cities: [(Double, Double)] = (0..<1000).map { _ in
            let lat =
                asin(rng.unit() * (sin(70 * Double.pi / 180) + sin(60 * Double.pi / 180)) - sin(60 * Double.pi / 180))
                * 180 / .pi
            return (lat, rng.unit() * 360 - 180)
        }
        let cityZipf = Zipf(n: cities.count, s: 0.7)
        let wordZipf = Zipf(n: vocabulary.count, s: 1.0)
        var perm = (0..<size).map { Int64($0) }
        perm.shuffle(using: &rng)
        ranks = perm
        locations.reserveCapacity(size)
        for _ in 0..<size {
            if rng.unit() < 0.1 {
                locations.append(
                    Location(latitude: asin(rng.unit() * 2 - 1) * 180 / .pi, longitude: rng.unit() * 360 - 180))
            } else {
                let (clat, clon) = cities[cityZipf.sample(&rng)]
                let lat = max(-90, min(90, clat + rng.gaussian() * 65 / 111.2))
                var lon = clon + rng.gaussian() * 65 / (111.2 * max(0.05, cos(clat * .pi / 180)))
                lon = lon > 180 ? lon - 360 : (lon < -180 ? lon + 360 : lon)
                locations.append(Location(latitude: lat, longitude: max(-180, min(180, lon))))
            }
            prices.append((exp(rng.gaussian() * 1.2 + 3) * 100).rounded() / 100)
            names.append(vocabulary[wordZipf.sample(&rng)] + " " + vocabulary[wordZipf.sample(&rng)])
            texts.append((0..<8).map { _ in vocabulary[wordZipf.sample(&rng)] }.joined(separator: " "))
        }
    }
}
