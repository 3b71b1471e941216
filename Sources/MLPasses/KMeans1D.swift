// Exact, globally optimal 1-D k-means (the engine of `.kmeans(bits:)` LUT quantization).
//
// The optimal clusters of 1-D data are contiguous runs of the sorted values, so k-means becomes a
// k-link shortest path over the n sorted *unique* values (each weighted by how often it occurs):
// cost(j, i) = weighted SSE of unique values j..<i around their weighted mean, computed in O(1) from
// prefix sums. That cost satisfies the quadrangle (concave Monge) inequality
// cost(a,c) + cost(b,d) ≤ cost(a,d) + cost(b,c) for a ≤ b ≤ c ≤ d, which gives the two solvers here:
//
// - `layered`: the classical DP D[m][i] = min_j D[m−1][j] + cost(j, i) (Wu 1991), each layer's row
//   minima found by divide and conquer over the monotone argmin: O(k·n·log n) time, k·n table.
//   Kept as an independent oracle for the tests.
// - `lagrangian`: Lagrangian relaxation ("Aliens trick"; Aggarwal–Schieber–Tokuyama 1994, used by
//   Grønlund et al. 2017): for a penalty λ per cluster, min over partitions of SSE + λ·|clusters| is
//   a 1-D/1-D DP with monotone argmin, solved exactly with a candidate deque and galloping search
//   (≈ n·(few) cost evaluations, independent of k). Concave Monge ⇒ the optimal SSE is convex in the
//   cluster count, so some λ yields exactly k clusters; λ is found by a secant search in
//   log λ / log count (a handful of solves), falling back to exact hull (slope) steps, and when k lies
//   strictly inside a hull edge the two optimal end solutions are spliced at a nested edge pair, which
//   by the Monge inequality yields an optimal k-cluster solution. O(n log U) time, O(n) memory: this
//   is what makes 2M distinct float32 weights × 256 clusters take a fraction of a second.
//
// Both are exact up to floating-point rounding of the double-precision prefix sums (values are
// centred on their mean first to limit cancellation).

import Foundation

/// Which exact solver `kmeans1DCore` uses. `.automatic` is `.lagrangian`, faster at every size
/// measured (n = 100…2M, k = 4…256); `.layered` is kept as an independent oracle for the tests.
enum KMeansSolver: Sendable { case automatic, layered, lagrangian }

/// Result of the exact weighted 1-D k-means on sorted unique values.
struct KMeansPartition {
    /// Start index (into the unique values) of each cluster, then n: `breaks[c]..<breaks[c+1]`.
    var breaks: [Int]
    /// Weighted means of the clusters, ascending (in the original, uncentred units).
    var means: [Double]
    /// Weighted sum of squared errors of the partition.
    var sse: Double
}

/// Prefix sums over weighted, centred, sorted unique values.
struct WeightedPrefix {
    /// Σ weight, Σ weight·x, Σ weight·x² over the first i points (x centred by `shift`), and a
    /// scratch DP value `f` for the Lagrangian solver, interleaved so that one cost evaluation
    /// touches two cache lines.
    struct Point { var w: Double; var s1: Double; var s2: Double; var f: Double }

    let n: Int
    let shift: Double
    /// Points 0...n.
    var points: [Point]

    init(values: [Double], weights: [Double]) {
        n = values.count
        var tw = 0.0, tx = 0.0
        for i in 0..<n { tw += weights[i]; tx += weights[i] * values[i] }
        shift = tw > 0 ? tx / tw : 0
        points = [Point](repeating: Point(w: 0, s1: 0, s2: 0, f: 0), count: n + 1)
        var acc = Point(w: 0, s1: 0, s2: 0, f: 0)
        for i in 0..<n {
            let x = values[i] - shift, w = weights[i]
            acc.w += w; acc.s1 += w * x; acc.s2 += w * x * x
            points[i + 1] = acc
        }
    }

    /// Weighted SSE of points j..<i (j < i) around their mean.
    @inline(__always)
    func cost(_ j: Int, _ i: Int) -> Double {
        let a = points[j], b = points[i]
        let w = b.w - a.w, s = b.s1 - a.s1
        let c = (b.s2 - a.s2) - s * s / w
        return c > 0 ? c : 0
    }

    func mean(_ j: Int, _ i: Int) -> Double { (points[i].s1 - points[j].s1) / (points[i].w - points[j].w) + shift }

    func partition(breaks: [Int]) -> KMeansPartition {
        var sse = 0.0
        var means: [Double] = []
        means.reserveCapacity(breaks.count - 1)
        for c in 0..<(breaks.count - 1) {
            sse += cost(breaks[c], breaks[c + 1])
            means.append(mean(breaks[c], breaks[c + 1]))
        }
        return KMeansPartition(breaks: breaks, means: means, sse: sse)
    }
}

/// Exact weighted k-means of sorted, strictly increasing `values` with positive `weights` into
/// exactly `k` clusters (1 ≤ k ≤ values.count).
/// Memory: about 60 bytes per value (prefix points, deque, parents) besides the inputs.
func kmeans1DCore(values: [Double], weights: [Double], k: Int, solver: KMeansSolver = .automatic) -> KMeansPartition {
    let n = values.count
    precondition(k >= 1 && k <= n, "kmeans1DCore: k = \(k) for \(n) points")
    var prefix = WeightedPrefix(values: values, weights: weights)
    if k == n { return prefix.partition(breaks: Array(0...n)) }
    if k == 1 { return prefix.partition(breaks: [0, n]) }
    let breaks: [Int]
    if solver == .layered {
        breaks = layeredBreaks(prefix, k: k)
    } else {
        var lagrangian = LagrangianSolver(n: n)
        breaks = lagrangian.breaks(&prefix, k: k)
    }
    return prefix.partition(breaks: breaks)
}

// MARK: - Layered DP (divide and conquer per layer)

private func layeredBreaks(_ p: WeightedPrefix, k: Int) -> [Int] {
    let n = p.n
    // arg[m][i]: start of the last cluster of the best m+1-cluster split of points 0..<i.
    var arg = [UInt32](repeating: 0, count: k * (n + 1))
    var prev = [Double](repeating: .infinity, count: n + 1)
    var cur = prev
    for i in 1...n { prev[i] = p.cost(0, i) }
    for m in 1..<k {
        // Layer m (m+1 clusters) over i in (m+1)...(n − (k−1−m)): leave one point per later cluster.
        let iLo = m + 1, iHi = m == k - 1 ? n : n - (k - 1 - m)
        for i in 0...n { cur[i] = .infinity }
        prev.withUnsafeBufferPointer { pv in
            cur.withUnsafeMutableBufferPointer { cv in
                arg.withUnsafeMutableBufferPointer { av in
                    let base = m * (n + 1)
                    // Explicit stack of (iLo, iHi, jLo, jHi).
                    var stack: [(Int, Int, Int, Int)] = [(iLo, iHi, m, iHi - 1)]
                    if m == k - 1 { stack = [(n, n, m, n - 1)] }
                    while let (a, b, jl, jh) = stack.popLast() {
                        if a > b { continue }
                        let mid = (a + b) >> 1
                        var best = Double.infinity, bestJ = jl
                        let hi = min(jh, mid - 1)
                        if jl <= hi {
                            for j in jl...hi {
                                let v = pv[j] + p.cost(j, mid)
                                if v < best { best = v; bestJ = j }
                            }
                        }
                        cv[mid] = best
                        av[base + mid] = UInt32(bestJ)
                        stack.append((a, mid - 1, jl, bestJ))
                        stack.append((mid + 1, b, bestJ, jh))
                    }
                }
            }
        }
        swap(&prev, &cur)
    }
    var breaks = [Int](repeating: 0, count: k + 1)
    breaks[k] = n
    var i = n
    for m in stride(from: k - 1, through: 1, by: -1) {
        i = Int(arg[m * (n + 1) + i])
        breaks[m] = i
    }
    return breaks
}

// MARK: - Lagrangian relaxation

private struct LagrangianSolution {
    var count: Int
    var sse: Double
    var breaks: [Int]
}

private struct LagrangianSolver {
    /// A deque entry: candidate start `j` is the best choice for rows from `start` on, with its
    /// values there and at the last row cached.
    struct Candidate { var j: Int32; var start: Int32; var atStart: Double; var atEnd: Double }

    var parent: [Int32]
    var deque: [Candidate]

    init(n: Int) {
        precondition(n < Int(Int32.max), "kmeans1D: too many distinct values (\(n))")
        parent = [Int32](repeating: 0, count: n + 1)
        deque = [Candidate](repeating: Candidate(j: 0, start: 0, atStart: 0, atEnd: 0), count: n + 1)
    }

    /// Optimal partition for SSE + λ·clusters (any optimal one), by the monotone-argmin deque:
    /// a later start j beats an earlier one from some row on (quadrangle inequality), so each new
    /// candidate either dominates the back of the deque or takes over from a row found by
    /// galloping then binary search.
    mutating func solve(_ p: inout WeightedPrefix, _ lambda: Double) -> LagrangianSolution {
        let n = p.n
        p.points.withUnsafeMutableBufferPointer { P in
        parent.withUnsafeMutableBufferPointer { par in
        deque.withUnsafeMutableBufferPointer { D in
            @inline(__always) func val(_ j: Int, _ x: Int) -> Double {
                let a = P[j], b = P[x]
                let w = b.w - a.w, s = b.s1 - a.s1
                let c = (b.s2 - a.s2) - s * s / w
                return a.f + (c > 0 ? c : 0)
            }
            P[0].f = 0
            var head = 0, tail = 0  // D[head..<tail]
            for i in 1...n {
                // Candidate j = i − 1 serves rows x ≥ i.
                let j = i - 1
                let jAtEnd = val(j, n)
                while tail > head {
                    let back = D[tail - 1]
                    let x = max(Int(back.start), i)
                    let vb = back.start >= i ? back.atStart : val(Int(back.j), x)
                    if val(j, x) <= vb { tail -= 1 } else { break }
                }
                if tail == head {
                    D[tail] = Candidate(j: Int32(j), start: Int32(i), atStart: val(j, i), atEnd: jAtEnd); tail += 1
                } else if jAtEnd <= D[tail - 1].atEnd && max(Int(D[tail - 1].start), i) < n {
                    // j loses at x0 and wins at n: find the first winning row.
                    let b = Int(D[tail - 1].j)
                    let x0 = max(Int(D[tail - 1].start), i)
                    var lo = x0, hi = n, atHi = jAtEnd, step = 1
                    while lo + step < hi {
                        let x = lo + step, v = val(j, x)
                        if v <= val(b, x) { hi = x; atHi = v; break }
                        lo = x
                        step <<= 1
                    }
                    while hi - lo > 1 {
                        let x = (lo + hi) >> 1, v = val(j, x)
                        if v <= val(b, x) { hi = x; atHi = v } else { lo = x }
                    }
                    D[tail] = Candidate(j: Int32(j), start: Int32(hi), atStart: atHi, atEnd: jAtEnd); tail += 1
                }
                while tail - head > 1 && Int(D[head + 1].start) <= i { head += 1 }
                let best = Int(D[head].j)
                P[i].f = (D[head].start == i ? D[head].atStart : val(best, i)) + lambda
                par[i] = Int32(best)
            }
        }}}
        var breaks: [Int] = [n]
        var i = n
        while i > 0 { i = Int(parent[i]); breaks.append(i) }
        breaks.reverse()
        var sse = 0.0
        for c in 0..<(breaks.count - 1) { sse += p.cost(breaks[c], breaks[c + 1]) }
        return LagrangianSolution(count: breaks.count - 1, sse: sse, breaks: breaks)
    }

    /// Breaks of an optimal partition into exactly k clusters (1 < k < n).
    mutating func breaks(_ p: inout WeightedPrefix, k: Int) -> [Int] {
        let n = p.n
        let total = p.cost(0, n)
        // Brackets on the convex curve sse(count): `few` has < k clusters, `many` has > k.
        var few = LagrangianSolution(count: 1, sse: total, breaks: [0, n])
        var many = LagrangianSolution(count: n, sse: 0, breaks: Array(0...n))
        var fewLambda = Double.infinity, manyLambda = 0.0
        var last: (lambda: Double, count: Int)? = nil
        var slopeNext = false
        var iterations = 0
        let target = Double(k)
        while true {
            iterations += 1
            let slope = (few.sse - many.sse) / Double(many.count - few.count)
            var lambda = slope
            // Near the target the exact hull slope is the better guess; far from it, the secant.
            let narrow = many.count - few.count <= max(2, k / 8)
            if !slopeNext && !narrow && iterations <= 60 {
                if fewLambda.isFinite && manyLambda > 0 {
                    // Secant on log λ against log count.
                    let x0 = log(fewLambda), x1 = log(manyLambda)
                    let y0 = log(Double(few.count)), y1 = log(Double(many.count))
                    lambda = exp(x0 + (log(target) - y0) * (x1 - x0) / (y1 - y0))
                } else if let last {
                    // One side known: extrapolate with sse ∝ count⁻², i.e. λ ∝ count⁻³.
                    let r = Double(last.count) / target
                    lambda = last.lambda * r * r * r
                } else {
                    lambda = 2 * total / (target * target * target)
                }
                if !(lambda > manyLambda && lambda < fewLambda) || !lambda.isFinite { lambda = slope }
            }
            let usedSlope = lambda == slope
            let s = solve(&p, lambda)
            last = (lambda, s.count)
            if s.count == k { return s.breaks }
            var progress = false
            if s.count < k && s.count >= few.count {
                progress = s.count > few.count
                few = s; fewLambda = lambda
            } else if s.count > k && s.count <= many.count {
                progress = s.count < many.count
                many = s; manyLambda = lambda
            }
            if usedSlope && !progress {
                // `few` and `many` are adjacent vertices of the convex hull and both optimal at λ:
                // splice them into an optimal k-cluster partition.
                return splice(few.breaks, many.breaks, k: k)
            }
            slopeNext = !progress || iterations > 60
        }
    }
}

/// Splices partition `P` (a < k clusters) and `Q` (b > k clusters), both optimal for the same λ, into
/// one with exactly k clusters: at an edge (q_s, q_{s+1}) of Q strictly nested in an edge
/// (p_t, p_{t+1}) of P with s − t = k − a, the path Q[0…s] → p_{t+1} → P[t+1…a] has k edges, and
/// by the Monge inequality it and its complement cost no more than P and Q together, so both are
/// λ-optimal; a λ-optimal path with k edges is an optimal k-cluster partition.
private func splice(_ P: [Int], _ Q: [Int], k: Int) -> [Int] {
    let a = P.count - 1, b = Q.count - 1
    precondition(a < k && k < b)
    var t = 0
    for s in 0..<b {
        while t + 1 <= a && P[t + 1] <= Q[s] { t += 1 }
        if s - t == k - a && Q[s + 1] < P[t + 1] {
            return Array(Q[0...s]) + Array(P[(t + 1)...])
        }
    }
    preconditionFailure("kmeans1D splice: no nested edge pair (impossible)")
}

