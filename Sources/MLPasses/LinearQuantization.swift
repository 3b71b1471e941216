import MLGraph

/// The result of `linearQuantize` / `linearSymmetricQuantize`: unsigned codes plus an affine map
/// per channel, w ≈ Float(code)·scale[c] + bias[c] (Core ML `linearQuantization`).
public struct LinearQuantizedTensor: Sendable, Equatable {
    /// Bits per code, 1…8.
    public var bits: Int
    /// Axis of `shape` that `scale`/`bias` index (0 when per-tensor).
    public var axis: Int
    /// The tensor's shape (row-major).
    public var shape: [Int]
    /// One scale per channel along `axis`, or one for the whole tensor (1-D tensors), as float32.
    public var scale: [Float]
    /// One bias per channel (the channel minimum for asymmetric mode, −128·scale for symmetric).
    public var bias: [Float]
    /// One code per value, row-major, each in 0..<2^bits.
    public var codes: [UInt8]

    /// The codes packed MSB-first with the tail zero-padded (coreml-format-facts §2.8), as stored.
    public var packed: [UInt8] { packMSBFirst(codes, bits: bits) }
    /// `WeightEncoding.linear` describing this tensor.
    public var encoding: WeightEncoding { .linear(LinearQuantization(bits: bits, axis: axis, scale: scale, bias: bias)) }

    /// A `ConstantTensor` holding the packed codes with this encoding.
    public func constant() -> ConstantTensor {
        // Cannot fail: the packed size matches the encoding by construction.
        try! ConstantTensor(shape: shape, encoding: encoding, storage: packed.withUnsafeBytes { ByteStorage(copying: $0) })
    }

    /// The reconstructed values, computed exactly as `ConstantTensor.floats()` does.
    public func dequantized() -> [Float] {
        let axisLen = axis < shape.count ? shape[axis] : 1
        let inner = axis < shape.count ? shape[(axis + 1)...].reduce(1, *) : 1
        return codes.indices.map { i in
            let c = scale.count == 1 ? 0 : (i / inner) % axisLen
            return Float(codes[i]) * scale[c] + bias[c]
        }
    }
}

/// Linear (asymmetric) n-bit quantization per channel, byte-identical to coremltools'
/// `_quantize_channelwise_linear` (coreml-format-facts §2.3): for each channel c along `axis`,
/// a = min, b = max, scale = (b − a)/(2^bits − 1), bias = a, inv = 1/scale (0 when |scale| ≤ 1e-6),
/// code = round-half-even((w − a)·inv), all in float64 as NumPy does; scale and bias are then
/// stored as float32. Tensors of rank ≤ 1 get a single scale and bias (coremltools reshapes them
/// to (1, N)), reported with axis 0.
///
/// - Parameters:
///   - values: row-major values of `shape`, all finite.
///   - shape: the canonical weight shape (e.g. conv2d [Cout, Cin/g, kH, kW]).
///   - axis: the channel axis: 0 for conv2d and dense weights, 1 for deconv2d weights.
///   - bits: 1…8.
/// - Throws: `QuantizationError.invalidBits`; `.invalidArgument` when `values.count` differs from
///   the product of `shape`, the tensor is empty, or `axis` is out of range;
///   `.nonFiniteWeight` for NaN/±inf.
public func linearQuantize(_ values: [Float], shape: [Int], axis: Int, bits: Int) throws -> LinearQuantizedTensor {
    guard (1...8).contains(bits) else { throw QuantizationError.invalidBits(mode: "linear", bits: bits) }
    return try values.withUnsafeBufferPointer { try linearQuantizeCore($0, shape: shape, axis: shape.count <= 1 ? nil : axis, bits: bits, symmetric: false) }
}

/// Linear symmetric 8-bit quantization per channel (coremltools `linear_symmetric`, §2.4):
/// r = max(|min|, |max|), scale = r/127, bias = −128·scale, code = round-half-even((w − bias)/scale)
/// (0 when |scale| ≤ 1e-6), so codes lie in 1…255 and 128 decodes to exactly 0 (int8 −127…127 with
/// zero point 0). Same float64 maths, axis and 1-D rules as `linearQuantize`.
/// - Throws: as `linearQuantize` (never `.invalidBits`).
public func linearSymmetricQuantize(_ values: [Float], shape: [Int], axis: Int) throws -> LinearQuantizedTensor {
    try values.withUnsafeBufferPointer { try linearQuantizeCore($0, shape: shape, axis: shape.count <= 1 ? nil : axis, bits: 8, symmetric: true) }
}

/// Shared body of the linear modes; `axis` nil means one scale and bias for the whole tensor.
func linearQuantizeCore(_ values: UnsafeBufferPointer<Float>, shape: [Int], axis: Int?, bits: Int,
                        symmetric: Bool) throws -> LinearQuantizedTensor
{
    let n = shape.reduce(1, *)
    guard values.count == n else {
        throw QuantizationError.invalidArgument("\(values.count) values for shape \(formatShape(shape)) (needs \(n))")
    }
    guard n > 0 else { throw QuantizationError.invalidArgument("cannot quantize an empty tensor of shape \(formatShape(shape))") }
    let perTensor = axis == nil
    let axis = axis ?? 0
    guard perTensor || (0..<shape.count).contains(axis) else {
        throw QuantizationError.invalidArgument("axis \(axis) out of range for shape \(formatShape(shape))")
    }
    for i in 0..<n where !values[i].isFinite {
        throw QuantizationError.nonFiniteWeight(node: "", weight: "", index: i, value: values[i])
    }
    let channels = perTensor ? 1 : shape[axis]
    let inner = perTensor ? n : shape[(axis + 1)...].reduce(1, *)
    @inline(__always) func channel(_ i: Int) -> Int { perTensor ? 0 : (i / inner) % channels }

    var lo = [Double](repeating: .infinity, count: channels)
    var hi = [Double](repeating: -.infinity, count: channels)
    for i in 0..<n {
        let c = channel(i), v = Double(values[i])
        if v < lo[c] { lo[c] = v }
        if v > hi[c] { hi[c] = v }
    }
    var scale = [Double](repeating: 0, count: channels)
    var bias = [Double](repeating: 0, count: channels)
    var inv = [Double](repeating: 0, count: channels)
    for c in 0..<channels {
        if symmetric {
            let r = Swift.max(Swift.abs(lo[c]), Swift.abs(hi[c]))
            scale[c] = r / (Double(1 << bits) / 2.0 - 1)
            bias[c] = -Double(1 << bits) / 2.0 * scale[c]
        } else {
            scale[c] = (hi[c] - lo[c]) / Double((1 << bits) - 1)
            bias[c] = lo[c]
            inv[c] = Swift.abs(scale[c]) > 1e-6 ? 1.0 / scale[c] : 0
        }
    }
    let maxCode = Double((1 << bits) - 1)
    var codes = [UInt8](repeating: 0, count: n)
    for i in 0..<n {
        let c = channel(i), w = Double(values[i])
        var q: Double
        if symmetric {
            q = Swift.abs(scale[c]) > 1e-6 ? ((w - bias[c]) / scale[c]).rounded(.toNearestOrEven) : 0
        } else {
            q = ((w - bias[c]) * inv[c]).rounded(.toNearestOrEven)
        }
        // coremltools casts with np.uint8 without clipping; the maths keeps q in range, the clamp
        // only guards against a float64 rounding surprise.
        q = Swift.min(Swift.max(q, 0), maxCode)
        codes[i] = UInt8(q)
    }
    return LinearQuantizedTensor(bits: bits, axis: perTensor ? 0 : axis, shape: shape,
                                 scale: scale.map { Float($0) }, bias: bias.map { Float($0) }, codes: codes)
}
