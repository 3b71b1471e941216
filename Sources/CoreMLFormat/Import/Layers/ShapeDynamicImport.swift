// NeuralNetwork v2 layers whose output shape depends on input VALUES (rangeDynamic, oneHot with a
// depth input, whereNonZero, reshapeDynamic, tile with a reps input), composed from IR ops whose
// only value → shape bridge is the dynamic `fill` (a shape read at prediction time). The graphs
// have unknown (−1) dimensions and run in MLRuntime's dynamic executor.
import MLGraph

extension LayerImporter {
    /// A float32 constant node.
    func constantND(_ values: [Float], shape: [Int], base: String) throws -> String {
        try b.emit(base, .constant, [], weights: ["value": ConstantTensor(shape: shape, floats: values)])
    }

    /// [0, 1, …, n − 1] as float32 of unknown length, n read at prediction time from the
    /// one-element tensor `n` (must be ≥ 1: the IR has no empty tensors): ones of shape [n]
    /// (a dynamic `fill`) summed exclusively.
    func arange(count n: String, base: String) throws -> String {
        let ones = try b.emit(base + "__ones", .fill(FillAttributes(shape: [], value: 1)), [n])
        return try b.emit(base + "__arange", .cumsum(CumsumAttributes(axis: 0, exclusive: true)), [ones])
    }

    /// rangeDynamic: numpy.arange(start, end, step) with end = input 0 and start, step from
    /// inputs 1 and 2 when present, else the parameters: n = ⌈(end − start) / step⌉ values
    /// start + i·step.
    func rangeDynamic(_ p: Spec.RangeDynamicLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 1...3)
        let end = try cast(ins[0], to: .float32, base: name + "__end")
        let start = ins.count > 1 ? try cast(ins[1], to: .float32, base: name + "__start")
            : try constantND([p.startValue], shape: [1], base: name + "__start")
        let step: String
        if ins.count > 2 {
            step = try cast(ins[2], to: .float32, base: name + "__step")
        } else {
            guard p.stepSizeValue != 0, p.stepSizeValue.isFinite else { throw LayerImportFailure("has step \(p.stepSizeValue)") }
            step = try constantND([p.stepSizeValue], shape: [1], base: name + "__step")
        }
        let span = try b.emit(name + "__span", .binary(.sub), [end, start])
        let q = try b.emit(name + "__steps", .binary(.realDiv), [span, step])
        let n = try b.emit(name + "__count", .unary(UnaryAttributes(.ceil)), [q])
        let i = try arange(count: n, base: name)
        let scaled = try b.emit(name + "__scaled", .binary(.mul), [i, step])
        return try b.emit(name, .binary(.add), [scaled, start], output: out)
    }

    /// oneHot with the vector size from input 1: positions [0, depth) along the new axis compared
    /// with the (float) indices: onValue where equal, offValue elsewhere (out of range: all off).
    func oneHotDynamic(_ p: Spec.OneHotLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        let r = b.shape(ins[0]).count
        let a = try ndAxis(p.axis, rank: r + 1)
        let x = try cast(ins[0], to: .float32, base: name + "__indices")
        let depth = try cast(ins[1], to: .float32, base: name + "__depth")
        let positions = try arange(count: depth, base: name)
        var shape = [Int](repeating: 1, count: r + 1)
        shape[a] = -1
        let posN = try b.emit(name + "__positions", .reshapeND(shape: shape), [positions])
        let xN = try b.emit(name + "__expanded", .expandDims(axes: [a]), [x])
        let hit = try b.emit(name + "__hit", .compare(.equal), [xN, posN])
        let on = try constantND([p.onValue], shape: [1], base: name + "__on")
        let off = try constantND([p.offValue], shape: [1], base: name + "__off")
        return try b.emit(name, .select, [hit, on, off], output: out)
    }

    /// whereNonZero: the multi-indices [N, rank] of the non-zero elements in row-major order
    /// (numpy.argwhere). A stable argsort of (x == 0) puts the non-zero positions first, in
    /// order; the first N (N = the count of non-zeros, read at prediction time; must be ≥ 1)
    /// are split into coordinates ⌊p / stride_d⌋ mod shape_d.
    func whereNonZero(_ x0: String, name: String, out: String) throws -> String {
        let s = try knownShape(x0, "whereNonZero")
        let count = try Checked.product(s, "input size")
        guard count <= 1 << 24 else { throw LayerImportFailure("has \(count) elements; mlconv's composition indexes at most 2^24 in float32") }
        let x = try cast(x0, to: .float32, base: name + "__x")
        let flat = try b.emit(name + "__flat", .reshapeND(shape: [count]), [x])
        let zero = try constantND([0], shape: [1], base: name + "__zero")
        let nonZero = try b.emit(name + "__nonzero", .compare(.notEqual), [flat, zero])
        let nonZeroF = try b.emit(name + "__nonzero_f", .cast(to: .float32), [nonZero])
        let order = try b.emit(name + "__order", .argsort(axis: 0, ascending: false), [nonZeroF])
        let n = try b.emit(name + "__count", .reduce(ReduceAttributes(function: .sum, axes: [0], keepDims: true)), [nonZeroF])
        let first = try b.emit(name + "__first", .cast(to: .int32), [try arange(count: n, base: name)])
        let positions = try b.emit(name + "__positions_i", .gather(axis: 0), [order, first])
        let p = try b.emit(name + "__positions", .cast(to: .float32), [positions])
        var coords: [String] = []
        var stride = count
        for (d, size) in s.enumerated() {
            stride /= size
            var c = p
            if stride > 1 {
                let st = try constantND([Float(stride)], shape: [1], base: name + "__stride\(d)")
                let q = try b.emit(name + "__div\(d)", .binary(.realDiv), [c, st])
                c = try b.emit(name + "__q\(d)", .unary(UnaryAttributes(.floor)), [q])
            }
            if d > 0 {
                let m = try constantND([Float(size)], shape: [1], base: name + "__size\(d)")
                c = try b.emit(name + "__c\(d)", .binary(.mod), [c, m])
            }
            coords.append(c)
        }
        return try b.emit(name, .stack(axis: 1), coords, output: out)
    }

    /// reshapeDynamic: x reshaped (row-major) to the shape held by input 1 (a rank-1 tensor of
    /// known length L). Ones of that shape (a dynamic `fill`) give each element's coordinates
    /// (exclusive cumulative sums along each axis) and strides (sums over the later axes); the
    /// row-major position Σ coord_d·stride_d gathers from the flattened x.
    func reshapeDynamic(_ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 2...2)
        let ls = b.shape(ins[1])
        guard ls.count == 1, ls[0] >= 1, ls[0] <= Node.maxRank else {
            throw LayerImportFailure("takes its shape from a tensor of shape \(formatShape(ls)); expected a vector of known length 1…\(Node.maxRank)")
        }
        let r = ls[0]
        let s = b.shape(ins[0])
        if !s.contains(TensorType.unknown) {
            guard try Checked.product(s, "input size") <= 1 << 24 else {
                throw LayerImportFailure("has more than 2^24 elements; mlconv's composition indexes at most 2^24 in float32")
            }
        }
        let ones = try b.emit(name + "__ones", .fill(FillAttributes(shape: [], value: 1)), [ins[1]])
        var linear: String?
        for d in 0..<r {
            var term = try b.emit(name + "__coord\(d)", .cumsum(CumsumAttributes(axis: d, exclusive: true)), [ones])
            if d < r - 1 {
                let stride = try b.emit(name + "__stride\(d)", .reduce(ReduceAttributes(function: .sum, axes: Array(d + 1..<r), keepDims: true)), [ones])
                term = try b.emit(name + "__offset\(d)", .binary(.mul), [term, stride])
            }
            linear = try linear.map { try b.emit(name + "__linear\(d)", .binary(.add), [$0, term]) } ?? term
        }
        guard let lin = linear else { throw LayerImportFailure("has an empty target shape") }
        let idx = try b.emit(name + "__index", .cast(to: .int32), [lin])
        let flat = try b.emit(name + "__flat", .reshapeND(shape: [-1]), [ins[0]])
        return try b.emit(name, .gather(axis: 0), [flat, idx], output: out)
    }

    /// tile with reps from input 1 (length = the input's rank): along each axis of size s, the
    /// indices (0 ..< s·reps[i]) mod s gather the repeated copies.
    func tileDynamic(_ ins: [String], name: String, out: String) throws -> String {
        let s = try knownShape(ins[0], "tile with a reps input")
        guard b.shape(ins[1]) == [s.count] else {
            throw LayerImportFailure("has reps of shape \(formatShape(b.shape(ins[1]))); expected [\(s.count)] for its rank-\(s.count) input")
        }
        let reps = try cast(ins[1], to: .float32, base: name + "__reps")
        var cur = ins[0]
        for (d, size) in s.enumerated() {
            let rep = try b.emit(name + "__rep\(d)", .sliceByIndex(SliceByIndexAttributes(begin: [d], end: [d + 1], stride: [1])), [reps])
            let n = try b.emit(name + "__n\(d)", .activation(.linear(alpha: Float(size), beta: 0)), [rep])
            let m = try constantND([Float(size)], shape: [1], base: name + "__size\(d)")
            let i = try b.emit(name + "__mod\(d)", .binary(.mod), [try arange(count: n, base: name + "__axis\(d)"), m])
            let idx = try b.emit(name + "__idx\(d)", .cast(to: .int32), [i])
            cur = try b.emit(d == s.count - 1 ? name : name + "__tile\(d)", .gather(axis: d), [cur, idx], output: d == s.count - 1 ? out : nil)
        }
        return cur
    }
}

extension LayerImporter {
    /// topK with K from input 1 (one element, 1…the axis size): the stable argsort along the axis
    /// (descending, or ascending with useBottomK), its first K positions (gather of 0 ..< K), and
    /// the values there (gatherAlongAxis) — ties keep the lower index first, as the IR's topk.
    func topKDynamic(_ p: Spec.TopKLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer) throws -> [String] {
        let name = layer.name
        let a = try ndAxis(p.axis, rank: b.shape(ins[0]).count)
        let order = try b.emit(name + "__order", .argsort(axis: a, ascending: p.useBottomK), [ins[0]])
        let k = try cast(ins[1], to: .float32, base: name + "__k")
        let first = try b.emit(name + "__first", .cast(to: .int32), [try arange(count: k, base: name)])
        let indices = try b.emit(name + "__indices", .gather(axis: a), [order, first])
        let values = try b.emit(name, .gatherAlongAxis(axis: a), [ins[0], indices], output: layer.output[0])
        let indicesF = try b.emit(name + "__indices_f", .cast(to: .float32), [indices], output: layer.output[1])
        return [values, indicesF]
    }

    /// sliceDynamic: x[begin:end:stride] per axis (Python slicing, masks as sliceStatic's) with
    /// beginIds from input 1 and endIds / strides from inputs 2 and 3 when present (else the
    /// parameters). Mask inputs (5th–7th) are refused. Per axis of size S, with float32 values
    /// read at prediction time, Python's `slice.indices` is applied: a negative index adds S, then
    /// it is clamped to [0, S] (stride > 0) or [−1, S − 1] (stride < 0); a masked begin / end is
    /// the first / past-the-last position in the stride's direction; n = ⌈(end − begin)/stride⌉
    /// positions begin + i·stride are gathered (n must be ≥ 1: the IR has no empty tensors).
    func sliceDynamic(_ p: Spec.SliceDynamicLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 2...7)
        guard ins.count <= 4 else {
            throw LayerImportFailure("takes its masks from input \(5)…\(ins.count), known only at prediction time; mlconv imports "
                + "sliceDynamic with begin, end and stride inputs and constant masks")
        }
        let s = try knownShape(ins[0], "sliceDynamic")
        let r = s.count
        for t in ins.dropFirst() where b.shape(t) != [r] {
            throw LayerImportFailure("has an index input of shape \(formatShape(b.shape(t))); expected [\(r)] for its rank-\(r) input")
        }
        func mask(_ m: [Bool], _ what: String) throws -> [Bool] {
            if m.isEmpty { return Array(repeating: false, count: r) }
            guard m.count == r else { throw LayerImportFailure("has \(m.count) \(what); its input has rank \(r)") }
            return m
        }
        let beginMask = try mask(p.beginMasks, "beginMasks"), endMask = try mask(p.endMasks, "endMasks")
        let squeeze = try mask(p.squeezeMasks, "squeezeMasks")
        let range = -Int(Int32.max)...Int(Int32.max)
        let endIds = ins.count > 2 ? [] : try Checked.ints(p.endIds, "endIds", in: range)
        let strides = ins.count > 3 ? [] : (p.strides.isEmpty ? Array(repeating: 1, count: r) : try Checked.ints(p.strides, "strides", in: range))
        guard ins.count > 2 || endIds.count == r else { throw LayerImportFailure("has \(endIds.count) endIds; its input has rank \(r)") }
        guard ins.count > 3 || (strides.count == r && !strides.contains(0)) else {
            throw LayerImportFailure("has strides \(p.strides); expected \(r) non-zero strides")
        }
        let beginV = try cast(ins[1], to: .float32, base: name + "__begin")
        let endV = ins.count > 2 ? try cast(ins[2], to: .float32, base: name + "__end") : nil
        let strideV = ins.count > 3 ? try cast(ins[3], to: .float32, base: name + "__stride") : nil

        func const(_ v: Float, _ tag: String) throws -> String { try constantND([v], shape: [1], base: name + "__" + tag) }
        func element(_ v: String, _ d: Int, _ tag: String) throws -> String {
            try b.emit(name + "__\(tag)\(d)", .sliceByIndex(SliceByIndexAttributes(begin: [d], end: [d + 1], stride: [1])), [v])
        }
        func op(_ f: BinaryFunction, _ x: String, _ y: String, _ tag: String) throws -> String { try b.emit(name + "__" + tag, .binary(f), [x, y]) }
        func select(_ c: String, _ x: String, _ y: String, _ tag: String) throws -> String { try b.emit(name + "__" + tag, .select, [c, x, y]) }

        var cur = ins[0]
        var squeezed: [Int] = []
        for d in 0..<r {
            let size = Float(s[d])
            let begin = try element(beginV, d, "b")
            if squeeze[d] {
                // Only beginIds[d] is taken (negative counts from the end); the axis is removed.
                let neg = try b.emit(name + "__bneg\(d)", .compare(.less), [begin, try const(0, "zero\(d)")])
                let wrapped = try select(neg, try op(.add, begin, try const(size, "size\(d)"), "bwrap\(d)"), begin, "bsel\(d)")
                let idx = try b.emit(name + "__idx\(d)", .cast(to: .int32), [wrapped])
                cur = try b.emit(name + "__take\(d)", .gather(axis: d), [cur, idx])
                squeezed.append(d)
                continue
            }
            // The stride's direction decides the clamping bounds and the masked defaults.
            let stride: String, negative: String
            if let strideV {
                stride = try element(strideV, d, "st")
                negative = try b.emit(name + "__stneg\(d)", .compare(.less), [stride, try const(0, "zero\(d)")])
            } else {
                stride = try const(Float(strides[d]), "st\(d)")
                negative = try b.emit(name + "__stneg\(d)", .cast(to: .bool), [try const(strides[d] < 0 ? 1 : 0, "stnegf\(d)")])
            }
            let lower = try select(negative, try const(-1, "lo_n\(d)"), try const(0, "lo_p\(d)"), "lower\(d)")
            let upper = try select(negative, try const(size - 1, "up_n\(d)"), try const(size, "up_p\(d)"), "upper\(d)")
            func clamp(_ v: String, _ tag: String) throws -> String {
                let neg = try b.emit(name + "__\(tag)neg\(d)", .compare(.less), [v, try const(0, "\(tag)z\(d)")])
                let wrapped = try op(.maximum, try op(.add, v, try const(size, "\(tag)s\(d)"), "\(tag)w\(d)"), lower, "\(tag)wl\(d)")
                let capped = try op(.minimum, v, upper, "\(tag)c\(d)")
                return try select(neg, wrapped, capped, "\(tag)x\(d)")
            }
            let start = beginMask[d] ? try select(negative, upper, lower, "bdef\(d)") : try clamp(begin, "bc")
            let stop: String
            if endMask[d] {
                stop = try select(negative, lower, upper, "edef\(d)")
            } else {
                let e = try endV.map { try element($0, d, "e") } ?? (try const(Float(endIds[d]), "e\(d)"))
                stop = try clamp(e, "ec")
            }
            let count = try b.emit(name + "__n\(d)", .unary(UnaryAttributes(.ceil)), [try op(.realDiv, try op(.sub, stop, start, "span\(d)"), stride, "q\(d)")])
            let positions = try op(.add, try op(.mul, try arange(count: count, base: name + "__axis\(d)"), stride, "step\(d)"), start, "pos\(d)")
            let idx = try b.emit(name + "__idx\(d)", .cast(to: .int32), [positions])
            cur = try b.emit(name + "__take\(d)", .gather(axis: d), [cur, idx])
        }
        if squeezed.isEmpty { return try b.emit(name, .identity, [cur], output: out) }
        if squeezed.count == r { return try b.emit(name, .reshapeND(shape: [1]), [cur], output: out) }
        return try b.emit(name, .squeeze(axes: squeezed), [cur], output: out)
    }
}
