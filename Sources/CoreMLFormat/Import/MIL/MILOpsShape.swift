// MIL const, shape and data-movement ops, reductions, pad and nearest-neighbour upsampling.
// Ops on constants that only change the shape (reshape, expand_dims, squeeze) and `shape` of a
// statically shaped tensor are evaluated at import.
import MLGraph

enum MILShapeOps {
    /// A constant with the same row-major data and another shape.
    static func reshaped(_ k: MILConst, _ shape: [Int]) -> MILConst {
        var out = k
        out.shape = shape
        if let t = k.tensor {
            out.tensor = t.reshaped(to: shape)
            // A compressed block grid that cannot follow the new shape: keep the expanded values.
            if out.tensor == nil, out.numbers == nil { out.numbers = k.doubles() }
        }
        return out
    }

    static func reshapeTarget(_ c: MILOpContext, input: [Int]) throws -> [Int] {
        guard var s = try c.ints("shape") else { throw LayerImportFailure("needs a shape known at import") }
        for (i, d) in s.enumerated() where d == 0 {
            guard i < input.count else { throw LayerImportFailure("has shape \(s) with 0 past the input's rank") }
            s[i] = input[i]
        }
        let known = s.filter { $0 != -1 }
        guard s.filter({ $0 == -1 }).count <= 1, known.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("has shape \(s)") }
        if s.contains(-1) {
            let total = input.reduce(1, *), rest = known.reduce(1, *)
            guard rest > 0, total % rest == 0 else { throw LayerImportFailure("cannot reshape \(input) to \(s)") }
            s = s.map { $0 == -1 ? total / rest : $0 }
        }
        return s
    }

    static func reduce(_ f: ReduceFunction) -> MILOpMapper {
        { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            let axes = try (try c.ints("axes") ?? Array(0..<r)).map { try c.axis($0, rank: r) }
            return [try c.emit(.reduce(ReduceAttributes(function: f, axes: axes, keepDims: try c.bool("keep_dims", default: false))), [x])]
        }
    }

    static var mappers: [String: MILOpMapper] {
        var m: [String: MILOpMapper] = [:]
        m["const"] = { c in
            guard let v = c.op.attributes["val"] else { throw LayerImportFailure("has no 'val' attribute") }
            return [.constant(try MILConst.decode(v, blobs: c.importer.blobs))]
        }
        m["reshape"] = { c in
            if case let .constant(k)? = try c.value("x")?.1 { return [.constant(reshaped(k, try reshapeTarget(c, input: k.shape)))] }
            let x = try c.tensor("x")
            return [try c.emit(.reshapeND(shape: try reshapeTarget(c, input: c.shape(x))), [x])]
        }
        m["expand_dims"] = { c in
            guard let axes = try c.ints("axes") else { throw LayerImportFailure("has no axes") }
            if case let .constant(k)? = try c.value("x")?.1 {
                let r = k.shape.count + axes.count
                var s = k.shape
                let positions = try axes.map { try c.axis($0, rank: r) }.sorted()
                guard Set(positions).count == positions.count else { throw LayerImportFailure("has repeated axes \(axes)") }
                for a in positions {
                    guard a <= s.count else { throw LayerImportFailure("has axes \(axes) for a rank-\(k.shape.count) constant") }
                    s.insert(1, at: a)
                }
                return [.constant(reshaped(k, s))]
            }
            return [try c.emit(.expandDims(axes: axes), [try c.tensor("x")])]
        }
        m["squeeze"] = { c in
            let axes = try c.ints("axes") ?? []
            if case let .constant(k)? = try c.value("x")?.1 {
                let drop = try Set(axes.map { try c.axis($0, rank: k.shape.count) })
                let s = k.shape.enumerated().filter { axes.isEmpty ? $0.element != 1 : !drop.contains($0.offset) }.map(\.element)
                return [.constant(reshaped(k, s))]
            }
            return [try c.emit(.squeeze(axes: axes), [try c.tensor("x")])]
        }
        m["transpose"] = { c in
            guard let perm = try c.ints("perm") else { throw LayerImportFailure("has no perm") }
            let x = try c.tensor("x")
            return [try c.emit(.transpose(perm: try perm.map { try c.axis($0, rank: c.rank(x)) }), [x])]
        }
        m["concat"] = { c in
            if try c.bool("interleave", default: false) { throw LayerImportFailure("interleaves its inputs, which mlconv does not support") }
            let ins = try c.tensors("values")
            if ins.count == 1 { return [.tensor(ins[0])] }
            return [try c.emit(.concat(axis: try c.int("axis")), ins)]
        }
        m["stack"] = { c in [try c.emit(.stack(axis: try c.int("axis")), try c.tensors("values"))] }
        m["slice_by_index"] = { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            guard let begin = try c.ints("begin"), let end = try c.ints("end") else { throw LayerImportFailure("needs begin and end known at import") }
            let a = SliceByIndexAttributes(begin: begin, end: end, stride: try c.ints("stride") ?? [Int](repeating: 1, count: r),
                                           beginMask: try c.bools("begin_mask") ?? [], endMask: try c.bools("end_mask") ?? [],
                                           squeezeMask: try c.bools("squeeze_mask") ?? [])
            return [try c.emit(.sliceByIndex(a), [x])]
        }
        m["slice_by_size"] = { c in
            guard let begin = try c.ints("begin"), let size = try c.ints("size") else { throw LayerImportFailure("needs begin and size known at import") }
            return [try c.emit(.sliceBySize(begin: begin, size: size), [try c.tensor("x")])]
        }
        m["split"] = { c in
            let x = try c.tensor("x")
            let a = SplitAttributes(axis: try c.int("axis"), numSplits: c.has("num_splits") ? try c.int("num_splits") : nil,
                                    splitSizes: try c.ints("split_sizes"))
            let outs = try c.b.emitMulti(c.name, .split(a), [x], outputs: c.op.outputs.map(\.name))
            return outs.map { .tensor($0) }
        }
        m["tile"] = { c in
            guard let reps = try c.ints("reps") else { throw LayerImportFailure("needs reps known at import") }
            return [try c.emit(.tile(reps: reps), [try c.tensor("x")])]
        }
        m["gather"] = { c in
            if try c.int("batch_dims", default: 0) != 0 { throw LayerImportFailure("has batch_dims ≠ 0, which mlconv does not support") }
            return [try c.emit(.gather(axis: try c.int("axis", default: 0)), [try c.tensor("x"), try c.tensor("indices")])]
        }
        m["gather_nd"] = { c in
            if try c.int("batch_dims", default: 0) != 0 { throw LayerImportFailure("has batch_dims ≠ 0, which mlconv does not support") }
            return [try c.emit(.gatherND, [try c.tensor("x"), try c.tensor("indices")])]
        }
        m["gather_along_axis"] = { c in
            [try c.emit(.gatherAlongAxis(axis: try c.int("axis", default: 0)), [try c.tensor("x"), try c.tensor("indices")])]
        }
        m["shape"] = { c in
            if case let .constant(k)? = try c.value("x")?.1 {
                return [.constant(MILConst(shape: [k.shape.count], dataType: .int32, numbers: k.shape.map(Double.init)))]
            }
            let x = try c.tensor("x")
            let s = c.shape(x)
            if s.allSatisfy({ $0 >= 0 }) {
                return [.constant(MILConst(shape: [s.count], dataType: .int32, numbers: s.map(Double.init)))]
            }
            return [try c.emit(.shape, [x])]
        }
        m["pad"] = { c in
            let x = try c.tensor("x")
            let r = c.rank(x)
            guard let pad = try c.ints("pad"), pad.count % 2 == 0, pad.count / 2 <= r else { throw LayerImportFailure("needs pad known at import") }
            let n = pad.count / 2
            var pads = [[Int]](repeating: [0, 0], count: r - n)
            for i in 0..<n { pads.append([pad[2 * i], pad[2 * i + 1]]) }
            let modeName = try c.string("mode", default: "constant")
            guard let mode = PadMode(rawValue: modeName) else { throw LayerImportFailure("has pad mode '\(modeName)'") }
            return [try c.emit(.pad(PadAttributes(mode: mode, pads: pads, value: try c.float("constant_val", default: 0))), [x])]
        }
        m["upsample_nearest_neighbor"] = { c in
            let x = try c.tensor("x")
            guard c.rank(x) == 4 else { throw LayerImportFailure("upsamples a rank-\(c.rank(x)) input; expected [N, C, H, W]") }
            let sh = try c.float("scale_factor_height", default: 1), sw = try c.float("scale_factor_width", default: 1)
            guard sh == sh.rounded(), sw == sw.rounded(), sh >= 1, sw >= 1, sh <= 4096, sw <= 4096 else {
                throw LayerImportFailure("has scale factors \(sh)×\(sw); mlconv supports integer factors")
            }
            let y = try c.helper("channels_last", .upsample2d(Upsample2DAttributes(scale: [Int(sh), Int(sw)], mode: .nearest)), [try c.toChannelsLast(x)])
            return [try c.fromChannelsLast(y)]
        }
        let reductions: [String: ReduceFunction] = [
            "reduce_sum": .sum, "reduce_mean": .mean, "reduce_prod": .prod, "reduce_max": .max, "reduce_min": .min,
            "reduce_l1_norm": .l1Norm, "reduce_l2_norm": .l2Norm, "reduce_log_sum_exp": .logSumExp,
            "reduce_sum_square": .sumSquare,
        ]
        for (name, f) in reductions { m[name] = reduce(f) }
        m["reduce_argmax"] = { c in
            [try c.emit(.argmax(ArgReduceAttributes(axis: try c.int("axis", default: -1), keepDims: try c.bool("keep_dims", default: false))),
                        [try c.tensor("x")])]
        }
        m["reduce_argmin"] = { c in
            [try c.emit(.argmin(ArgReduceAttributes(axis: try c.int("axis", default: -1), keepDims: try c.bool("keep_dims", default: false))),
                        [try c.tensor("x")])]
        }
        return m
    }
}
