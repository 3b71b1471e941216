/// The largest finite float16 magnitude.
public let float16Max: Float = 65504

/// Converts float32 values to IEEE binary16 with round-to-nearest-even (Swift's `Float16(_:)`),
/// as NumPy's `astype(float16)` does for coremltools' fp16 weights (§2.9).
///
/// NaN stays NaN and ±inf stays ±inf. A finite value with |w| > 65504 would overflow to ±inf, so
/// it is an error, or, with `clamp`, becomes ±65504. (coremltools rejects |w| ≥ 65504; exactly
/// ±65504 is representable and accepted here.) Values below the float16 subnormal range round to
/// ±0 as IEEE requires.
///
/// - Throws: `QuantizationError.fp16Overflow` (node and weight empty) for the first out-of-range
///   value when `clamp` is false.
public func convertToFloat16(_ values: [Float], clamp: Bool = false) throws -> [Float16] {
    try values.withUnsafeBufferPointer { try float16Bits($0, clamp: clamp).map { Float16(bitPattern: $0) } }
}

/// Little-endian-ready bit patterns of the float16 conversion (see `convertToFloat16`).
func float16Bits(_ values: UnsafeBufferPointer<Float>, clamp: Bool) throws -> [UInt16] {
    var out = [UInt16](repeating: 0, count: values.count)
    for i in 0..<values.count {
        var v = values[i]
        if v.isFinite && Swift.abs(v) > float16Max {
            guard clamp else { throw QuantizationError.fp16Overflow(node: "", weight: "", index: i, value: v) }
            v = v < 0 ? -float16Max : float16Max
        }
        out[i] = Float16(v).bitPattern
    }
    return out
}
