// MIL ops composed from existing IR ops (issue 11):
//  - iOS17 `quantize`: q = clip(round(x / scale) + zero_point, lo, hi), lo/hi of int8 [-128, 127]
//    or uint8 [0, 255]; round is half to even (NumPy `around`, coremltools' value inference).
//    The IR has no 8-bit element type, so q is an int32 tensor holding the 8-bit values.
//  - iOS17 `dequantize`: y = (q − zero_point) · scale.
//    Both take a scalar scale / zero_point (per tensor), or vectors of x.shape[axis] values
//    (per axis, broadcast along `axis`); scale and zero_point must be known at import.
//  - iOS18 `scaled_dot_product_attention`: softmax(Q·Kᵀ / sqrt(E) + mask) · V over the last two
//    axes; a bool mask keeps the scores where it is true and puts −∞ elsewhere, a float mask is
//    added. (PyTorch's torch.nn.functional.scaled_dot_product_attention without dropout.)
//  - iOS18 `slice_update`: x with x[begin:end:stride] (slice_by_index's rules, masks included)
//    replaced by `update`: a scatter_nd (mode update) over the index tuples of the slice.
//    stride and the masks must be known at import; begin / end may be computed at run time only
//    when the slice's extent is the update's static shape (begin read at run time, end ignored
//    then, as the update's shape fixes it).
// Semantics: coremltools converters/mil/mil/ops/defs/iOS17/quantization_ops.py,
// iOS18/transformers.py, iOS18/tensor_transformation.py.
import MLGraph

enum MILMoreCOps {
    // MARK: quantize / dequantize

    /// The value range of a quantized MIL element type.
    static func quantizedRange(_ t: Spec.MILSpec.DataType) -> (lo: Float, hi: Float)? {
        switch t {
        case .int8: return (-128, 127)
        case .uint8: return (0, 255)
        default: return nil
        }
    }

    /// scale and zero_point as constant tensors broadcastable against x ([] per tensor, or
    /// x's rank with x.shape[axis] values on `axis`).
    static func quantParams(_ c: MILOpContext, x: String) throws -> (scale: ConstantTensor, zeroPoint: ConstantTensor?, zpType: Spec.MILSpec.DataType?) {
        let xs = c.shape(x)
        let scale = try c.requiredConstant("scale")
        let zp = try c.constant("zero_point")
        let s = scale.floats()
        guard !s.isEmpty else { throw LayerImportFailure("has an empty scale") }
        guard s.allSatisfy({ $0.isFinite && $0 != 0 }) else {
            throw LayerImportFailure("has a scale of zero or a non-finite scale; every scale must be a finite non-zero number")
        }
        let shape: [Int]
        switch scale.shape.count {
        case 0:
            if c.has("axis") { throw LayerImportFailure("has an axis with a scalar scale; give axis only with per-axis (vector) scale and zero_point") }
            if let zp, !zp.shape.isEmpty { throw LayerImportFailure("has a zero_point of shape \(zp.shape) with a scalar scale; expected a scalar") }
            shape = []
        case 1:
            guard c.has("axis") else { throw LayerImportFailure("has a vector scale but no axis; per-axis quantization needs axis") }
            let axis = try c.axis(try c.int("axis"), rank: xs.count)
            guard xs[axis] == scale.shape[0] else {
                throw LayerImportFailure("has \(scale.shape[0]) scales for axis \(axis) of size \(xs[axis]); expected one per element of the axis")
            }
            if let zp { guard zp.shape == scale.shape else { throw LayerImportFailure("has a zero_point of shape \(zp.shape); expected \(scale.shape), like scale") } }
            var b = [Int](repeating: 1, count: xs.count)
            b[axis] = xs[axis]
            shape = b
        default:
            throw LayerImportFailure("has a scale of rank \(scale.shape.count); expected a scalar or a vector")
        }
        let zpTensor = try zp.map { z -> ConstantTensor in
            let v = z.doubles()
            guard v.count == s.count, v.allSatisfy({ $0.isFinite }) else { throw LayerImportFailure("has a zero_point of \(v.count) values for \(s.count) scales") }
            return ConstantTensor(shape: shape, floats: v.map { Float($0) })
        }
        return (ConstantTensor(shape: shape, floats: s), zpTensor, zp?.dataType)
    }

    static func quantize(_ c: MILOpContext) throws -> [MILValue] {
        let dtype = try c.string("output_dtype")
        guard let t = MILTypes.dataType(named: dtype), let range = quantizedRange(t) else {
            throw LayerImportFailure("has output_dtype '\(dtype)'; expected 'int8' or 'uint8'")
        }
        var x = try c.tensor("input")
        if c.type(x)?.elementType != .float32 { x = try c.helper("input_float", .cast(to: .float32), [x]) }
        let p = try quantParams(c, x: x)
        if let zt = p.zpType, zt != t {
            throw LayerImportFailure("has a zero_point of type \(MILTypes.name(zt)) and output_dtype '\(dtype)'; they must agree")
        }
        let scale = try c.helper("scale", .constant, [], weights: ["value": p.scale])
        var q = try c.helper("div", .binary(.realDiv), [x, scale])
        q = try c.helper("round", .unary(UnaryAttributes(.round)), [q])
        if let zp = p.zeroPoint {
            q = try c.helper("shift", .binary(.add), [q, try c.helper("zero_point", .constant, [], weights: ["value": zp])])
        }
        q = try c.helper("clip", .clip(alpha: range.lo, beta: range.hi), [q])
        return [try c.emit(.cast(to: .int32), [q])]
    }

    static func dequantize(_ c: MILOpContext) throws -> [MILValue] {
        var q = try c.tensor("input")
        if c.type(q)?.elementType != .float32 { q = try c.helper("input_float", .cast(to: .float32), [q]) }
        let p = try quantParams(c, x: q)
        if let zt = p.zpType, quantizedRange(zt) == nil {
            throw LayerImportFailure("has a zero_point of type \(MILTypes.name(zt)); expected int8 or uint8")
        }
        if let zp = p.zeroPoint {
            q = try c.helper("shift", .binary(.sub), [q, try c.helper("zero_point", .constant, [], weights: ["value": zp])])
        }
        let scale = try c.helper("scale", .constant, [], weights: ["value": p.scale])
        return [try c.emit(.binary(.mul), [q, scale])]
    }

    // MARK: scaled_dot_product_attention

    static func scaledDotProductAttention(_ c: MILOpContext) throws -> [MILValue] {
        let q = try c.tensor("query"), k = try c.tensor("key"), v = try c.tensor("value")
        let qs = c.shape(q), ks = c.shape(k), vs = c.shape(v)
        guard qs.count == ks.count, qs.count == vs.count else {
            throw LayerImportFailure("has query, key, value of ranks \(qs.count), \(ks.count), \(vs.count); they must have one rank")
        }
        guard qs.count >= 3 else { throw LayerImportFailure("has rank-\(qs.count) query, key, value; expected rank ≥ 3 ([B, …, L, E])") }
        guard let e = qs.last, e > 0 else { throw LayerImportFailure("has query shape \(qs); the embedding size must be known at import") }
        if let ke = ks.last, ke >= 0, ke != e { throw LayerImportFailure("has query embedding \(e) and key embedding \(ke); they must agree") }
        let sk = ks[ks.count - 2], sv = vs[vs.count - 2]
        if sk >= 0, sv >= 0, sk != sv { throw LayerImportFailure("has key sequence length \(sk) and value sequence length \(sv); they must agree") }
        if c.has("dropout_p") || c.has("is_causal") {
            throw LayerImportFailure("has dropout_p or is_causal, which MIL's scaled_dot_product_attention does not define")
        }
        let scores = try c.helper("scores", .matmul(MatMulAttributes(transposeY: true)), [q, k])
        let factor = try c.helper("scale", .constant, [], weights: ["value": ConstantTensor(shape: [], floats: [Float(1 / Double(e).squareRoot())])])
        var s = try c.helper("scaled", .binary(.mul), [scores, factor])
        if c.has("attn_mask") {
            let m = try c.tensor("attn_mask")
            let ms = c.shape(m)
            if let last = ms.last, last >= 0, sk >= 0, last != sk {
                throw LayerImportFailure("has a mask of shape \(ms) for key sequence length \(sk); its last axis must be the key sequence length")
            }
            switch c.type(m)?.elementType {
            case .bool?:
                let minusInf = try c.helper("masked_value", .constant, [], weights: ["value": ConstantTensor(shape: [], floats: [-.infinity])])
                s = try c.helper("masked", .select, [m, s, minusInf])
            case .float32?:
                s = try c.helper("masked", .binary(.add), [s, m])
            case let other:
                throw LayerImportFailure("has a mask of element type \(other.map { "\($0)" } ?? "unknown"); expected bool, fp16 or fp32")
            }
        }
        let w = try c.helper("weights", .softmax(axis: -1), [s])
        return [try c.emit(.matmul(MatMulAttributes()), [w, v])]
    }

    // MARK: slice_update

    static func sliceUpdate(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        var u = try c.tensor("update")
        let xs = c.shape(x), us = c.shape(u)
        let r = xs.count
        guard r >= 1, xs.allSatisfy({ $0 >= 0 }) else { throw LayerImportFailure("updates a tensor of shape \(xs); its shape must be known at import") }
        guard !us.isEmpty else { throw LayerImportFailure("has a rank-0 update, which MIL's slice_update does not accept") }
        guard us.allSatisfy({ $0 >= 0 }) else { throw LayerImportFailure("has an update of shape \(us); its shape must be known at import") }
        if let xt = c.type(x)?.elementType, let ut = c.type(u)?.elementType, xt != ut {
            u = try c.helper("update_cast", .cast(to: xt), [u])
        }
        let stride = try c.ints("stride") ?? [Int](repeating: 1, count: r)
        let beginMask = try c.bools("begin_mask") ?? [], endMask = try c.bools("end_mask") ?? [], squeezeMask = try c.bools("squeeze_mask") ?? []
        for (name, m) in [("begin_mask", beginMask.count), ("end_mask", endMask.count), ("squeeze_mask", squeezeMask.count)] where m != 0 && m != r {
            throw LayerImportFailure("has \(name) of \(m) values for a rank-\(r) x; expected \(r)")
        }
        guard stride.count == r, stride.allSatisfy({ $0 != 0 && abs($0) <= Node.maxCountAttribute }) else {
            throw LayerImportFailure("has stride \(stride); expected \(r) non-zero integers")
        }
        let squeezed = (0..<r).map { squeezeMask.isEmpty ? false : squeezeMask[$0] }
        let kept = (0..<r).filter { !squeezed[$0] }

        if let begin = try constIntsOrNil(c, "begin"), let end = try constIntsOrNil(c, "end") {
            // Static slice: every index tuple known at import.
            let a = SliceByIndexAttributes(begin: begin, end: end, stride: stride, beginMask: beginMask, endMask: endMask, squeezeMask: squeezeMask)
            guard let axes = a.resolve(xs) else {
                throw LayerImportFailure("has begin \(begin), end \(end), stride \(stride) that do not fit x of shape \(xs)")
            }
            let sliceShape = kept.map { axes[$0].count }
            guard sliceShape == us else {
                throw LayerImportFailure("has an update of shape \(us); the slice of x \(xs) has shape \(sliceShape)")
            }
            if axes.contains(where: { $0.count == 0 }) { return [.tensor(x)] }
            return [.tensor(try scatterSlice(c, x: x, u: u, xs: xs, starts: axes.map(\.start), steps: axes.map(\.step),
                                             counts: axes.map(\.count), begin: nil))]
        }
        // begin known at run time: the extent of each axis is the update's (1 on squeezed axes).
        guard stride.allSatisfy({ $0 > 0 }) else {
            throw LayerImportFailure("has begin computed at run time with a negative stride \(stride); mlconv needs begin and end known at import then")
        }
        guard us.count == kept.count else {
            throw LayerImportFailure("has an update of rank \(us.count) for \(kept.count) unsqueezed axes of x \(xs)")
        }
        var counts = [Int](repeating: 1, count: r)
        for (i, d) in kept.enumerated() { counts[d] = us[i] }
        let b = try c.tensor("begin")
        guard c.shape(b) == [r] else { throw LayerImportFailure("has begin of shape \(c.shape(b)); expected [\(r)]") }
        // begin_mask axes start at 0 (begin multiplied by 0 there).
        let keep = (0..<r).map { (beginMask.isEmpty ? false : beginMask[$0]) ? Float(0) : 1 }
        return [.tensor(try scatterSlice(c, x: x, u: u, xs: xs, starts: [Int](repeating: 0, count: r), steps: stride, counts: counts,
                                         begin: (b, keep)))]
    }

    /// `c.ints(param)` when the argument is a constant; nil when it is computed at run time.
    static func constIntsOrNil(_ c: MILOpContext, _ param: String) throws -> [Int]? {
        guard let (_, v) = try c.value(param) else { throw LayerImportFailure("has no \(param)") }
        if case .constant = v { return try c.ints(param) }
        return nil
    }

    /// scatter_nd (mode update) of `u` into x at the tuples start[d] + i·step[d], i < count[d],
    /// (+ begin[d]·keep[d] read at run time). Trailing axes that the slice covers whole stay
    /// inside the scattered slices, so a KV-cache update scatters rows, not elements.
    static func scatterSlice(_ c: MILOpContext, x: String, u: String, xs: [Int], starts: [Int], steps: [Int], counts: [Int],
                             begin: (tensor: String, keep: [Float])?) throws -> String {
        let r = xs.count
        var k = r
        while k > 0, starts[k - 1] == 0, steps[k - 1] == 1, counts[k - 1] == xs[k - 1], begin.map({ $0.keep[k - 1] == 0 }) ?? true {
            k -= 1
        }
        k = max(k, 1)
        let lead = Array(counts[..<k])
        let tuples = try Checked.product(lead, "slice_update index tuples")
        let total = try Checked.product([tuples, k], "slice_update indices")
        guard total <= TensorType.maxElementCount else { throw LayerImportFailure("needs \(total) slice indices, more than mlconv supports") }
        var grid = [Float](repeating: 0, count: total)
        var pos = [Int](repeating: 0, count: k)
        for t in 0..<tuples {
            for d in 0..<k { grid[t * k + d] = Float(starts[d] + pos[d] * steps[d]) }
            advanceRowMajor(&pos, shape: lead)
        }
        var idx = try c.helper("indices", .constant, [], weights: ["value": ConstantTensor(shape: [tuples, k], floats: grid)])
        if let begin {
            var bf = begin.tensor
            if c.type(bf)?.elementType != .float32 { bf = try c.helper("begin_float", .cast(to: .float32), [bf]) }
            if k < r { bf = try c.helper("begin_lead", .sliceBySize(begin: [0], size: [k]), [bf]) }
            let keep = try c.helper("begin_keep", .constant, [], weights: ["value": ConstantTensor(shape: [k], floats: Array(begin.keep[..<k]))])
            bf = try c.helper("begin_masked", .binary(.mul), [bf, keep])
            idx = try c.helper("indices_offset", .binary(.add), [idx, bf])
        }
        idx = try c.helper("indices_int", .cast(to: .int32), [idx])
        let updates = try c.helper("updates", .reshapeND(shape: [tuples] + Array(xs[k...])), [u])
        return try c.b.emit(c.outputName(0), .scatterND(mode: .update), [x, idx, updates], output: c.outputName(0))
    }

    static var mappers: [String: MILOpMapper] {
        [
            "quantize": quantize,
            "dequantize": dequantize,
            "scaled_dot_product_attention": scaledDotProductAttention,
            "slice_update": sliceUpdate,
        ]
    }
}
