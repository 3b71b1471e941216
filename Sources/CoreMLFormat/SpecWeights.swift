// Convenience extensions of the generated `Spec.WeightParams` and `Spec.QuantizationParams`
// (Generated/NeuralNetwork.swift, from NeuralNetwork.proto by Scripts/gen-swift-spec, which
// owns the fields, their numbers and the codec): storage kind, float access, dequantization,
// a flattened view of the quantization oneof, and IEEE half conversion.

extension Spec.WeightParams {
    // A weight tensor (`NeuralNetwork.proto` `WeightParams`). Values are the row-major
    // flattening of the owning layer's canonical shape (documented on each layer's params).
    // Normally exactly one storage field is set (Core ML's validator rejects more):
    // `floatValue` (float32), `float16Value` (IEEE half, 2 little-endian bytes each; spec 2+),
    // `rawValue` (quantized, `quantization.numberOfBits` bits each packed MSB-first; spec 3+),
    // `int8RawValue` (signed 8-bit; spec 5+).

    /// float32 weights.
    public init(_ floats: [Float]) { self.init(floatValue: floats) }

    /// Which storage field carries the values.
    public enum Storage: Equatable, Sendable { case empty, float32, float16, quantized, int8, mixed }

    public var storage: Storage {
        let set = [!floatValue.isEmpty, !float16Value.isEmpty, !rawValue.isEmpty, !int8RawValue.isEmpty]
        switch set.filter({ $0 }).count {
        case 0: return .empty
        case 1:
            if set[0] { return .float32 }
            if set[1] { return .float16 }
            if set[2] { return .quantized }
            return .int8
        default: return .mixed
        }
    }

    /// The values as float32 when stored as float32 or float16; nil for quantized, int8,
    /// empty or mixed storage (use `dequantized(count:)` for quantized weights).
    public var floats: [Float]? {
        switch storage {
        case .float32: return floatValue
        case .float16: return Spec.decodeFloat16(float16Value)
        default: return nil
        }
    }

    /// Number of stored elements for float storage (fp16: bytes / 2); nil otherwise.
    public var floatCount: Int? {
        switch storage {
        case .float32: return floatValue.count
        case .float16: return float16Value.count / 2
        default: return nil
        }
    }

    /// Dequantizes `rawValue` (`count` elements of `numberOfBits`, MSB-first): linear
    /// quantization gives `q * scale[c] + bias[c]` where the channel c = i / (count / scale.count)
    /// (one scale means per tensor); a look-up table gives `lut[q]`. `int8RawValue` gives
    /// `Float(Int8(q)) * scale[c]`. Returns float values unchanged; nil when the parameters
    /// are inconsistent (too few bytes, bad table size, or no quantization parameters).
    public func dequantized(count: Int) -> [Float]? {
        if let f = floats { return f.count == count ? f : nil }
        guard let q = quantization, count >= 0 else { return nil }
        if storage == .int8 {
            guard int8RawValue.count == count, case let .linear(scale, _) = q.scheme,
                  !scale.isEmpty, count % scale.count == 0 else { return nil }
            let per = max(1, count / scale.count)
            return (0..<count).map { Float(Int8(bitPattern: int8RawValue[$0])) * scale[$0 / per] }
        }
        guard storage == .quantized, (1...8).contains(q.numberOfBits) else { return nil }
        let bits = Int(q.numberOfBits)
        guard count <= rawValue.count * 8 / bits else { return nil }
        var codes = [Int](repeating: 0, count: count)
        var bit = 0
        for i in 0..<count {
            var v = 0
            for _ in 0..<bits {
                let byte = rawValue[bit >> 3]
                v = (v << 1) | Int((byte >> (7 - UInt8(bit & 7))) & 1)
                bit += 1
            }
            codes[i] = v
        }
        switch q.scheme {
        case let .linear(scale, bias):
            guard !scale.isEmpty, count % scale.count == 0, bias.isEmpty || bias.count == scale.count else { return nil }
            let per = max(1, count / scale.count)
            return (0..<count).map { i in
                let c = i / per
                return Float(codes[i]) * scale[c] + (bias.isEmpty ? 0 : bias[c])
            }
        case let .lookupTable(lut):
            guard lut.count == 1 << bits else { return nil }
            return codes.map { lut[$0] }
        case nil:
            return nil
        }
    }
}

extension Spec.QuantizationParams {
    /// The `QuantizationType` oneof, flattened: the member message's fields as associated values.
    public enum Scheme: Equatable, Sendable {
        /// w = q * scale + bias; one entry per output channel or a single entry per tensor.
        case linear(scale: [Float], bias: [Float])
        /// w = lut[q]; the table has 2^numberOfBits entries.
        case lookupTable([Float])
    }

    /// Quantization parameters of `numberOfBits` bits (1…8) with the oneof member `scheme`.
    public init(numberOfBits: UInt64, scheme: Scheme?, unknownFields: Spec.UnknownFields = []) {
        self.init(numberOfBits: numberOfBits, unknownFields: unknownFields)
        self.scheme = scheme
    }

    /// The `QuantizationType` oneof as a `Scheme`; nil when no member is set. Setting replaces
    /// the member message (its unknown fields are dropped).
    public var scheme: Scheme? {
        get {
            switch quantizationType {
            case nil: return nil
            case let .linearQuantization(l)?: return .linear(scale: l.scale, bias: l.bias)
            case let .lookupTableQuantization(t)?: return .lookupTable(t.floatValue)
            }
        }
        set {
            switch newValue {
            case nil: quantizationType = nil
            case let .linear(scale, bias)?: quantizationType = .linearQuantization(.init(scale: scale, bias: bias))
            case let .lookupTable(lut)?: quantizationType = .lookupTableQuantization(.init(floatValue: lut))
            }
        }
    }
}

extension Spec {
    /// Converts little-endian IEEE 754 half-precision bytes to Float (a trailing odd byte is ignored).
    public static func decodeFloat16(_ bytes: [UInt8]) -> [Float] {
        let n = bytes.count / 2
        var out = [Float](repeating: 0, count: n)
        for i in 0..<n {
            let h = UInt16(bytes[2 * i]) | (UInt16(bytes[2 * i + 1]) << 8)
            out[i] = halfToFloat(h)
        }
        return out
    }

    /// Converts Float to little-endian IEEE half bytes (round to nearest even).
    public static func encodeFloat16(_ values: [Float]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(values.count * 2)
        for v in values {
            let h = floatToHalf(v)
            out.append(UInt8(h & 0xff))
            out.append(UInt8(h >> 8))
        }
        return out
    }

    static func halfToFloat(_ h: UInt16) -> Float {
        let sign = UInt32(h >> 15) << 31
        let exp = Int((h >> 10) & 0x1f)
        let mant = UInt32(h & 0x3ff)
        if exp == 0 {
            if mant == 0 { return Float(bitPattern: sign) }
            let v = Float(mant) * 0x1p-24  // subnormal
            return sign != 0 ? -v : v
        }
        if exp == 31 { return Float(bitPattern: sign | 0x7f80_0000 | (mant << 13)) }
        return Float(bitPattern: sign | (UInt32(exp - 15 + 127) << 23) | (mant << 13))
    }

    static func floatToHalf(_ f: Float) -> UInt16 {
        let bits = f.bitPattern
        let sign = UInt16((bits >> 16) & 0x8000)
        if f.isNaN { return sign | 0x7e00 }
        let a = abs(f)
        if a >= 65520 { return sign | 0x7c00 }  // rounds to infinity
        if a < 0x1p-25 { return sign }
        if a < 0x1p-14 {  // subnormal half
            let m = (a * 0x1p24).rounded(.toNearestOrEven)
            return sign | UInt16(m)
        }
        let e = Int((bits >> 23) & 0xff) - 127
        let mant = bits & 0x7f_ffff
        var h = UInt32(e + 15) << 10 | (mant >> 13)
        let rest = mant & 0x1fff
        if rest > 0x1000 || (rest == 0x1000 && (h & 1) == 1) { h += 1 }
        return sign | UInt16(h)
    }
}
