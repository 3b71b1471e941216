// EXACT_ARRAY_MAPPING networks (NeuralNetwork.arrayInputShapeMapping = EXACT, specification
// version ≥ 4): every blob keeps Core ML's exact shape and axis order.
//
// Tensors. A multi-array input declared with shape s is the IR input of shape s (any rank ≥ 1,
// no batch axis added); every blob is the IR tensor of the same shape Core ML gives it. Rank-N
// (v2) layers map to IR ops on these shapes directly (LayerImporter.convert and the per-family
// files). Outputs are returned in the declared shape (a reshape when only the element order
// agrees). Image inputs stay NHWC [1, H, W, C] graph inputs (with their preprocessing); their blob
// is the Core ML tensor [1, C, H, W] (RANK4_IMAGE_MAPPING) or [1, 1, C, H, W] (RANK5).
//
// Classic (v1) layers. NeuralNetwork.proto's header gives their axes in the rank-N setting:
// width = axis −1, height = −2, channel = −3, sequence = −5; the leading axes up to −4 are batch.
// - Layout-free layers (activations without per-channel parameters, unary, add / multiply /
//   average / max / min with NumPy broadcasting of the given shapes) run on the tensor as is.
// - softmax, concat, split work on axis −3 (concat with sequenceConcat on −5); sequenceRepeat
//   tiles axis −5; permute transposes the rank-5 [Seq, B, C, H, W] blob keeping B (axis 1).
// - innerProduct per its proto comment: rank 1–3 on the last axis; rank 4 [x1, C, H, W] and rank 5
//   [x1, x2, C, H, W] flatten (C, H, W) and give [x1, Cout, 1, 1] / [x1, x2, Cout, 1, 1].
// - embedding takes [x1, 1, 1, 1] or [x1, x2, 1, 1, 1] indices and gives [x1, D, 1, 1] /
//   [x1, x2, D, 1, 1].
// - recurrent layers read [Seq, B, C, 1, 1] and give [Seq, B, U, 1, 1] (sequence output) or
//   [1, B, U, 1, 1] (last output, states); initial states are [1, B, U, 1, 1].
// - Every other v1 layer (convolution, pooling, batchnorm, bias, scale, crop, padding, upsample,
//   resizeBilinear, lrn, l2normalize, mvn, reduce, slice, reshape, flatten, reorganizeData, dot,
//   PReLU / parametricSoftplus activations, custom) is the rank-5 importer's NHWC conversion
//   wrapped in layout changes: the tensor [lead…, C, H, W] becomes [L, H, W, C] (L = the product
//   of the leading axes; [L, C] when H = W = 1) by a reshapeND and a transpose, the layer is
//   converted as in rank-5 models, and its result is brought back to [lead…, C', H', W'].
//   Inputs of rank < 3 are read as [C] → [C, 1, 1] and [H, W] → [1, H, W] (and given back in
//   that rank when the result allows).
import MLGraph

extension ImportBuilder {
    /// How an exact (rank-N) tensor was brought into the rank-5 importer's NHWC / vector layout.
    struct LegacyView {
        /// The NHWC [L, H, W, C] or vector [L, C] tensor.
        var tensor: String
        /// The exact tensor's leading (batch) axes before (C, H, W).
        var lead: [Int]
        /// The exact tensor's rank.
        var rank: Int
    }

    /// The NHWC [L, H, W, C] (or [L, C] when H = W = 1) view of the exact tensor `t` for a
    /// classic layer: reshapeND `<base>__nchw` / `<base>__rank5_in` and transpose `<base>__to_nhwc`.
    /// - Throws: `LayerImportFailure` when the shape has unknown dimensions.
    func legacyView(_ t: String, base: String) throws -> LegacyView {
        let s = shape(t)
        guard s.allSatisfy({ $0 >= 0 }) else {
            throw LayerImportFailure("reads blob of shape \(s) with dimensions known only at run time; classic (rank-5) layers need static shapes")
        }
        let r = s.count
        let lead: [Int], chw: [Int]
        switch r {
        case 0: lead = []; chw = [1, 1, 1]
        case 1: lead = []; chw = [s[0], 1, 1]
        case 2: lead = []; chw = [1, s[0], s[1]]
        default: lead = Array(s.prefix(r - 3)); chw = Array(s.suffix(3))
        }
        let l = try Checked.product(lead, "leading (batch) axes")
        let (c, h, w) = (chw[0], chw[1], chw[2])
        if h == 1 && w == 1 {
            let v = s == [l, c] ? t : try emit(base + "__rank5_in", .reshapeND(shape: [l, c]), [t])
            return LegacyView(tensor: v, lead: lead, rank: r)
        }
        let nchw: String
        if s == [l, c, h, w] {
            nchw = t
        } else if flexibleShapes, r >= 3, lead.allSatisfy({ $0 == 1 }) {  // [1…, C, H, W] → [1, C, H, W] at any H, W
            nchw = try emit(base + "__nchw", r == 3 ? .expandDims(axes: [0]) : .squeeze(axes: Array(0..<(r - 4))), [t])
        } else {
            nchw = try emit(base + "__nchw", .reshapeND(shape: [l, c, h, w]), [t])
        }
        let nhwc = try emit(base + "__to_nhwc", .transpose(perm: [0, 2, 3, 1]), [nchw])
        return LegacyView(tensor: nhwc, lead: lead, rank: r)
    }

    /// The exact tensor [lead…, C, H, W] of a rank-5 importer result `t` (NHWC [L, H, W, C] or
    /// vector [L, C]) for inputs seen through `view`.
    func exactFromLegacy(_ t: String, view: LegacyView, base: String) throws -> String {
        let s = shape(t)
        var x = t
        let chw: [Int]
        switch s.count {
        case 2: chw = [s[1], 1, 1]
        case 4:
            chw = [s[3], s[1], s[2]]
            x = try emit(base + "__to_nchw", .transpose(perm: [0, 3, 1, 2]), [t])
        default:
            throw LayerImportFailure("internal error: a classic layer gave the IR shape \(s) (expected [N, H, W, C] or [N, C]); please report it")
        }
        var target = view.lead + chw
        if view.rank <= 1 && chw[1] == 1 && chw[2] == 1 {
            target = [chw[0]]
        } else if view.rank == 2 && chw[0] == 1 {
            target = [chw[1], chw[2]]
        }
        if shape(x) == target { return x }
        if flexibleShapes, s.count == 4, view.rank >= 3, view.lead.allSatisfy({ $0 == 1 }), target.count == view.rank {
            // [1, C, H, W] → [1…, C, H, W] at any H, W.
            let op: Op = view.rank == 3 ? .squeeze(axes: [0]) : .expandDims(axes: Array(0..<(view.rank - 4)))
            return try emit(base + "__exact", op, [x])
        }
        return try emit(base + "__exact", .reshapeND(shape: target), [x])
    }
}

extension LayerImporter {
    /// Layer types the rank-5 importer refuses (for want of a sequence axis) that EXACT networks
    /// import: `staticUnsupportedReason` is not consulted for them in EXACT networks.
    static func exactImports(_ l: Spec.NeuralNetworkLayer.Layer) -> Bool {
        switch l {
        case .sequenceRepeat, .concat(sequenceConcat: true): return true
        case .other(.convolution3d), .other(.pooling3d), .other(.globalPooling3d): return true  // Conv3DImport.swift
        case .other(.branch), .other(.loop), .other(.loopBreak), .other(.loopContinue): return true  // ControlFlowImport.swift
        case .other(.nonMaximumSuppression): return true  // NMSLayerImport.swift
        case .other(.cropResize): return true  // CropResizeImport.swift
        case _ where needsUnrolledLSTM(l): return true  // UnrolledLSTMImport.swift
        case _ where isRankNShapeLayer(l): return true  // shape family (Layers/ShapeImport.swift)
        default: return false
        }
    }

    /// Converts one layer of an EXACT_ARRAY_MAPPING network (see the file comment); rank-N layers
    /// go to `convert` unchanged.
    func convertExact(_ layer: Spec.NeuralNetworkLayer, _ ins: [String], index: Int) throws -> [String] {
        let name = layer.name
        let out = layer.output.first ?? name
        switch layer.layer {
        case let .activation(p):
            switch p.nonlinearity {
            case .preLU, .parametricSoftplus: return try wrapped(layer, ins, index: index)
            default: return try convert(layer, ins, index: index)
            }
        case .add, .multiply, .average, .max, .min:
            if ins.count < 2 { return try convert(layer, ins, index: index) }
            let kind: ElementwiseKind
            switch layer.layer {
            case .add: kind = .add
            case .multiply: kind = .multiply
            case .average: kind = .average
            case .max: kind = .maximum
            default: kind = .minimum
            }
            return [try b.emit(name, .elementwise(kind), ins, output: out)]
        case .softmax:
            try expectCount(ins, 1)
            return [try b.emit(name, .softmax(axis: try channelAxis(ins[0], what: "softmax")), ins, output: out)]
        case let .concat(sequenceConcat):
            guard !ins.isEmpty else { throw LayerImportFailure("has no inputs") }
            if sequenceConcat {
                guard ins.allSatisfy({ b.shape($0).count >= 5 }) else {
                    throw LayerImportFailure("sequence concatenation (axis −5) needs inputs of rank ≥ 5, found shapes \(ins.map { b.shape($0) })")
                }
                return [try b.emit(name, .concat(axis: -5), ins, output: out)]
            }
            return [try b.emit(name, .concat(axis: try channelAxis(ins[0], what: "concat")), ins, output: out)]
        case let .split(n):
            try expectCount(ins, 1)
            let count = layer.output.count
            guard count >= 1, n == 0 || n == UInt64(count) else { throw LayerImportFailure("nOutputs \(n) does not match its \(count) output blobs") }
            let axis = try channelAxis(ins[0], what: "split")
            let c = b.shape(ins[0])[b.shape(ins[0]).count + axis]
            guard c % count == 0 else { throw LayerImportFailure("cannot split \(c) channels into \(count) equal parts") }
            return try b.emitMulti(name, .split(SplitAttributes(axis: axis, numSplits: count)), ins, outputs: layer.output)
        case let .sequenceRepeat(n):
            try expectCount(ins, 1)
            let r = b.shape(ins[0]).count
            guard r >= 5 else { throw LayerImportFailure("repeats axis −5 (the sequence) of a rank-\(r) blob; it needs rank ≥ 5") }
            let reps = try Checked.int(Swift.max(1, n), "nRepetitions", in: 1...Node.maxCountAttribute)
            var all = [Int](repeating: 1, count: r)
            all[r - 5] = reps
            return [try b.emit(name, .tile(reps: all), ins, output: out)]
        case let .permute(axis):
            try expectCount(ins, 1)
            return [try exactPermute(try Checked.ints(axis, "axis"), ins[0], name: name, out: out)]
        case let .innerProduct(p):
            try expectCount(ins, 1)
            return [try exactInnerProduct(p, ins[0], name: name, out: out)]
        case let .embedding(p):
            try expectCount(ins, 1)
            return [try exactEmbedding(p, ins[0], name: name, out: out)]
        case let .uniDirectionalLSTM(p) where Self.needsUnrolledLSTM(layer.layer):
            return try unrolledLSTM(p, ins, layer: layer)  // UnrolledLSTMImport.swift
        case .simpleRecurrent, .gru, .uniDirectionalLSTM, .biDirectionalLSTM:
            return try exactRecurrent(layer, ins, index: index)
        case let .loadConstant(p):
            let s = try Checked.ints(p.shape, "constant shape", in: 1...TensorType.maxElementCount)
            guard s.count == 3 else { throw LayerImportFailure("has constant shape \(s); expected [C, H, W]") }
            let values = try WeightImport.floats(p.data, count: Checked.product(s, "constant shape"), what: "constant")
            return [try b.emit(name, .constant, [], output: out, weights: ["value": ConstantTensor(shape: s, floats: values)])]
        case .convolution, .pooling, .batchnorm, .mvn, .l2normalize, .lrn, .crop, .padding, .upsample, .resizeBilinear,
             .scale, .bias, .reduce, .reshape, .flatten, .reorganizeData, .slice, .dot, .custom:
            return try wrapped(layer, ins, index: index)
        // Control flow: ControlFlowImport.swift.
        case let .other(.branch(p)): return try branch(p, ins, layer: layer)
        case let .other(.loop(p)): return try loop(p, ins, layer: layer)
        case .other(.loopBreak): return try loopFlag(ControlFlowImport.breakFlag, layer: layer)
        case .other(.loopContinue): return try loopFlag(ControlFlowImport.continueFlag, layer: layer)
        case let .other(.nonMaximumSuppression(p)): return try nonMaximumSuppressionLayer(p, ins, layer: layer)  // NMSLayerImport.swift
        case let .other(.cropResize(p)): return try cropResize(p, ins, layer: layer)  // CropResizeImport.swift
        default:
            if let r = try convert3D(layer, ins) { return r }  // Conv3DImport.swift
            return try convert(layer, ins, index: index)
        }
    }

    private func expectCount(_ ins: [String], _ n: Int) throws {
        guard ins.count == n else { throw LayerImportFailure("expects \(n) input blob(s), found \(ins.count)") }
    }

    /// Axis −3 (C) of a rank ≥ 3 tensor; axis 0 of a rank-1 tensor [C].
    private func channelAxis(_ t: String, what: String) throws -> Int {
        let r = b.shape(t).count
        if r >= 3 { return -3 }
        if r == 1 { return -1 }
        throw LayerImportFailure("\(what) works on axis −3 (C) and needs a blob of rank ≥ 3, found shape \(b.shape(t))")
    }

    /// A classic layer converted by the rank-5 importer between layout changes (file comment).
    private func wrapped(_ layer: Spec.NeuralNetworkLayer, _ ins: [String], index: Int) throws -> [String] {
        let views = try ins.enumerated().map { try b.legacyView($1, base: "\(layer.name)__in\($0)") }
        let outs = try convert(layer, views.map(\.tensor), index: index)
        guard let ref = views.max(by: { $0.rank < $1.rank }) else {
            return try outs.enumerated().map { i, t in
                try b.exactFromLegacy(t, view: ImportBuilder.LegacyView(tensor: t, lead: [], rank: 3), base: "\(layer.name)__out\(i)")
            }
        }
        return try outs.enumerated().map { try b.exactFromLegacy($1, view: ref, base: "\(layer.name)__out\($0)") }
    }

    /// permute of a rank-5 blob [Seq, B, C, H, W]: `axis` numbers [Seq, C, H, W]; B stays at 1.
    private func exactPermute(_ axis: [Int], _ x: String, name: String, out: String) throws -> String {
        guard axis.count == 4, axis.sorted() == [0, 1, 2, 3] else {
            throw LayerImportFailure("axis \(axis) is not a permutation of [Seq, C, H, W] = [0, 1, 2, 3]")
        }
        guard b.shape(x).count == 5 else { throw LayerImportFailure("permute needs a rank-5 blob [Seq, B, C, H, W], found shape \(b.shape(x))") }
        let at = [0, 2, 3, 4]
        let perm = [at[axis[0]], 1, at[axis[1]], at[axis[2]], at[axis[3]]]
        if perm == [0, 1, 2, 3, 4] { return try b.emit(name, .identity, [x], output: out) }
        return try b.emit(name, .transpose(perm: perm), [x], output: out)
    }

    /// innerProduct on rank 1–5 per InnerProductLayerParams' comment (file comment).
    private func exactInnerProduct(_ p: Spec.InnerProductLayerParams, _ x: String, name: String, out: String) throws -> String {
        let s = b.shape(x)
        let cin = try Checked.int(p.inputChannels, "inputChannels"), cout = try Checked.int(p.outputChannels, "outputChannels")
        var w: [String: ConstantTensor] = ["weight": try WeightImport.constant(p.weights, shape: [cout, cin], axis: 0, what: "weight")]
        if p.hasBias { w["bias"] = try WeightImport.constant(p.bias, shape: [cout], what: "bias") }
        let dense = Op.dense(DenseAttributes(outputChannels: cout))
        let matrix: [Int], result: [Int]
        switch s.count {
        case 1: matrix = [1, s[0]]; result = [cout]
        case 2, 3: matrix = s; result = Array(s.dropLast()) + [cout]
        case 4: matrix = [s[0], try Checked.product(Array(s[1...]), "C·H·W")]; result = [s[0], cout, 1, 1]
        case 5: matrix = [s[0] * s[1], try Checked.product(Array(s[2...]), "C·H·W")]; result = [s[0], s[1], cout, 1, 1]
        default: throw LayerImportFailure("innerProduct takes a blob of rank 1 to 5, found shape \(s)")
        }
        guard matrix.last == cin else {
            throw LayerImportFailure("has inputChannels \(cin) but its rank-\(s.count) input \(s) gives \(matrix.last ?? 0) input values per row")
        }
        if matrix == s { return try b.emit(name, dense, [x], output: out, weights: w) }
        let m = try b.emit(name + "__matrix", .reshapeND(shape: matrix), [x])
        let y = try b.emit(name, dense, [m], weights: w)
        return try b.emit(name + "__shape", .reshapeND(shape: result), [y], output: out)
    }

    /// embedding of [x1, 1, 1, 1] / [x1, x2, 1, 1, 1] indices → [x1, D, 1, 1] / [x1, x2, D, 1, 1].
    private func exactEmbedding(_ p: Spec.EmbeddingLayerParams, _ x: String, name: String, out: String) throws -> String {
        let s = b.shape(x)
        guard s.count == 4 || s.count == 5, s.suffix(3).allSatisfy({ $0 == 1 }) else {
            throw LayerImportFailure("embedding takes indices of shape [x1, 1, 1, 1] or [x1, x2, 1, 1, 1], found \(s)")
        }
        let lead = Array(s.dropLast(3))
        let n = try Checked.product(lead, "index count")
        let dim = try Checked.int(p.outputChannels, "outputChannels"), vocab = try Checked.int(p.inputDim, "inputDim")
        let wt = try WeightImport.constant(p.weights, shape: [dim, vocab], axis: 0, what: "weight")
        let idx = try b.emit(name + "__indices", .reshapeND(shape: [1, n]), [x])
        var e = try b.emit(name + "__lookup", .embedding(outputChannels: dim), [idx], weights: ["weight": wt])
        if p.hasBias {
            let bias = try WeightImport.floats(p.bias, count: dim, what: "bias")
            e = try b.emit(name + "__bias", .batchNorm(BatchNormAttributes(axis: 2, epsilon: 0)), [e], weights: [
                "mean": ConstantTensor(shape: [dim], floats: [Float](repeating: 0, count: dim)),
                "variance": ConstantTensor(shape: [dim], floats: [Float](repeating: 1, count: dim)),
                "beta": ConstantTensor(shape: [dim], floats: bias),
            ])
        }
        return try b.emit(name, .reshapeND(shape: lead + [dim, 1, 1]), [e], output: out)
    }

    /// Recurrent layers on [Seq, B, C, 1, 1] (file comment): the rank-5 importer's node on the
    /// sequence tensor [B, Seq, C], states [B, U].
    private func exactRecurrent(_ layer: Spec.NeuralNetworkLayer, _ ins: [String], index: Int) throws -> [String] {
        let name = layer.name
        guard let x = ins.first, x != RecurrentImport.absentState else { throw LayerImportFailure("has no sequence input") }
        let s = b.shape(x)
        guard s.count == 5, s[3] == 1, s[4] == 1 else {
            throw LayerImportFailure("recurrent layers read a sequence [Seq, Batch, C, 1, 1], found shape \(s)")
        }
        let (steps, batch) = (s[0], s[1])
        var seq = try b.emit(name + "__steps", .reshapeND(shape: [s[0], s[1], s[2]]), [x])
        seq = try b.emit(name + "__batch_first", .transpose(perm: [1, 0, 2]), [seq])
        var legacyIns = [seq]
        for (i, st) in ins.dropFirst().enumerated() {
            if st == RecurrentImport.absentState { legacyIns.append(st); continue }
            let ss = b.shape(st)
            guard let u = ss.count >= 3 ? ss[ss.count - 3] : ss.last else { throw LayerImportFailure("state input \(i + 1) has no shape") }
            legacyIns.append(try b.emit("\(name)__state\(i)_in", .reshapeND(shape: [batch, u]), [st]))
        }
        let outs = try recurrent(layer, legacyIns)
        return try outs.enumerated().map { i, t in
            let ts = b.shape(t)
            if i == 0 && ts.count == 3 {  // sequence output [B, Seq, U]
                let tr = try b.emit(name + "__seq_first", .transpose(perm: [1, 0, 2]), [t])
                return try b.emit(name + "__out0", .reshapeND(shape: [steps, batch, ts[2], 1, 1]), [tr])
            }
            guard let u = ts.last else { throw LayerImportFailure("internal error: recurrent output without shape") }
            return try b.emit("\(name)__out\(i)", .reshapeND(shape: [1, batch, u, 1, 1]), [t])
        }
    }
}

extension CoreMLImporter {
    /// A multi-array input of an EXACT network: the IR input of the declared shape, any rank.
    static func importExactInput(_ f: Spec.FeatureDescription, _ a: Spec.ArrayFeatureType, builder b: ImportBuilder,
                                 description: inout ModelDescription) throws {
        let s = try Checked.ints(a.shape, "shape", in: 0...TensorType.maxElementCount)
        guard !s.isEmpty, s.allSatisfy({ $0 > 0 }) else {
            throw LayerImportFailure("has shape \(a.shape); an EXACT_ARRAY_MAPPING input needs a declared shape of positive dimensions")
        }
        _ = try Checked.product(s, "shape")
        b.addInput(f.name, s)
        b.blobs[f.name] = f.name
        description.inputs.append(FeatureDescription(name: f.name, shortDescription: f.shortDescription))
    }

    /// The blob of an image input of an EXACT network: the NHWC graph input (after its
    /// preprocessing) transposed to Core ML's [1, C, H, W], reshaped to [1, 1, C, H, W] when `rank5`.
    /// With `flexibleSize` (an image size range or enumerated sizes) the rank-5 blob is made by
    /// `expandDims` on axis 0, which holds for every size, instead of a reshape to the default size.
    static func exactImageBlob(_ name: String, rank5: Bool, flexibleSize: Bool = false, builder b: ImportBuilder) throws {
        let t = try b.blob(name)
        let s = b.shape(t)
        guard s.count == 4 else { return }
        var x = try b.emit(name + "__to_nchw", .transpose(perm: [0, 3, 1, 2]), [t])
        if rank5 {
            x = try b.emit(name + "__rank5", flexibleSize ? .expandDims(axes: [0]) : .reshapeND(shape: [1, 1, s[3], s[1], s[2]]), [x])
        }
        b.blobs[name] = x
    }

    /// A multi-array output of an EXACT network: the blob in the declared shape (a reshapeND when
    /// the shapes differ but hold the same number of elements; otherwise the computed shape,
    /// with a warning).
    static func exactOutput(_ f: Spec.FeatureDescription, _ a: Spec.ArrayFeatureType, builder b: ImportBuilder,
                            description: inout ModelDescription) throws -> String {
        let declared = a.shape.compactMap { Int(exactly: $0) }
        let out = try finalTensor(f.name, builder: b) { src in
            let s = b.shape(src)
            if declared.isEmpty || declared == s || s.contains(where: { $0 < 0 }) { return src }
            if declared.count == a.shape.count, declared.allSatisfy({ $0 > 0 }),
               let n = try? Checked.product(declared, "shape"), n == s.reduce(1, *) {
                return try b.emit(f.name + "__declared_shape", .reshapeND(shape: declared), [src])
            }
            b.warnings.append("output '\(f.name)' is declared with shape \(declared) but the network computes \(s); the computed shape is kept")
            return src
        }
        description.outputs.append(FeatureDescription(name: out, shortDescription: f.shortDescription))
        return out
    }

    /// Makes the class-probability blob of an EXACT classifier the vector [1, N] the rank-5
    /// output code expects (found as there: the output's blob, the labelProbabilityLayerName
    /// layer's output, or the last layer's output).
    static func exactProbabilities(_ name: String, classifier c: Spec.NeuralNetworkClassifier, layers: [Spec.NeuralNetworkLayer],
                                   builder b: ImportBuilder) throws {
        var source = b.blobs[name]
        if source == nil, !c.labelProbabilityLayerName.isEmpty,
           let l = layers.first(where: { $0.name == c.labelProbabilityLayerName }), let o = l.output.first {
            source = b.blobs[o]
        }
        if source == nil, let o = layers.last?.output.first { source = b.blobs[o] }
        guard let src = source else { throw LayerImportFailure("no layer produces the class probabilities") }
        let s = b.shape(src)
        guard s.allSatisfy({ $0 >= 0 }) else { return }
        let n = try Checked.product(s, "probabilities shape")
        b.blobs[name] = s == [1, n] ? src : try b.emit(name + "__probabilities", .reshapeND(shape: [1, n]), [src])
    }
}
