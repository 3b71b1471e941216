// Row-major multi-index stepping shared by the weight-compression block maps (CompressedWeights)
// and the MIL importers that enumerate index grids (slice_update in MILOpsMoreC).

/// Moves `index` to the next multi-index of `shape` in row-major order (last axis fastest),
/// wrapping to all zeros after the last one.
/// - Parameters:
///   - index: the current multi-index, one entry per axis of `shape`, each in 0..<shape[d].
///   - shape: the extents of the index space.
public func advanceRowMajor(_ index: inout [Int], shape: [Int]) {
    var d = shape.count - 1
    while d >= 0 {
        index[d] += 1
        if index[d] < shape[d] { return }
        index[d] = 0
        d -= 1
    }
}
