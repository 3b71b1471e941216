extension Spec {
    /// A weight tensor (`NeuralNetwork.proto` `WeightParams`). Values are the row-major
    /// flattening of the owning layer's canonical shape (documented on each layer's params).
    /// Normally exactly one storage field is set (Core ML's validator rejects more).
    public struct WeightParams: Equatable, Sendable {
        /// float32 values (`floatValue`, field 1).
        public var floatValue: [Float]
        /// IEEE half values, 2 little-endian bytes each (`float16Value`, field 2; spec 2+).
        public var float16Value: [UInt8]
        /// Quantized values packed MSB-first, `quantization.numberOfBits` bits each
        /// (`rawValue`, field 30; spec 3+).
        public var rawValue: [UInt8]
        /// Signed 8-bit values (`int8RawValue`, field 31; spec 5+).
        public var int8RawValue: [UInt8]
        public var quantization: QuantizationParams?
        public var isUpdatable: Bool
        public var unknownFields: UnknownFields

        public init(floatValue: [Float] = [], float16Value: [UInt8] = [], rawValue: [UInt8] = [],
                    int8RawValue: [UInt8] = [], quantization: QuantizationParams? = nil,
                    isUpdatable: Bool = false, unknownFields: UnknownFields = []) {
            self.floatValue = floatValue
            self.float16Value = float16Value
            self.rawValue = rawValue
            self.int8RawValue = int8RawValue
            self.quantization = quantization
            self.isUpdatable = isUpdatable
            self.unknownFields = unknownFields
        }

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
                guard int8RawValue.count == count, case let .linear(scale, _) = q.quantizationType,
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
            switch q.quantizationType {
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

    /// `QuantizationParams`.
    public struct QuantizationParams: Equatable, Sendable {
        /// Bits per value, 1…8.
        public var numberOfBits: UInt64
        public var quantizationType: QuantizationType?
        public var unknownFields: UnknownFields

        public enum QuantizationType: Equatable, Sendable {
            /// w = q * scale + bias; one entry per output channel or a single entry per tensor.
            case linear(scale: [Float], bias: [Float])
            /// w = lut[q]; the table has 2^numberOfBits entries.
            case lookupTable([Float])
        }

        public init(numberOfBits: UInt64, quantizationType: QuantizationType?, unknownFields: UnknownFields = []) {
            self.numberOfBits = numberOfBits
            self.quantizationType = quantizationType
            self.unknownFields = unknownFields
        }
    }

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

// MARK: - C bridge

extension Spec.WeightParams: CMessageCodable {
    init(reading r: CReader) throws {
        floatValue = r.floats(1)
        float16Value = r.bytes(2)
        rawValue = r.bytes(30)
        int8RawValue = r.bytes(31)
        quantization = try r.message(40)
        isUpdatable = r.bool(50)
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        w.set(1, floats: floatValue)
        w.set(2, bytes: float16Value)
        w.set(30, bytes: rawValue)
        w.set(31, bytes: int8RawValue)
        try w.set(40, message: quantization)
        w.set(50, bool: isUpdatable)
        w.setUnknownFields(unknownFields)
    }
}

private struct LinearQuantization: CMessageCodable {
    var scale: [Float], bias: [Float]
    init(scale: [Float], bias: [Float]) {
        self.scale = scale
        self.bias = bias
    }
    init(reading r: CReader) throws {
        scale = r.floats(1)
        bias = r.floats(2)
    }
    func write(to w: CWriter) throws {
        w.set(1, floats: scale)
        w.set(2, floats: bias)
    }
}

private struct LookUpTable: CMessageCodable {
    var values: [Float]
    init(_ values: [Float]) { self.values = values }
    init(reading r: CReader) throws { values = r.floats(1) }
    func write(to w: CWriter) throws { w.set(1, floats: values) }
}

extension Spec.QuantizationParams: CMessageCodable {
    init(reading r: CReader) throws {
        numberOfBits = r.uint64(1)
        switch r.oneofCase(101) {
        case 101:
            let l = try r.message(101, as: LinearQuantization.self)!
            quantizationType = .linear(scale: l.scale, bias: l.bias)
        case 102: quantizationType = .lookupTable(try r.message(102, as: LookUpTable.self)!.values)
        default: quantizationType = nil
        }
        unknownFields = r.unknownFields
    }
    func write(to w: CWriter) throws {
        w.set(1, uint64: numberOfBits)
        switch quantizationType {
        case nil: break
        case let .linear(scale, bias): try w.set(101, message: LinearQuantization(scale: scale, bias: bias))
        case let .lookupTable(lut): try w.set(102, message: LookUpTable(lut))
        }
        w.setUnknownFields(unknownFields)
    }
}
