// NeuralNetwork v2 (rank-N) shape and data-movement layers → IR ops on the exact Core ML shapes.
import MLGraph

/// The rank-N shape and data-movement layers of NeuralNetwork.proto (specificationVersion ≥ 4,
/// `EXACT_ARRAY_MAPPING`): every tensor keeps Core ML's shape and axis order, so each layer maps
/// to IR ops on those shapes, negative axes counting from the end as the proto's comments say.
///
/// Core ML NeuralNetwork blobs are float32: index-valued inputs (gather / scatter indices,
/// lengths, one-hot positions) arrive as float32 and are cast to int32 for the IR op (as MIL's
/// NeuralNetwork frontend does), and index-valued outputs (getShape, argSort, topK indices) are
/// cast back to float32, so every blob this family produces is float32.
extension LayerImporter {
    /// Whether `l` is a layer of this family that needs exact (rank-N) tensors: in
    /// RANK5_ARRAY_MAPPING networks blobs are NHWC views of [Seq, B, C, H, W], where the proto's
    /// rank-N axes do not apply, so these layers are imported only in EXACT_ARRAY_MAPPING networks.
    static func isRankNShapeLayer(_ l: Spec.NeuralNetworkLayer.Layer) -> Bool {
        switch l {
        case .transpose, .reshapeStatic, .flattenTo2D, .expandDims, .squeeze, .concatND, .splitND, .stack, .tile, .gather,
             .sliceStatic, .embeddingND, .batchedMatmul, .loadConstantND, .constantPad:
            return true
        case .other(.reshapeLike), .other(.rankPreservingReshape), .other(.sliceBySize), .other(.gatherND),
             .other(.gatherAlongAxis), .other(.scatter), .other(.scatterND), .other(.scatterAlongAxis), .other(.getShape),
             .other(.broadcastToStatic), .other(.broadcastToDynamic), .other(.broadcastToLike), .other(.fillStatic),
             .other(.fillDynamic), .other(.fillLike), .other(.rangeStatic), .other(.reverse), .other(.reverseSeq),
             .other(.slidingWindows), .other(.oneHot), .other(.upperTriangular), .other(.lowerTriangular),
             .other(.matrixBandPart), .other(.argSort), .other(.topK), .other(.cumSum), .other(.rangeDynamic),
             .other(.whereNonZero), .other(.reshapeDynamic), .other(.sliceDynamic):
            return true
        default:
            return false
        }
    }

    /// The refusal of a rank-N shape layer in a RANK5_ARRAY_MAPPING network.
    static let rankNShapeLayerNeedsExact = "is a rank-N layer in a network with RANK5_ARRAY_MAPPING; mlconv imports rank-N shape "
        + "layers in EXACT_ARRAY_MAPPING networks (NeuralNetwork.arrayInputShapeMapping), where tensors keep their exact shapes"

    // MARK: helpers

    /// `axis` (negative counts from the end) as 0..<`rank` (or 0...`rank` when `inclusive`).
    func ndAxis(_ axis: Int64, rank: Int, _ what: String = "axis", inclusive: Bool = false) throws -> Int {
        let hi = inclusive ? rank : rank - 1
        guard let a = Int(exactly: axis), a >= -(hi + 1), a <= hi else {
            throw LayerImportFailure("has \(what) \(axis); for a rank-\(rank) input it must be in \(-(hi + 1))…\(hi)")
        }
        return a < 0 ? a + hi + 1 : a
    }

    func elementType(_ t: String) -> ElementType { b.types[t]?.elementType ?? .float32 }

    /// `t` in element type `e`: itself, or a `cast` node `<base>__<e>`.
    func cast(_ t: String, to e: ElementType, base: String) throws -> String {
        if elementType(t) == e { return t }
        return try b.emit(base + "__" + e.rawValue, .cast(to: e), [t])
    }

    /// Makes `t` the layer's output tensor (an identity node named after the layer when `t` does
    /// not come from a node of this layer).
    func finishND(_ t: String, name: String, out: String) throws -> String {
        if let last = b.nodes.last, last.outputs == [t], last.name.hasPrefix(name) { return t }
        return try b.emit(name, .identity, [t], output: out)
    }

    /// The fully known shape of `t`, or a failure naming `what` needs it.
    func knownShape(_ t: String, _ what: String) throws -> [Int] {
        let s = b.shape(t)
        guard !s.contains(TensorType.unknown) else {
            throw LayerImportFailure("\(what) needs the input's shape, which is only known at prediction time (\(formatShape(s)))")
        }
        return s
    }

    func expectInputCount(_ ins: [String], _ allowed: ClosedRange<Int>) throws {
        guard allowed.contains(ins.count) else {
            let want = allowed.count == 1 ? "\(allowed.lowerBound)" : "\(allowed.lowerBound)…\(allowed.upperBound)"
            throw LayerImportFailure("expects \(want) input blob(s), found \(ins.count)")
        }
    }

    static func scatterMode(_ m: Spec.ScatterMode) throws -> ScatterMode {
        switch m {
        case .scatterUpdate: return .update
        case .scatterAdd: return .add
        case .scatterSub: return .sub
        case .scatterMul: return .mul
        case .scatterDiv: return .div
        case .scatterMax: return .max
        case .scatterMin: return .min
        default: throw LayerImportFailure("has scatter mode \(m), which NeuralNetwork.proto does not define")
        }
    }

    // MARK: reshapes

    func transposeND(_ axes: [UInt64], _ x: String, name: String, out: String) throws -> String {
        let r = b.shape(x).count
        let perm = try Checked.ints(axes, "axes", in: 0...Swift.max(0, r - 1))
        guard perm.count == r, Set(perm).count == r else {
            throw LayerImportFailure("has axes \(axes); expected a permutation of 0..<\(r) for its rank-\(r) input")
        }
        return try b.emit(name, .transpose(perm: perm), [x], output: out)
    }

    func reshapeStatic(_ target: [Int64], _ x: String, name: String, out: String) throws -> String {
        let s = try Checked.ints(target, "targetShape", in: -1...Node.maxCountAttribute)
        guard !s.isEmpty, s.filter({ $0 == -1 }).count <= 1, !s.contains(0) else {
            throw LayerImportFailure("has targetShape \(target); expected positive sizes and at most one -1")
        }
        return try b.emit(name, .reshapeND(shape: s), [x], output: out)
    }

    /// rankPreservingReshape: 0 keeps the input's dimension, one −1 is inferred.
    func rankPreservingReshape(_ target: [Int64], _ x: String, name: String, out: String) throws -> String {
        let s = b.shape(x)
        var t = try Checked.ints(target, "targetShape", in: -1...Node.maxCountAttribute)
        guard t.count == s.count else {
            throw LayerImportFailure("has targetShape \(target) of length \(t.count); its input has rank \(s.count)")
        }
        for i in t.indices where t[i] == 0 {
            guard s[i] != TensorType.unknown else { throw LayerImportFailure("keeps dimension \(i), which is only known at prediction time") }
            t[i] = s[i]
        }
        guard t.filter({ $0 == -1 }).count <= 1 else { throw LayerImportFailure("has targetShape \(target) with more than one -1") }
        return try b.emit(name, .reshapeND(shape: t), [x], output: out)
    }

    /// flattenTo2D: [∏ shape[..<axis], ∏ shape[axis...]] (axis in −rank…rank).
    func flattenTo2D(_ axis: Int64, _ x: String, name: String, out: String) throws -> String {
        let s = b.shape(x)
        let a = try ndAxis(axis, rank: s.count, inclusive: true)
        func side(_ dims: ArraySlice<Int>) throws -> Int {
            if dims.contains(TensorType.unknown) { return -1 }
            return try Checked.product(Array(dims), "flattened dimensions")
        }
        let shape = [try side(s[..<a]), try side(s[a...])]
        guard shape.filter({ $0 == -1 }).count <= 1 else {
            throw LayerImportFailure("flattening \(formatShape(s)) at axis \(a): both sides have dimensions known only at prediction time")
        }
        return try b.emit(name, .reshapeND(shape: shape), [x], output: out)
    }

    func reshapeLike(_ ins: [String], name: String, out: String) throws -> String {
        try expectInputs(ins2: ins, 2)
        let s = try knownShape(ins[1], "reshapeLike's second input")
        return try b.emit(name, .reshapeND(shape: s), [ins[0]], output: out)
    }

    func expandDimsND(_ axes: [Int64], _ x: String, name: String, out: String) throws -> String {
        let outRank = b.shape(x).count + axes.count
        let a = try axes.map { try ndAxis($0, rank: outRank, "axes entry") }
        guard !a.isEmpty, Set(a).count == a.count else { throw LayerImportFailure("has axes \(axes); expected distinct axes of the output") }
        return try b.emit(name, .expandDims(axes: a.sorted()), [x], output: out)
    }

    /// squeeze: removes the given unit axes (all of them with squeezeAll); a rank-1 result stays
    /// rank 1, as the proto's example (1,) → (1,) says.
    func squeezeND(_ axes: [Int64], all: Bool, _ x: String, name: String, out: String) throws -> String {
        let s = b.shape(x)
        var remove: [Int]
        if all || axes.isEmpty {
            remove = s.indices.filter { s[$0] == 1 }
        } else {
            remove = try axes.map { try ndAxis($0, rank: s.count, "axes entry") }
            for a in remove where s[a] != 1 && s[a] != TensorType.unknown {
                throw LayerImportFailure("squeezes axis \(a) of size \(s[a]) (input \(formatShape(s))); only unit axes can be removed")
            }
            remove = Array(Set(remove)).sorted()
        }
        if remove.isEmpty { return try b.emit(name, .identity, [x], output: out) }
        if remove.count == s.count {
            return try b.emit(name, .reshapeND(shape: [1]), [x], output: out)
        }
        return try b.emit(name, .squeeze(axes: remove), [x], output: out)
    }

    // MARK: concat, split, stack, tile

    func concatND(_ axis: Int64, interleave: Bool, _ ins: [String], name: String, out: String) throws -> String {
        guard !ins.isEmpty else { throw LayerImportFailure("has no inputs") }
        let s = b.shape(ins[0])
        let a = try ndAxis(axis, rank: s.count)
        if !interleave || ins.count == 1 { return try b.emit(name, .concat(axis: a), ins, output: out) }
        // Interleave: out[i·n + k] = input_k[i] along the axis — stack after the axis, then merge.
        for t in ins where b.shape(t) != s {
            throw LayerImportFailure("interleaves inputs of shapes \(formatShape(s)) and \(formatShape(b.shape(t))); they must be equal")
        }
        let known = try knownShape(ins[0], "concatND with interleave")
        let stacked = try b.emit(name + "__stack", .stack(axis: a + 1), ins)
        var merged = known
        merged[a] = try Checked.product([known[a], ins.count], "interleaved size")
        return try b.emit(name, .reshapeND(shape: merged), [stacked], output: out)
    }

    func splitND(_ p: Spec.SplitNDLayerParams, _ x: String, layer: Spec.NeuralNetworkLayer) throws -> [String] {
        let s = b.shape(x)
        let a = try ndAxis(p.axis, rank: s.count)
        let n = layer.output.count
        let attrs: SplitAttributes
        if !p.splitSizes.isEmpty {
            let sizes = try Checked.ints(p.splitSizes, "splitSizes", in: 1...Node.maxCountAttribute)
            guard sizes.count == n else { throw LayerImportFailure("has \(sizes.count) splitSizes but \(n) output blobs") }
            attrs = SplitAttributes(axis: a, splitSizes: sizes)
        } else {
            let k = try Checked.int(p.numSplits, "numSplits")
            guard k == 0 || k == n else { throw LayerImportFailure("has numSplits \(k) but \(n) output blobs") }
            attrs = SplitAttributes(axis: a, numSplits: n)
        }
        if n == 1 { return [try b.emit(layer.name, .identity, [x], output: layer.output[0])] }
        return try b.emitMulti(layer.name, .split(attrs), [x], outputs: layer.output)
    }

    func stackND(_ axis: Int64, _ ins: [String], name: String, out: String) throws -> String {
        guard !ins.isEmpty else { throw LayerImportFailure("has no inputs") }
        let a = try ndAxis(axis, rank: b.shape(ins[0]).count + 1)
        return try b.emit(name, .stack(axis: a), ins, output: out)
    }

    func tileND(_ reps: [UInt64], _ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 1...2)
        if ins.count == 2 { return try tileDynamic(ins, name: name, out: out) }  // ShapeDynamicImport.swift
        let r = try Checked.ints(reps, "reps", in: 1...Node.maxCountAttribute)
        guard !r.isEmpty else { throw LayerImportFailure("has no reps") }
        return try b.emit(name, .tile(reps: r), ins, output: out)
    }

    // MARK: slicing

    func sliceStatic(_ p: Spec.SliceStaticLayerParams, _ x: String, name: String, out: String) throws -> String {
        let r = b.shape(x).count
        let range = -Int(Int32.max)...Int(Int32.max)
        let begin = try Checked.ints(p.beginIds, "beginIds", in: range)
        let end = try Checked.ints(p.endIds, "endIds", in: range)
        var strides = try Checked.ints(p.strides, "strides", in: range)
        if strides.isEmpty { strides = Array(repeating: 1, count: r) }
        guard begin.count == r, end.count == r, strides.count == r else {
            throw LayerImportFailure("has beginIds/endIds/strides of lengths \(begin.count)/\(end.count)/\(strides.count); its input has rank \(r)")
        }
        for (name, m) in [("beginMasks", p.beginMasks), ("endMasks", p.endMasks), ("squeezeMasks", p.squeezeMasks)] where !m.isEmpty && m.count != r {
            throw LayerImportFailure("has \(m.count) \(name); its input has rank \(r)")
        }
        guard !strides.contains(0) else { throw LayerImportFailure("has a stride of 0") }
        let attrs = SliceByIndexAttributes(begin: begin, end: end, stride: strides, beginMask: p.beginMasks,
                                           endMask: p.endMasks, squeezeMask: p.squeezeMasks)
        if r > 0, p.squeezeMasks.count == r, p.squeezeMasks.allSatisfy({ $0 }) {
            // Every axis squeezed: one element, which Core ML keeps as shape [1].
            let scalar = try b.emit(name + "__slice", .sliceByIndex(attrs), [x])
            return try b.emit(name, .reshapeND(shape: [1]), [scalar], output: out)
        }
        return try b.emit(name, .sliceByIndex(attrs), [x], output: out)
    }

    /// sliceBySize: x[…, begin ..< begin + size, …] along `axis`, begin read from the second input
    /// at prediction time: a gather of the indices begin + 0 ..< size (negative begin counts from
    /// the end, as gather's negative indices do).
    func sliceBySize(_ p: Spec.SliceBySizeLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputs(ins2: ins, 2)
        let s = b.shape(ins[0])
        let a = try ndAxis(p.axis, rank: s.count)
        let size = try Checked.int(p.size, "size", in: 1...Node.maxCountAttribute)
        if s[a] != TensorType.unknown, size > s[a] {
            throw LayerImportFailure("slices \(size) elements from an axis of size \(s[a])")
        }
        let offsets = try b.emit(name + "__offsets", .constant, [],
                                 weights: ["value": ConstantTensor(shape: [size], floats: (0..<size).map(Float.init))])
        let begin = try cast(ins[1], to: .float32, base: name + "__begin")
        let idx = try b.emit(name + "__indices_f", .binary(.add), [offsets, begin])
        let idxInt = try b.emit(name + "__indices", .cast(to: .int32), [idx])
        return try b.emit(name, .gather(axis: a), [ins[0], idxInt], output: out)
    }

    func slidingWindows(_ p: Spec.SlidingWindowsLayerParams, _ x: String, name: String, out: String) throws -> String {
        let a = try ndAxis(p.axis, rank: b.shape(x).count)
        let size = try Checked.int(p.windowSize, "windowSize", in: 1...Node.maxCountAttribute)
        let step = try Checked.int(p.step, "step", in: 1...Node.maxCountAttribute)
        return try b.emit(name, .slidingWindows(SlidingWindowsAttributes(axis: a, size: size, stride: step)), [x], output: out)
    }

    // MARK: gather and scatter

    func gatherND(_ kind: OpKind, axis: Int64?, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputs(ins2: ins, 2)
        let idx = try cast(ins[1], to: .int32, base: name + "__indices")
        let r = b.shape(ins[0]).count
        let op: Op
        switch kind {
        case .gather: op = .gather(axis: try ndAxis(axis ?? 0, rank: r))
        case .gatherAlongAxis: op = .gatherAlongAxis(axis: try ndAxis(axis ?? 0, rank: r))
        default: op = .gatherND
        }
        return try b.emit(name, op, [ins[0], idx], output: out)
    }

    func scatterND(_ kind: OpKind, axis: Int64?, mode: Spec.ScatterMode, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputs(ins2: ins, 3)
        let m = try Self.scatterMode(mode)
        let idx = try cast(ins[1], to: .int32, base: name + "__indices")
        let r = b.shape(ins[0]).count
        let op: Op
        switch kind {
        case .scatter: op = .scatter(ScatterAttributes(axis: try ndAxis(axis ?? 0, rank: r), mode: m))
        case .scatterAlongAxis: op = .scatterAlongAxis(ScatterAttributes(axis: try ndAxis(axis ?? 0, rank: r), mode: m))
        default: op = .scatterND(mode: m)
        }
        return try b.emit(name, op, [ins[0], idx, ins[2]], output: out)
    }

    /// embeddingND: indices [..., 1] → [..., embeddingSize], y[…, :] = W[:, x[…, 0]] + bias with
    /// W stored [embeddingSize, vocabSize] (the IR embedding's layout).
    func embeddingND(_ p: Spec.EmbeddingNDLayerParams, _ x: String, name: String, out: String) throws -> String {
        let s = b.shape(x)
        guard let last = s.last, last == 1 || last == TensorType.unknown else {
            throw LayerImportFailure("expects indices of shape [..., 1], found \(formatShape(s))")
        }
        let e = try Checked.int(p.embeddingSize, "embeddingSize", in: 1...Node.maxCountAttribute)
        let v = try Checked.int(p.vocabSize, "vocabSize", in: 1...Node.maxCountAttribute)
        let w = try WeightImport.constant(p.weights, shape: [e, v], axis: 0, what: "weight")
        let lead = Array(s.dropLast())
        let flat = try b.emit(name + "__indices", .reshapeND(shape: [1, -1]), [x])
        let looked = try b.emit(name + "__lookup", .embedding(outputChannels: e), [flat], weights: ["weight": w])
        let outShape = lead.isEmpty ? [e] : lead.map { $0 == TensorType.unknown ? -1 : $0 } + [e]
        guard outShape.filter({ $0 == -1 }).count <= 1 else {
            throw LayerImportFailure("has indices \(formatShape(s)) with more than one dimension known only at prediction time")
        }
        guard p.hasBias else { return try b.emit(name, .reshapeND(shape: outShape), [looked], output: out) }
        let shaped = try b.emit(name + "__shape", .reshapeND(shape: outShape), [looked])
        let bias = try WeightImport.constant(p.bias, shape: [e], what: "bias")
        return try b.emit(name, .binary(.add), [shaped], output: out, weights: ["y": bias])
    }

    // MARK: shapes, fills, broadcasts, ranges, constants

    func getShape(_ x: String, name: String, out: String) throws -> String {
        let s = try b.emit(name + "__shape", .shape, [x])
        return try b.emit(name, .cast(to: .float32), [s], output: out)
    }

    /// A float32 tensor of `x`'s shape filled with `value`: a static `fill` when the shape is known,
    /// else `shape` then a dynamic `fill`.
    func fill(like x: String, value: Float, base: String, output: String? = nil) throws -> String {
        let s = b.shape(x)
        if !s.contains(TensorType.unknown), !s.isEmpty {
            return try b.emit(base, .fill(FillAttributes(shape: s, value: value)), [], output: output)
        }
        let shape = try b.emit(base + "__shape", .shape, [x])
        return try b.emit(base, .fill(FillAttributes(shape: [], value: value)), [shape], output: output)
    }

    func fillStatic(_ p: Spec.FillStaticLayerParams, name: String, out: String) throws -> String {
        let s = try Checked.ints(p.targetShape, "targetShape", in: 1...Node.maxCountAttribute)
        guard !s.isEmpty else { throw LayerImportFailure("has an empty targetShape") }
        _ = try Checked.product(s, "targetShape")
        return try b.emit(name, .fill(FillAttributes(shape: s, value: p.value)), [], output: out)
    }

    func fillDynamic(_ value: Float, _ shape: String, name: String, out: String) throws -> String {
        // Dimensions known at import (e.g. a constant element shape after a run-time length) are
        // kept in the type by a reshapeND (ImportBuilder.staticElements, ControlFlowImport.swift).
        if let e = b.staticElements(shape), e.contains(where: { $0 != nil }), e.filter({ $0 == nil }).count <= 1,
           e.allSatisfy({ $0.map { $0 >= 1 && $0 <= Double(Node.maxCountAttribute) && $0 == $0.rounded() } ?? true }) {
            let filled = try b.emit(name + "__fill", .fill(FillAttributes(shape: [], value: value)), [shape])
            return try b.emit(name, .reshapeND(shape: e.map { $0.map { Int($0) } ?? -1 }), [filled], output: out)
        }
        return try b.emit(name, .fill(FillAttributes(shape: [], value: value)), [shape], output: out)
    }

    /// broadcastTo*: x + zeros(target shape) with NumPy broadcasting, which is numpy.broadcast_to
    /// when x broadcasts to the target.
    func broadcast(_ x: String, toZeros zeros: String, name: String, out: String) throws -> String {
        try b.emit(name, .binary(.add), [x, zeros], output: out)
    }

    func broadcastToStatic(_ target: [UInt64], _ x: String, name: String, out: String) throws -> String {
        let s = try Checked.ints(target, "targetShape", in: 1...Node.maxCountAttribute)
        guard !s.isEmpty else { throw LayerImportFailure("has an empty targetShape") }
        _ = try Checked.product(s, "targetShape")
        let zeros = try b.emit(name + "__zeros", .fill(FillAttributes(shape: s, value: 0)), [])
        return try broadcast(x, toZeros: zeros, name: name, out: out)
    }

    func rangeStatic(_ p: Spec.RangeStaticLayerParams, name: String, out: String) throws -> String {
        let a = RangeAttributes(start: p.startValue, end: p.endValue, step: p.stepSizeValue)
        guard p.stepSizeValue != 0, let n = a.count, n >= 1 else {
            throw LayerImportFailure("has range start \(p.startValue), end \(p.endValue), step \(p.stepSizeValue), which gives no values")
        }
        return try b.emit(name, .range1d(a), [], output: out)
    }

    func loadConstantND(_ p: Spec.LoadConstantLayerParams, name: String, out: String) throws -> String {
        let s = try Checked.ints(p.shape, "shape", in: 1...Node.maxCountAttribute)
        guard !s.isEmpty else { throw LayerImportFailure("has an empty constant shape") }
        _ = try Checked.product(s, "constant shape")
        let w = try WeightImport.constant(p.data, shape: s, what: "constant")
        return try b.emit(name, .constant, [], output: out, weights: ["value": w])
    }

    // MARK: reverse, sort, top-k, cumulative sum, one-hot

    func reverseND(_ dims: [Bool], _ x: String, name: String, out: String) throws -> String {
        let r = b.shape(x).count
        guard dims.count == r else { throw LayerImportFailure("has \(dims.count) reverseDim entries; its input has rank \(r)") }
        let axes = dims.indices.filter { dims[$0] }
        if axes.isEmpty { return try b.emit(name, .identity, [x], output: out) }
        return try b.emit(name, .reverse(axes: axes), [x], output: out)
    }

    func reverseSeq(_ p: Spec.ReverseSeqLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputs(ins2: ins, 2)
        let r = b.shape(ins[0]).count
        let batch = try ndAxis(p.batchAxis, rank: r, "batchAxis"), seq = try ndAxis(p.sequenceAxis, rank: r, "sequenceAxis")
        guard batch != seq else { throw LayerImportFailure("has batchAxis = sequenceAxis = \(batch)") }
        let lengths = try cast(ins[1], to: .int32, base: name + "__lengths")
        return try b.emit(name, .reverseSequence(seqAxis: seq, batchAxis: batch), [ins[0], lengths], output: out)
    }

    func argSort(_ p: Spec.ArgSortLayerParams, _ x: String, name: String, out: String) throws -> String {
        let a = try ndAxis(p.axis, rank: b.shape(x).count)
        let idx = try b.emit(name + "__indices", .argsort(axis: a, ascending: !p.descending), [x])
        return try b.emit(name, .cast(to: .float32), [idx], output: out)
    }

    func topK(_ p: Spec.TopKLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer) throws -> [String] {
        try expectInputCount(ins, 1...2)
        guard layer.output.count == 2 else { throw LayerImportFailure("has \(layer.output.count) output blobs; topK gives values and indices") }
        if ins.count == 2 { return try topKDynamic(p, ins, layer: layer) }  // ShapeDynamicImport.swift
        let s = b.shape(ins[0])
        let a = try ndAxis(p.axis, rank: s.count)
        let k = try Checked.int(p.k, "K", in: 1...Node.maxCountAttribute)
        let outs = try b.emitMulti(layer.name + "__topk", .topk(TopKAttributes(k: k, axis: a, ascending: p.useBottomK)), ins,
                                   outputs: [layer.output[0] + "__values", layer.output[1] + "__indices"])
        let values = try b.emit(layer.name, .identity, [outs[0]], output: layer.output[0])
        let indices = try b.emit(layer.name + "__indices_f", .cast(to: .float32), [outs[1]], output: layer.output[1])
        return [values, indices]
    }

    func cumSum(_ p: Spec.CumSumLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 1...2)
        guard ins.count == 1 else {
            throw LayerImportFailure("takes its axis from a second input, known only at prediction time; mlconv's IR cumsum needs a constant axis")
        }
        let a = try ndAxis(p.axis, rank: b.shape(ins[0]).count)
        return try b.emit(name, .cumsum(CumsumAttributes(axis: a, exclusive: p.excludeFinalSum, reverse: p.reverse)), ins, output: out)
    }

    func oneHot(_ p: Spec.OneHotLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 1...2)
        if ins.count == 2 { return try oneHotDynamic(p, ins, name: name, out: out) }  // ShapeDynamicImport.swift
        let r = b.shape(ins[0]).count
        let depth = try Checked.int(p.oneHotVectorSize, "oneHotVectorSize", in: 1...Node.maxCountAttribute)
        let a = try ndAxis(p.axis, rank: r + 1)
        let idx = try cast(ins[0], to: .int32, base: name + "__indices")
        let attrs = OneHotAttributes(depth: depth, axis: a, onValue: p.onValue, offValue: p.offValue)
        return try b.emit(name, .oneHot(attrs), [idx], output: out)
    }

    // MARK: band parts

    /// Keeps x[…, m, n] (m, n the last two axes) where lo ≤ n − m ≤ hi (nil: unbounded), zero
    /// elsewhere: `bandPart` when the region contains the diagonal, else a select with a constant
    /// mask over the last two axes.
    func band(_ x: String, lo: Int?, hi: Int?, name: String, out: String) throws -> String {
        if (lo ?? 0) <= 0, (hi ?? 0) >= 0 {
            return try b.emit(name, .bandPart(lower: lo.map { -$0 } ?? -1, upper: hi ?? -1), [x], output: out)
        }
        let s = b.shape(x)
        guard s.count >= 2 else { throw LayerImportFailure("needs an input of rank ≥ 2, found \(formatShape(s))") }
        let (rows, cols) = (s[s.count - 2], s[s.count - 1])
        guard rows > 0, cols > 0 else { throw LayerImportFailure("needs the last two dimensions, which are only known at prediction time") }
        let count = try Checked.product([rows, cols], "matrix size")
        var mask = [Float](repeating: 0, count: count)
        for m in 0..<rows {
            for n in 0..<cols where (lo.map { n - m >= $0 } ?? true) && (hi.map { n - m <= $0 } ?? true) {
                mask[m * cols + n] = 1
            }
        }
        let maskF = try b.emit(name + "__mask", .constant, [], weights: ["value": ConstantTensor(shape: [rows, cols], floats: mask)])
        let maskB = try b.emit(name + "__mask_bool", .cast(to: .bool), [maskF])
        let zero = try b.emit(name + "__zero", .constant, [], weights: ["value": ConstantTensor(shape: [1], floats: [0])])
        return try b.emit(name, .select, [maskB, x, zero], output: out)
    }

    /// matrixBandPart: keep m − n ≤ numLower and n − m ≤ numUpper (a negative bound: unbounded).
    func matrixBandPart(_ p: Spec.MatrixBandPartLayerParams, _ x: String, name: String, out: String) throws -> String {
        let range = -Node.maxCountAttribute...Node.maxCountAttribute
        let lower = try Checked.int(p.numLower, "numLower", in: range), upper = try Checked.int(p.numUpper, "numUpper", in: range)
        return try band(x, lo: lower < 0 ? nil : -lower, hi: upper < 0 ? nil : upper, name: name, out: out)
    }

    /// lowerTriangular: numpy.tril(x, k), keep n − m ≤ k.
    func lowerTriangular(_ k: Int64, _ x: String, name: String, out: String) throws -> String {
        let k = try Checked.int(k, "k", in: -Node.maxCountAttribute...Node.maxCountAttribute)
        return try band(x, lo: nil, hi: k, name: name, out: out)
    }

    /// upperTriangular: numpy.triu(x, k), keep n − m ≥ k.
    func upperTriangular(_ k: Int64, _ x: String, name: String, out: String) throws -> String {
        let k = try Checked.int(k, "k", in: -Node.maxCountAttribute...Node.maxCountAttribute)
        return try band(x, lo: k, hi: nil, name: name, out: out)
    }

    // MARK: matmul and padding

    func batchedMatmul(_ p: Spec.BatchedMatMulLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 1...2)
        if ins.count == 2 {
            // Rank-1 operands: (D) → (1, D) first, (D) → (D, 1) second; the inserted axis stays.
            var a = ins[0], c = ins[1]
            if b.shape(a).count == 1 { a = try b.emit(name + "__a2d", .reshapeND(shape: [1, -1]), [a]) }
            if b.shape(c).count == 1 { c = try b.emit(name + "__b2d", .reshapeND(shape: [-1, 1]), [c]) }
            let attrs = MatMulAttributes(transposeX: p.transposeA, transposeY: p.transposeB)
            return try b.emit(name, .matmul(attrs), [a, c], output: out)
        }
        let x1 = try Checked.int(p.weightMatrixFirstDimension, "weightMatrixFirstDimension", in: 1...Node.maxCountAttribute)
        let x2 = try Checked.int(p.weightMatrixSecondDimension, "weightMatrixSecondDimension", in: 1...Node.maxCountAttribute)
        let last = b.shape(ins[0]).last ?? 0
        guard last == x1 || last == TensorType.unknown else {
            throw LayerImportFailure("has a [\(x1), \(x2)] weight matrix but its input's last dimension is \(last)")
        }
        if p.int8DynamicQuantize {
            b.warnings.append("batchedMatmul '\(name)': int8DynamicQuantize is imported with float32 inputs and dequantized "
                + "weights; Core ML quantizes the input to int8 at run time, so results differ by that rounding")
        }
        // The weights are [X1, X2] stored column-major, i.e. Wᵀ [X2, X1] row-major: multiply by its transpose.
        let w = try WeightImport.constant(p.weights, shape: [x2, x1], axis: 0, what: "weight")
        let attrs = MatMulAttributes(transposeY: true)
        guard p.hasBias else { return try b.emit(name, .matmul(attrs), [ins[0]], output: out, weights: ["y": w]) }
        let y = try b.emit(name + "__matmul", .matmul(attrs), [ins[0]], weights: ["y": w])
        let bias = try WeightImport.constant(p.bias, shape: [x2], what: "bias")
        return try b.emit(name, .binary(.add), [y], output: out, weights: ["y": bias])
    }

    func constantPad(_ p: Spec.ConstantPaddingLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        try expectInputCount(ins, 1...2)
        guard ins.count == 1 else {
            throw LayerImportFailure("takes its pad amounts from a second input, known only at prediction time; mlconv's IR pad needs constant amounts")
        }
        let s = b.shape(ins[0])
        let amounts = try Checked.ints(p.padAmounts, "padAmounts")
        guard amounts.count == 2 * s.count else {
            throw LayerImportFailure("has \(amounts.count) padAmounts; its rank-\(s.count) input needs \(2 * s.count)")
        }
        var pads: [[Int]] = []
        for i in s.indices {
            var before = amounts[2 * i], after = amounts[2 * i + 1]
            if p.padToGivenOutputSizeMode {
                // A non-zero amount is the output size on that axis (padding on that side).
                guard before == 0 || after == 0 else {
                    throw LayerImportFailure("has padAmounts \(before) and \(after) on axis \(i); in padToGivenOutputSizeMode one must be 0")
                }
                if before != 0 || after != 0 {
                    guard s[i] != TensorType.unknown else { throw LayerImportFailure("pads axis \(i) to a given size, but its size is only known at prediction time") }
                    before = before != 0 ? Swift.max(0, before - s[i]) : 0
                    after = after != 0 ? Swift.max(0, after - s[i]) : 0
                }
            }
            pads.append([before, after])
        }
        return try b.emit(name, .pad(PadAttributes(mode: .constant, pads: pads, value: p.value)), ins, output: out)
    }

    private func expectInputs(ins2 ins: [String], _ n: Int) throws {
        guard ins.count == n else { throw LayerImportFailure("expects \(n) input blob(s), found \(ins.count)") }
    }
}
