import MLGraph
@testable import MLPasses
import TestSupport
import XCTest

/// Exact 1-D k-means: both solvers against a brute-force optimum over all set partitions, ties and
/// degenerate hulls (the splice path), fewer distinct values than clusters, and LUT output.
final class KMeansTests: XCTestCase {
    /// Minimum SSE over *all* partitions of `x` into at most `k` non-empty blocks (restricted
    /// growth strings), so contiguity of the optimum is not assumed.
    func bruteForceSSE(_ x: [Double], k: Int) -> Double {
        let n = x.count
        var sum = [Double](repeating: 0, count: k), sum2 = sum, count = sum
        var best = Double.infinity
        func rec(_ i: Int, _ used: Int) {
            if i == n {
                var e = 0.0
                for b in 0..<used { e += sum2[b] - sum[b] * sum[b] / count[b] }
                best = min(best, e)
                return
            }
            for b in 0..<min(used + 1, k) {
                sum[b] += x[i]; sum2[b] += x[i] * x[i]; count[b] += 1
                rec(i + 1, max(used, b + 1))
                sum[b] -= x[i]; sum2[b] -= x[i] * x[i]; count[b] -= 1
            }
        }
        rec(0, 0)
        return best
    }

    /// SSE of `values` reconstructed by centroids/assignment, in float64.
    func sse(_ values: [Float], _ centroids: [Float], _ assignment: [Int]) -> Double {
        zip(values, assignment).reduce(0) { let d = Double($1.0) - Double(centroids[$1.1]); return $0 + d * d }
    }

    func solve(_ values: [Float], _ k: Int, _ solver: KMeansSolver) throws -> (centroids: [Float], assignment: [Int]) {
        let r = try values.withUnsafeBufferPointer { try kmeansCluster($0, clusters: k, solver: solver) }
        return (r.centroids, r.codes.map { Int($0) })
    }

    /// Random sets n ≤ 12 (with repeated values), k ≤ 4: both solvers reach the brute-force minimum.
    func testMatchesBruteForceOnSmallRandomSets() throws {
        var g = SeededGenerator(seed: 11)
        var cases = 0
        for n in 1...12 {
            for trial in 0..<(n >= 11 ? 2 : 6) {
                // Quarter-steps make repeated values (weights > 1) common; some trials are continuous.
                let x: [Float] = (0..<n).map { _ in
                    trial % 2 == 0 ? Float(Int.random(in: -8...8, using: &g)) / 4 : Float.random(in: -1...1, using: &g)
                }
                for k in 1...4 {
                    let exact = bruteForceSSE(x.map(Double.init), k: k)
                    for solver in [KMeansSolver.layered, .lagrangian, .automatic] {
                        let r = try solve(x, k, solver)
                        XCTAssertEqual(sse(x, r.centroids, r.assignment), exact, accuracy: 1e-9 * (1 + exact),
                                       "n \(n) k \(k) \(solver) x \(x)")
                        XCTAssertEqual(r.centroids, r.centroids.sorted())
                        XCTAssertLessThanOrEqual(r.centroids.count, k)
                    }
                    cases += 1
                }
            }
        }
        XCTAssertGreaterThan(cases, 200)
    }

    /// Evenly spaced points have collinear points on the SSE(k) hull, e.g. 12 points: SSE(4) = 8,
    /// SSE(5) = 5.5, SSE(6) = 3, so no penalty λ yields exactly 5 clusters and the Lagrangian solver
    /// must splice the 4- and 6-cluster solutions.
    func testCollinearHullNeedsSplice() throws {
        let x: [Float] = (0..<12).map(Float.init)
        let r = try solve(x, 5, .lagrangian)
        XCTAssertEqual(sse(x, r.centroids, r.assignment), 5.5, accuracy: 1e-12)
        let oracle = try solve(x, 5, .layered)
        XCTAssertEqual(sse(x, oracle.centroids, oracle.assignment), 5.5, accuracy: 1e-12)
        XCTAssertEqual(r.centroids.count, 5)
        // Larger evenly spaced and duplicated data: the Lagrangian solver agrees with the layered DP
        // for every k.
        let y: [Float] = (0..<300).map { Float($0 % 100) }
        for k in [2, 3, 7, 16, 33, 64, 99] {
            let a = try solve(y, k, .layered), b = try solve(y, k, .lagrangian)
            XCTAssertEqual(sse(y, b.centroids, b.assignment), sse(y, a.centroids, a.assignment),
                           accuracy: 1e-9 * (1 + sse(y, a.centroids, a.assignment)), "k \(k)")
            XCTAssertEqual(b.centroids.count, k)
        }
    }

    /// Medium random data: the two solvers agree (the layered DP is the oracle).
    func testSolversAgreeOnRandomData() throws {
        for (seed, n, k) in [(1, 3000, 16), (2, 2000, 64), (3, 500, 256), (4, 4000, 2)] as [(UInt64, Int, Int)] {
            var g = SeededGenerator(seed: seed)
            let x: [Float] = (0..<n).map { _ in
                let u = Float.random(in: 0.001...1, using: &g)
                return (Float.random(in: -1...1, using: &g) < 0 ? -1 : 1) * u * u  // peaked at zero
            }
            let a = try solve(x, k, .layered), b = try solve(x, k, .lagrangian)
            let ea = sse(x, a.centroids, a.assignment), eb = sse(x, b.centroids, b.assignment)
            XCTAssertEqual(eb, ea, accuracy: 1e-7 * ea, "n \(n) k \(k)")
        }
    }

    /// Fewer distinct values than clusters: every distinct value is a centroid (exact), and the LUT
    /// is padded by repeating the largest centroid so it stays sorted.
    func testFewerDistinctValuesThanClusters() throws {
        let x: [Float] = [3, -1, 3, 0.5, -1, 3, 0, -0.0]
        let (c, a) = try kmeans1D(x, clusters: 8)
        XCTAssertEqual(c, [-1, 0, 0.5, 3])
        XCTAssertEqual(a, [3, 0, 3, 2, 0, 3, 1, 1])
        let lut = try kmeansLUTQuantize(x, bits: 3)
        XCTAssertEqual(lut.table, [-1, 0, 0.5, 3, 3, 3, 3, 3])
        XCTAssertEqual(lut.dequantized(), x.map { $0 == 0 ? 0 : $0 })
        XCTAssertEqual(lut.packed.count, 3)  // 8 codes × 3 bits
        // A constant tensor: one centroid.
        let one = try kmeansLUTQuantize([0.25, 0.25, 0.25], bits: 1)
        XCTAssertEqual(one.table, [0.25, 0.25])
        XCTAssertEqual(one.codes, [0, 0, 0])
    }

    /// Deterministic, ascending LUT, codes < 2^bits, and the LUT decodes through MLGraph.
    func testLUTQuantizeRoundTrip() throws {
        let x = randomFloats(count: 5000, seed: 5)
        let a = try kmeansLUTQuantize(x, bits: 4), b = try kmeansLUTQuantize(x, bits: 4)
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.table.count, 16)
        XCTAssertEqual(a.table, a.table.sorted())
        XCTAssertEqual(Set(a.table).count, 16)
        let t = a.constant(shape: [50, 100])
        XCTAssertEqual(t.floats(), a.dequantized())
        // Uniform data, 16 levels: SQNR ≈ 6.02·4 dB (Lloyd–Max on a uniform density).
        XCTAssertEqual(sqnr(x, a.dequantized()), 24.1, accuracy: 0.6)
    }

    func testErrors() {
        XCTAssertThrowsError(try kmeans1D([], clusters: 2))
        XCTAssertThrowsError(try kmeans1D([1], clusters: 0))
        XCTAssertThrowsError(try kmeans1D([1, .nan], clusters: 2)) {
            guard case .nonFiniteWeight(_, _, 1, _)? = $0 as? QuantizationError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try kmeansLUTQuantize([1], bits: 9))
    }
}
