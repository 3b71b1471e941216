// MIL constexpr_* ops (compressed weights). Each result is a constant that stays compressed —
// `WeightEncoding.blockwise`, `.palettized`, `.sparse` (MLGraph/CompressedWeights.swift), fp16 for
// constexpr_cast — so that a compiled bundle stores the compressed bytes and the runtime expands
// them to float32 once, at load. A form those encodings cannot hold (e.g. a float `data` operand)
// is expanded here to float values as before. Semantics as coremltools' op definitions
// (ops/defs/iOS16/constexpr_ops.py, iOS18/compression.py):
//   constexpr_affine_dequantize (iOS16)   scale · (quantized_data − zero_point), scale and zero
//                                         point scalar or per index of `axis`
//   constexpr_cast (iOS16)                source_val (fp16) → output_dtype
//   constexpr_lut_to_dense (iOS16)        lut[indices]: indices packed LSB first in uint8 bytes,
//                                         log2(lut size) bits each, output `shape`
//   constexpr_sparse_to_dense (iOS16)     `mask` bits (uint8 bytes, LSB first) mark the non-zero
//                                         positions, filled with nonzero_data in order
//   constexpr_blockwise_shift_scale (18)  (data − offset[block]) · scale[block]; the block of an
//                                         element divides each axis by data.dim / scale.dim
//   constexpr_lut_to_dense (iOS18)        lut[block…, indices, 0] (vector size 1)
//   constexpr_sparse_to_dense (iOS18)     mask (uint1, the output shape) + nonzero_data
//   constexpr_lut_to_sparse (iOS18)       (mask, lut of the non-zero indices)
//   constexpr_sparse_blockwise_shift_scale (iOS18)  (mask, dequantized non-zero data)
import MLGraph

enum MILConstexprOps {
    /// Row-major coordinates of flat index `i` in `shape`.
    static func coords(_ i: Int, _ shape: [Int]) -> [Int] {
        var c = [Int](repeating: 0, count: shape.count)
        var r = i
        for d in stride(from: shape.count - 1, through: 0, by: -1) where shape[d] > 0 {
            c[d] = r % shape[d]
            r /= shape[d]
        }
        return c
    }

    /// The flat index in the block grid `blocks` (same rank as `shape`, each dividing it) of the
    /// element at flat index `i` of `shape`.
    static func blockIndex(_ i: Int, shape: [Int], blocks: [Int]) -> Int {
        let c = coords(i, shape)
        var f = 0
        for d in 0..<shape.count { f = f * blocks[d] + c[d] / (shape[d] / blocks[d]) }
        return f
    }

    /// Checks that `param`'s shape divides `shape` axis by axis (a scalar or a lower rank is
    /// padded with leading 1s).
    static func blockShape(_ k: MILConst, for shape: [Int], _ what: String) throws -> [Int] {
        var s = k.shape
        if s.count < shape.count { s = [Int](repeating: 1, count: shape.count - s.count) + s }
        guard s.count == shape.count, zip(shape, s).allSatisfy({ $1 > 0 && $0 % $1 == 0 }) else {
            throw LayerImportFailure("has \(what) of shape \(k.shape), which does not divide the data shape \(shape) into blocks")
        }
        return s
    }

    /// The values of a uint8 constant (packed indices or mask bits) as bytes.
    static func byteValues(_ k: MILConst, _ what: String) throws -> [UInt8] {
        try k.doubles().map { d in
            guard let v = UInt8(exactly: d) else { throw LayerImportFailure("has \(what) value \(d); expected bytes 0…255") }
            return v
        }
    }

    static func floatResult(_ values: [Double], shape: [Int], type: MILTensorType?) -> MILConst {
        MILConst(shape: shape, dataType: type?.dataType ?? .float32, numbers: values)
    }

    static func affineDequantize(_ c: MILOpContext) throws -> [MILValue] {
        let q = try c.requiredConstant("quantized_data"), zp = try c.requiredConstant("zero_point"), scale = try c.requiredConstant("scale")
        let axis = try c.axis(try c.int("axis"), rank: q.shape.count)
        let qv = q.doubles(), zv = zp.doubles(), sv = scale.floats()
        let n = q.shape[axis]
        guard zv.count == 1 || zv.count == n, sv.count == 1 || sv.count == n else {
            throw LayerImportFailure("has \(sv.count) scales and \(zv.count) zero points for axis \(axis) of size \(n)")
        }
        let type = try c.outputType()
        // Per-channel (or per-tensor) blocks along `axis`.
        let perChannel = sv.count > 1 || zv.count > 1
        var blocks = [Int](repeating: 1, count: q.shape.count)
        if perChannel { blocks[axis] = n }
        let nb = perChannel ? n : 1
        let scales = (0..<nb).map { sv[sv.count == 1 ? 0 : $0] }
        let zeros = (0..<nb).map { Float(zv[zv.count == 1 ? 0 : $0]) }
        if let t = try blockwiseTensor(data: q, values: qv, shape: q.shape, blocks: blocks, scales: scales, zeroPoints: zeros) {
            return [.constant(MILConst(shape: q.shape, dataType: type?.dataType ?? .float32, tensor: t))]
        }
        let inner = q.shape[(axis + 1)...].reduce(1, *)
        let out = qv.indices.map { i -> Double in
            let ch = (i / inner) % n
            return Double(sv[sv.count == 1 ? 0 : ch]) * (qv[i] - zv[zv.count == 1 ? 0 : ch])
        }
        return [.constant(floatResult(out, shape: q.shape, type: type))]
    }

    /// The codes of integer data of MIL type `data.dataType` (int8 / uint8 / int4 / uint4 / …) as
    /// `bits`-bit two's-complement or unsigned bytes; nil when the type is not an integer type of
    /// at most 8 bits. - Throws: when a value does not fit the type.
    static func integerCodes(_ data: MILConst, _ values: [Double]) throws -> (codes: [UInt8], bits: Int, signed: Bool)? {
        let signed: Bool
        switch data.dataType {
        case .int8, .int4: signed = true
        case .uint8, .uint4, .uint1, .uint2, .uint3, .uint6: signed = false
        default: return nil
        }
        guard let bits = MILTypes.bitWidth(data.dataType), bits <= 8 else { return nil }
        let lo = signed ? -(1 << (bits - 1)) : 0, hi = signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1
        let codes = try values.map { v -> UInt8 in
            guard let i = Int(exactly: v), i >= lo, i <= hi else {
                throw LayerImportFailure("has the value \(v) in its \(MILTypes.name(data.dataType)) data; expected \(lo)…\(hi)")
            }
            return UInt8(truncatingIfNeeded: i)
        }
        return (codes, bits, signed)
    }

    /// A `.blockwise` constant of integer `data` (nil when `data` is not integer-typed), or the
    /// same values as sparse `values` of a dense shape when `mask` is given.
    static func blockwiseTensor(data: MILConst, values: [Double], shape: [Int], blocks: [Int], scales: [Float], zeroPoints: [Float]?,
                                mask: [Bool]? = nil) throws -> ConstantTensor? {
        guard let (codes, bits, signed) = try integerCodes(data, values) else { return nil }
        let hasZero = zeroPoints.map { $0.contains { $0 != 0 } } ?? false
        let q = WeightEncoding.blockwise(BlockwiseQuantization(bits: bits, signed: signed, blocks: blocks, hasZeroPoint: hasZero))
        let params = scales + (hasZero ? zeroPoints ?? [] : [])
        return try compressedTensor(shape: shape, encoding: q, codes: codes, parameters: params, mask: mask)
    }

    /// A compressed constant of `codes` in `encoding`, or, when `mask` is given, the same codes as
    /// the sparse nonzero values of a dense `shape` (`encoding` then describes those values).
    /// - Throws: `LayerImportFailure` when ConstantTensor rejects the codes or parameters.
    static func compressedTensor(shape: [Int], encoding: WeightEncoding, codes: [UInt8], parameters: [Float],
                                 mask: [Bool]?) throws -> ConstantTensor {
        do {
            if let mask {
                return try ConstantTensor.compressed(shape: shape, encoding: .sparse(SparseEncoding(nonzeroCount: codes.count, values: encoding)),
                                                     codes: codes, parameters: parameters, mask: mask)
            }
            return try ConstantTensor.compressed(shape: shape, encoding: encoding, codes: codes, parameters: parameters)
        } catch let e as GraphError {
            throw LayerImportFailure("has compressed weights mlconv cannot store", cause: e)
        }
    }

    /// A `.palettized` constant: codes < `palettes`, one palette of `palettes` entries per block
    /// (row-major in `lut`), padded with zeros to 2^bits entries.
    static func palettizedTensor(codes: [UInt8], bits: Int, shape: [Int], blocks: [Int], lut: [Float], palettes: Int,
                                 mask: [Bool]? = nil) throws -> ConstantTensor {
        let width = 1 << bits
        guard palettes <= width else { throw LayerImportFailure("has palettes of \(palettes) entries for \(bits)-bit indices") }
        let nb = blocks.reduce(1, *)
        guard lut.count == nb * palettes else { throw LayerImportFailure("has \(lut.count) lut entries for \(nb) palettes of \(palettes)") }
        var table = [Float](repeating: 0, count: nb * width)
        for b in 0..<nb { for k in 0..<palettes { table[b * width + k] = lut[b * palettes + k] } }
        let p = WeightEncoding.palettized(PalettizedQuantization(bits: bits, blocks: blocks))
        return try compressedTensor(shape: shape, encoding: p, codes: codes, parameters: table, mask: mask)
    }

    /// Checks indices against a palette size and returns them as bytes.
    static func paletteCodes(_ iv: [Double], palettes: Int) throws -> [UInt8] {
        try iv.map { v -> UInt8 in
            guard let k = Int(exactly: v), k >= 0, k < palettes, k <= 255 else { throw LayerImportFailure("has index \(v) for a palette of \(palettes)") }
            return UInt8(k)
        }
    }

    static func lutToDense(_ c: MILOpContext) throws -> [MILValue] {
        let lut = try c.requiredConstant("lut")
        let lv = lut.floats()
        let type = try c.outputType()
        if let shapeConst = try c.constant("shape") {  // iOS16: packed uint8 indices
            let shape = try shapeConst.doubles().map { try Checked.int(UInt64(exactly: $0) ?? UInt64.max, "shape") }
            let count = try Checked.product(shape, "output shape")
            let bits = lv.count.trailingZeroBitCount
            guard lv.count >= 2, lv.count == 1 << bits, bits <= 8 else { throw LayerImportFailure("has a lut of \(lv.count) entries; expected 2, 4, 16, 64 or 256") }
            let packed = try byteValues(try c.requiredConstant("indices"), "indices")
            guard let idx = packed.withUnsafeBytes({ unpackLSBFirst($0, bits: bits, count: count) }) else {
                throw LayerImportFailure("has \(packed.count) index bytes for \(count) \(bits)-bit indices")
            }
            let t = try palettizedTensor(codes: idx.map { UInt8(truncatingIfNeeded: $0) }, bits: bits, shape: shape,
                                         blocks: [Int](repeating: 1, count: shape.count), lut: lv, palettes: lv.count)
            return [.constant(MILConst(shape: shape, dataType: type?.dataType ?? .float32, tensor: t))]
        }
        // iOS18: typed indices of the output shape; lut [blocks…, palettes, vector size].
        let ind = try c.requiredConstant("indices")
        let shape = ind.shape
        guard lut.shape.count == shape.count + 2 else {
            throw LayerImportFailure("has a lut of shape \(lut.shape) for indices of rank \(shape.count); expected rank \(shape.count + 2)")
        }
        guard lut.shape.last == 1 else { throw LayerImportFailure("has vector-valued palettes (vector size \(lut.shape.last ?? 0)), not supported") }
        let palettes = lut.shape[shape.count]
        let blocks = Array(lut.shape.prefix(shape.count))
        guard zip(shape, blocks).allSatisfy({ $1 > 0 && $0 % $1 == 0 }) else { throw LayerImportFailure("has lut blocks \(blocks) that do not divide \(shape)") }
        let codes = try paletteCodes(ind.doubles(), palettes: palettes)
        let bits = try paletteBits(ind, palettes: palettes)
        let t = try palettizedTensor(codes: codes, bits: bits, shape: shape, blocks: blocks, lut: lv, palettes: palettes)
        return [.constant(MILConst(shape: shape, dataType: type?.dataType ?? .float32, tensor: t))]
    }

    /// Bits of the codes of an iOS18 palettization: the index type's width (uint1…uint8), at
    /// least enough for `palettes` entries.
    static func paletteBits(_ ind: MILConst, palettes: Int) throws -> Int {
        var bits = 1
        while 1 << bits < palettes { bits += 1 }
        if let w = MILTypes.bitWidth(ind.dataType), w <= 8 { bits = max(bits, w) }
        guard bits <= 8 else { throw LayerImportFailure("has palettes of \(palettes) entries; mlconv supports at most 256") }
        return bits
    }

    static func sparseToDense(_ c: MILOpContext) throws -> [MILValue] {
        let nzConst = try c.requiredConstant("nonzero_data")
        let maskConst = try c.requiredConstant("mask")
        let type = try c.outputType()
        let shape: [Int], mask: [Bool]
        if let shapeConst = try c.constant("shape") {  // iOS16: mask bits packed in uint8
            shape = try shapeConst.doubles().map { try Checked.int(UInt64(exactly: $0) ?? UInt64.max, "shape") }
            let count = try Checked.product(shape, "output shape")
            let packed = try byteValues(maskConst, "mask")
            guard let bits = packed.withUnsafeBytes({ unpackLSBFirst($0, bits: 1, count: count) }) else {
                throw LayerImportFailure("has \(packed.count) mask bytes for \(count) values")
            }
            mask = bits.map { $0 != 0 }
        } else {
            shape = maskConst.shape
            mask = maskConst.doubles().map { $0 != 0 }
        }
        let setBits = mask.reduce(0) { $0 + ($1 ? 1 : 0) }
        guard setBits == nzConst.elementCount else {
            throw LayerImportFailure("has \(nzConst.elementCount) non-zero values for \(setBits) set mask bits")
        }
        // The non-zero data of constexpr_lut_to_sparse / _sparse_blockwise_shift_scale over the same mask.
        let maskCodes: [UInt8] = mask.map { $0 ? 1 : 0 }
        let maskBytes: [UInt8] = Array(packMSBFirst(maskCodes, bits: 1).prefix((mask.count + 7) / 8))
        if let whole = nzConst.sparseWhole, whole.shape == shape, Array(whole.storage.buffer.prefix(maskBytes.count)) == maskBytes {
            return [.constant(MILConst(shape: shape, dataType: type?.dataType ?? .float32, tensor: whole))]
        }
        let inner: WeightEncoding
        if let t = nzConst.tensor, nzConst.numbers == nil, case .float16 = t.encoding { inner = .float16 } else { inner = .float32 }
        do {
            let t = try ConstantTensor.compressed(shape: shape, encoding: .sparse(SparseEncoding(nonzeroCount: setBits, values: inner)),
                                                  codes: [], parameters: nzConst.floats(), mask: mask)
            return [.constant(MILConst(shape: shape, dataType: type?.dataType ?? .float32, tensor: t))]
        } catch let e as GraphError {
            throw LayerImportFailure("has sparse weights mlconv cannot store", cause: e)
        }
    }

    /// The dense flat positions of a mask's set bits.
    static func maskPositions(_ mask: MILConst) -> (bits: [Bool], positions: [Int]) {
        let bits = mask.doubles().map { $0 != 0 }
        return (bits, bits.enumerated().filter { $0.element }.map(\.offset))
    }

    /// (data − offset) · scale per block, for the elements at dense flat positions `positions`.
    static func shiftScale(_ c: MILOpContext, data: [Double], shape: [Int], positions: [Int]) throws -> [Double] {
        let scale = try c.requiredConstant("scale")
        let sb = try blockShape(scale, for: shape, "scale")
        let sv = scale.floats()
        var ov: [Double]? = nil
        if let offset = try c.constant("offset") {
            guard try blockShape(offset, for: shape, "offset") == sb else { throw LayerImportFailure("has offset and scale of different shapes") }
            ov = offset.doubles()
        }
        return zip(data, positions).map { v, p in
            let b = blockIndex(p, shape: shape, blocks: sb)
            return Double(sv[b]) * (v - (ov?[b] ?? 0))
        }
    }

    /// Scale and offset of constexpr_(sparse_)blockwise_shift_scale for data of `shape`: the block
    /// grid and the per-block parameters (offsets nil when absent).
    static func shiftScaleParameters(_ c: MILOpContext, shape: [Int]) throws -> (blocks: [Int], scales: [Float], offsets: [Float]?) {
        let scale = try c.requiredConstant("scale")
        let sb = try blockShape(scale, for: shape, "scale")
        var offsets: [Float]? = nil
        if let offset = try c.constant("offset") {
            guard try blockShape(offset, for: shape, "offset") == sb else { throw LayerImportFailure("has offset and scale of different shapes") }
            offsets = offset.floats()
        }
        return (sb, scale.floats(), offsets)
    }

    static func blockwiseShiftScale(_ c: MILOpContext) throws -> [MILValue] {
        let data = try c.requiredConstant("data")
        let v = data.doubles()
        let type = try c.outputType()
        let p = try shiftScaleParameters(c, shape: data.shape)
        if let t = try blockwiseTensor(data: data, values: v, shape: data.shape, blocks: p.blocks, scales: p.scales, zeroPoints: p.offsets) {
            return [.constant(MILConst(shape: data.shape, dataType: type?.dataType ?? .float32, tensor: t))]
        }
        let out = try shiftScale(c, data: v, shape: data.shape, positions: Array(v.indices))
        return [.constant(floatResult(out, shape: data.shape, type: type))]
    }

    static func lutToSparse(_ c: MILOpContext) throws -> [MILValue] {
        let mask = try c.requiredConstant("indices_mask")
        let nzConst = try c.requiredConstant("indices_nonzero_data")
        let nzIdx = nzConst.doubles()
        let lut = try c.requiredConstant("lut")
        let shape = mask.shape
        guard lut.shape.count == shape.count + 2, lut.shape.last == 1 else {
            throw LayerImportFailure("has a lut of shape \(lut.shape) (vector size 1 and rank \(shape.count + 2) supported)")
        }
        let palettes = lut.shape[shape.count], blocks = Array(lut.shape.prefix(shape.count))
        guard zip(shape, blocks).allSatisfy({ $1 > 0 && $0 % $1 == 0 }) else { throw LayerImportFailure("has lut blocks \(blocks) that do not divide \(shape)") }
        let (bits, positions) = maskPositions(mask)
        guard positions.count == nzIdx.count else { throw LayerImportFailure("has \(nzIdx.count) indices for \(positions.count) mask bits") }
        let lv = lut.floats()
        let codes = try paletteCodes(nzIdx, palettes: palettes)
        let values = zip(codes, positions).map { k, p in Double(lv[blockIndex(p, shape: shape, blocks: blocks) * palettes + Int(k)]) }
        var nz = floatResult(values, shape: [values.count], type: try c.outputType(1))
        nz.sparseWhole = try palettizedTensor(codes: codes, bits: try paletteBits(nzConst, palettes: palettes), shape: shape, blocks: blocks,
                                              lut: lv, palettes: palettes, mask: bits)
        return [.constant(mask), .constant(nz)]
    }

    static func sparseBlockwiseShiftScale(_ c: MILOpContext) throws -> [MILValue] {
        let mask = try c.requiredConstant("data_mask")
        let nzConst = try c.requiredConstant("nonzero_data")
        let nz = nzConst.doubles()
        let (bits, positions) = maskPositions(mask)
        guard positions.count == nz.count else { throw LayerImportFailure("has \(nz.count) values for \(positions.count) mask bits") }
        let values = try shiftScale(c, data: nz, shape: mask.shape, positions: positions)
        var out = floatResult(values, shape: [values.count], type: try c.outputType(1))
        let p = try shiftScaleParameters(c, shape: mask.shape)
        out.sparseWhole = try blockwiseTensor(data: nzConst, values: nz, shape: mask.shape, blocks: p.blocks, scales: p.scales,
                                              zeroPoints: p.offsets, mask: bits)
        return [.constant(mask), .constant(out)]
    }

    static var mappers: [String: MILOpMapper] {
        [
            "constexpr_affine_dequantize": affineDequantize,
            "constexpr_cast": { c in
                let v = try c.requiredConstant("source_val")
                guard let t = MILTypes.dataType(named: try c.string("output_dtype")) else { throw LayerImportFailure("has an unknown output_dtype") }
                // fp16 storage read as fp16 or fp32 keeps its fp16 bytes (exact in float32).
                if let tensor = v.tensor, v.numbers == nil, case .float16 = tensor.encoding, [.float16, .float32].contains(t) {
                    var out = v
                    out.dataType = t
                    return [.constant(out)]
                }
                return [.constant(try MILConstFold.cast(v, to: t))]
            },
            "constexpr_lut_to_dense": lutToDense,
            "constexpr_sparse_to_dense": sparseToDense,
            "constexpr_blockwise_shift_scale": blockwiseShiftScale,
            "constexpr_lut_to_sparse": lutToSparse,
            "constexpr_sparse_blockwise_shift_scale": sparseBlockwiseShiftScale,
        ]
    }
}
