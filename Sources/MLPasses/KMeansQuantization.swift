import MLGraph

/// Exact, globally optimal 1-D k-means: partitions `values` into at most `clusters` groups
/// minimising the sum of squared errors Σ (w − centroid(w))².
///
/// Works on the sorted *unique* values weighted by their counts (coremltools' `kmeans1d` does the
/// same) with Lagrangian relaxation over the cluster count and an exact monotone-argmin DP per
/// penalty (see `KMeans1D.swift`), so the time hardly depends on `clusters`. Deterministic.
/// -0.0 and +0.0 count as one value.
///
/// - Parameters:
///   - values: the data (any order, any count ≥ 1); all finite.
///   - clusters: the maximum number of clusters, ≥ 1.
/// - Returns: `centroids`, strictly ascending, min(clusters, number of distinct values) of them
///   (each the float32 rounding of its cluster's mean, so a value equal to a centroid is exact);
///   `assignment[i]` is the index of the centroid nearest to `values[i]` (ties to the lower index),
///   which is the optimal partition.
/// - Throws: `QuantizationError.invalidArgument` for `clusters < 1` or empty `values`;
///   `QuantizationError.nonFiniteWeight` for NaN or ±inf.
/// - Complexity: O(n) radix sort and assignment, plus a few (typically 2–6) O(u)-ish DP solves for
///   u distinct values (galloping makes each O(u log u) in the worst case). Measured in release
///   builds on 2 cores: 2M normal float32 values × 256 clusters ≈ 0.35 s end to end.
public func kmeans1D(_ values: [Float], clusters: Int) throws -> (centroids: [Float], assignment: [Int]) {
    let r = try values.withUnsafeBufferPointer { try kmeansCluster($0, clusters: clusters, solver: .automatic) }
    return (r.centroids, r.codes.map { Int($0) })
}

/// The result of `kmeansLUTQuantize`: a 2^bits look-up table and one code per value.
public struct LUTQuantizedTensor: Sendable, Equatable {
    /// Bits per code, 1…8.
    public var bits: Int
    /// 2^bits entries, non-decreasing: the optimal centroids ascending, then (when the tensor has
    /// fewer distinct values than 2^bits) the last centroid repeated, so the table stays sorted and
    /// every slot decodes to a real centroid. (coremltools' sklearn path zero-fills instead; the
    /// padding is never referenced by a code either way.)
    public var table: [Float]
    /// One code per value, row-major, each < number of distinct centroids.
    public var codes: [UInt8]

    /// The codes packed MSB-first (coreml-format-facts §2.8), as stored in the weight bytes.
    public var packed: [UInt8] { packMSBFirst(codes, bits: bits) }
    /// A `ConstantTensor` of `shape` (whose element count must equal `codes.count`) holding the
    /// packed codes with this encoding.
    public func constant(shape: [Int]) -> ConstantTensor {
        precondition(shape.reduce(1, *) == codes.count, "LUTQuantizedTensor: shape \(shape) for \(codes.count) codes")
        return try! ConstantTensor(shape: shape, encoding: encoding, storage: packed.withUnsafeBytes { ByteStorage(copying: $0) })
    }

    /// The reconstructed values table[code].
    public func dequantized() -> [Float] { codes.map { table[Int($0)] } }
    /// `WeightEncoding.lookupTable` describing this tensor.
    public var encoding: WeightEncoding { .lookupTable(LookupTableQuantization(bits: bits, table: table)) }
}

/// k-means look-up-table quantization of one tensor (per-tensor LUT, as coremltools `kmeans_lut`),
/// using the exact `kmeans1D` with 2^bits clusters.
/// - Throws: `QuantizationError.invalidBits` unless 1 ≤ bits ≤ 8; the errors of `kmeans1D`.
public func kmeansLUTQuantize(_ values: [Float], bits: Int) throws -> LUTQuantizedTensor {
    guard (1...8).contains(bits) else { throw QuantizationError.invalidBits(mode: "k-means", bits: bits) }
    return try values.withUnsafeBufferPointer { try kmeansLUT($0, bits: bits, solver: .automatic) }
}

func kmeansLUT(_ values: UnsafeBufferPointer<Float>, bits: Int, solver: KMeansSolver) throws -> LUTQuantizedTensor {
    let r = try kmeansCluster(values, clusters: 1 << bits, solver: solver)
    var table = r.centroids
    while table.count < 1 << bits { table.append(table[table.count - 1]) }
    return LUTQuantizedTensor(bits: bits, table: table, codes: r.codes.map { UInt8(truncatingIfNeeded: $0) })
}

/// Sorted distinct values with their multiplicities.
func sortedUnique(_ values: UnsafeBufferPointer<Float>) -> (values: [Double], counts: [Double]) {
    var sorted = radixSorted(values)
    var uv: [Double] = [], uc: [Double] = []
    uv.reserveCapacity(min(values.count, 1 << 16)); uc.reserveCapacity(min(values.count, 1 << 16))
    sorted.withUnsafeMutableBufferPointer { s in
        var i = 0
        let n = s.count
        while i < n {
            let v = s[i]
            var j = i + 1
            while j < n && s[j] == v { j += 1 }
            uv.append(Double(v)); uc.append(Double(j - i))
            i = j
        }
    }
    return (uv, uc)
}

/// Ascending sort of finite floats by an LSD radix sort on order-preserving keys (3 passes of
/// 11 bits). -0.0 sorts just before +0.0; they compare equal afterwards.
func radixSorted(_ values: UnsafeBufferPointer<Float>) -> [Float] {
    let n = values.count
    if n < 256 { return values.sorted() }
    var keys = [UInt32](repeating: 0, count: n)
    var tmp = keys
    for i in 0..<n {
        let b = values[i].bitPattern
        keys[i] = b & 0x8000_0000 != 0 ? ~b : b | 0x8000_0000
    }
    keys.withUnsafeMutableBufferPointer { kp in
        tmp.withUnsafeMutableBufferPointer { tp in
            var src = kp, dst = tp
            var count = [Int](repeating: 0, count: 2048)
            for pass in 0..<3 {
                let shift = UInt32(pass * 11)
                for i in 0..<2048 { count[i] = 0 }
                for i in 0..<n { count[Int((src[i] >> shift) & 0x7FF)] += 1 }
                var sum = 0
                for i in 0..<2048 { let c = count[i]; count[i] = sum; sum += c }
                for i in 0..<n {
                    let d = Int((src[i] >> shift) & 0x7FF)
                    dst[count[d]] = src[i]
                    count[d] += 1
                }
                swap(&src, &dst)
            }
            // After 3 passes the result is in `dst` of the last swap, i.e. `src` now.
            if src.baseAddress != kp.baseAddress { kp.baseAddress!.update(from: src.baseAddress!, count: n) }
        }
    }
    return keys.map { k in Float(bitPattern: k & 0x8000_0000 != 0 ? k & 0x7FFF_FFFF : ~k) }
}

/// Exact k-means into ≤ `clusters` clusters; codes index the ascending centroids.
func kmeansCluster(_ values: UnsafeBufferPointer<Float>, clusters: Int, solver: KMeansSolver) throws
    -> (centroids: [Float], codes: [Int32])
{
    guard clusters >= 1 else { throw QuantizationError.invalidArgument("k-means needs at least 1 cluster, got \(clusters)") }
    guard !values.isEmpty else { throw QuantizationError.invalidArgument("k-means of an empty tensor") }
    for (i, v) in values.enumerated() where !v.isFinite {
        throw QuantizationError.nonFiniteWeight(node: "", weight: "", index: i, value: v)
    }
    let (uv, uc) = sortedUnique(values)
    let centroids: [Float]
    if uv.count <= clusters {
        centroids = uv.map { Float($0) }
    } else {
        let part = kmeans1DCore(values: uv, weights: uc, k: clusters, solver: solver)
        centroids = part.means.map { Float($0) }
    }
    // Nearest centroid by binary search over the midpoints (ties to the lower index). For the
    // optimal partition every point is nearest to its own cluster's mean, so this reproduces it.
    let k = centroids.count
    var mids = [Double](repeating: 0, count: max(k - 1, 0))
    for c in 0..<(k - 1) { mids[c] = (Double(centroids[c]) + Double(centroids[c + 1])) / 2 }
    var codes = [Int32](repeating: 0, count: values.count)
    mids.withUnsafeBufferPointer { m in
        codes.withUnsafeMutableBufferPointer { out in
            for i in 0..<values.count {
                let v = Double(values[i])
                var lo = 0, hi = k - 1  // answer in lo...hi
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if v <= m[mid] { hi = mid } else { lo = mid + 1 }
                }
                out[i] = Int32(lo)
            }
        }
    }
    return (centroids, codes)
}
