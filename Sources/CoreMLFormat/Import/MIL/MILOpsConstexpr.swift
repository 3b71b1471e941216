// MIL constexpr_* ops (compressed weights), evaluated once at import into float constants that
// the ops reading them take as weights. Semantics as coremltools' op definitions
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
        let inner = q.shape[(axis + 1)...].reduce(1, *)
        let out = qv.indices.map { i -> Double in
            let ch = (i / inner) % n
            return Double(sv[sv.count == 1 ? 0 : ch]) * (qv[i] - zv[zv.count == 1 ? 0 : ch])
        }
        return [.constant(floatResult(out, shape: q.shape, type: try c.outputType()))]
    }

    static func lutToDense(_ c: MILOpContext) throws -> [MILValue] {
        let lut = try c.requiredConstant("lut")
        let lv = lut.doubles()
        if let shapeConst = try c.constant("shape") {  // iOS16: packed uint8 indices
            let shape = try shapeConst.doubles().map { try Checked.int(UInt64(exactly: $0) ?? UInt64.max, "shape") }
            let count = try Checked.product(shape, "output shape")
            let bits = lv.count.trailingZeroBitCount
            guard lv.count >= 2, lv.count == 1 << bits, bits <= 8 else { throw LayerImportFailure("has a lut of \(lv.count) entries; expected 2, 4, 16, 64 or 256") }
            let packed = try c.requiredConstant("indices").doubles().map { UInt8(clamping: Int($0)) }
            guard let idx = packed.withUnsafeBytes({ unpackLSBFirst($0, bits: bits, count: count) }) else {
                throw LayerImportFailure("has \(packed.count) index bytes for \(count) \(bits)-bit indices")
            }
            return [.constant(floatResult(idx.map { lv[Int($0)] }, shape: shape, type: try c.outputType()))]
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
        let iv = ind.doubles()
        let out = try iv.indices.map { i -> Double in
            let k = Int(iv[i])
            guard k >= 0, k < palettes else { throw LayerImportFailure("has index \(k) for a palette of \(palettes)") }
            return lv[blockIndex(i, shape: shape, blocks: blocks) * palettes + k]
        }
        return [.constant(floatResult(out, shape: shape, type: try c.outputType()))]
    }

    /// The dense values of a mask (1 = take the next non-zero value) and the non-zero data.
    static func densify(mask: [Bool], nonzero: [Double]) throws -> [Double] {
        var out = [Double](repeating: 0, count: mask.count)
        var j = 0
        for (i, m) in mask.enumerated() where m {
            guard j < nonzero.count else { throw LayerImportFailure("has a mask with more set bits than its \(nonzero.count) non-zero values") }
            out[i] = nonzero[j]
            j += 1
        }
        guard j == nonzero.count else { throw LayerImportFailure("has \(nonzero.count) non-zero values for \(j) set mask bits") }
        return out
    }

    static func sparseToDense(_ c: MILOpContext) throws -> [MILValue] {
        let nz = try c.requiredConstant("nonzero_data").doubles()
        let maskConst = try c.requiredConstant("mask")
        if let shapeConst = try c.constant("shape") {  // iOS16: mask bits packed in uint8
            let shape = try shapeConst.doubles().map { try Checked.int(UInt64(exactly: $0) ?? UInt64.max, "shape") }
            let count = try Checked.product(shape, "output shape")
            let packed = maskConst.doubles().map { UInt8(clamping: Int($0)) }
            guard let bits = packed.withUnsafeBytes({ unpackLSBFirst($0, bits: 1, count: count) }) else {
                throw LayerImportFailure("has \(packed.count) mask bytes for \(count) values")
            }
            return [.constant(floatResult(try densify(mask: bits.map { $0 != 0 }, nonzero: nz), shape: shape, type: try c.outputType()))]
        }
        return [.constant(floatResult(try densify(mask: maskConst.doubles().map { $0 != 0 }, nonzero: nz), shape: maskConst.shape,
                                      type: try c.outputType()))]
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

    static func blockwiseShiftScale(_ c: MILOpContext) throws -> [MILValue] {
        let data = try c.requiredConstant("data")
        let v = data.doubles()
        let out = try shiftScale(c, data: v, shape: data.shape, positions: Array(v.indices))
        return [.constant(floatResult(out, shape: data.shape, type: try c.outputType()))]
    }

    static func lutToSparse(_ c: MILOpContext) throws -> [MILValue] {
        let mask = try c.requiredConstant("indices_mask")
        let nzIdx = try c.requiredConstant("indices_nonzero_data").doubles()
        let lut = try c.requiredConstant("lut")
        let shape = mask.shape
        guard lut.shape.count == shape.count + 2, lut.shape.last == 1 else {
            throw LayerImportFailure("has a lut of shape \(lut.shape) (vector size 1 and rank \(shape.count + 2) supported)")
        }
        let palettes = lut.shape[shape.count], blocks = Array(lut.shape.prefix(shape.count))
        guard zip(shape, blocks).allSatisfy({ $1 > 0 && $0 % $1 == 0 }) else { throw LayerImportFailure("has lut blocks \(blocks) that do not divide \(shape)") }
        let positions = mask.doubles().enumerated().filter { $0.element != 0 }.map(\.offset)
        guard positions.count == nzIdx.count else { throw LayerImportFailure("has \(nzIdx.count) indices for \(positions.count) mask bits") }
        let lv = lut.doubles()
        let values = try zip(nzIdx, positions).map { k, p -> Double in
            guard k >= 0, Int(k) < palettes else { throw LayerImportFailure("has index \(k) for a palette of \(palettes)") }
            return lv[blockIndex(p, shape: shape, blocks: blocks) * palettes + Int(k)]
        }
        return [.constant(mask), .constant(floatResult(values, shape: [values.count], type: try c.outputType(1)))]
    }

    static func sparseBlockwiseShiftScale(_ c: MILOpContext) throws -> [MILValue] {
        let mask = try c.requiredConstant("data_mask")
        let nz = try c.requiredConstant("nonzero_data").doubles()
        let positions = mask.doubles().enumerated().filter { $0.element != 0 }.map(\.offset)
        guard positions.count == nz.count else { throw LayerImportFailure("has \(nz.count) values for \(positions.count) mask bits") }
        let values = try shiftScale(c, data: nz, shape: mask.shape, positions: positions)
        return [.constant(mask), .constant(floatResult(values, shape: [values.count], type: try c.outputType(1)))]
    }

    static var mappers: [String: MILOpMapper] {
        [
            "constexpr_affine_dequantize": affineDequantize,
            "constexpr_cast": { c in
                let v = try c.requiredConstant("source_val")
                guard let t = MILTypes.dataType(named: try c.string("output_dtype")) else { throw LayerImportFailure("has an unknown output_dtype") }
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
