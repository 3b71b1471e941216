// One Core ML layer → IR nodes.
import MLGraph

/// Converts the layers of one network, in order, into `builder`'s graph. A layer that cannot be
/// converted is recorded in `builder.problems` and its outputs are poisoned; later layers reading
/// them are checked for support by type only, so the error lists every unsupported layer.
final class LayerImporter {
    let b: ImportBuilder
    let layers: [Spec.NeuralNetworkLayer]
    /// Blob name → indices of the layers reading it.
    let consumers: [String: [Int]]
    let description: Spec.ModelDescription

    init(builder: ImportBuilder, layers: [Spec.NeuralNetworkLayer], consumers: [String: [Int]], description: Spec.ModelDescription) {
        self.b = builder; self.layers = layers; self.consumers = consumers; self.description = description
    }

    /// Type name for messages: Apple's layer type, with the class for custom layers.
    static func typeName(_ layer: Spec.NeuralNetworkLayer) -> String {
        if case let .custom(p) = layer.layer { return "custom(\(p.className))" }
        return layer.layer.typeName
    }

    func importLayer(_ layer: Spec.NeuralNetworkLayer, index: Int) {
        let type = Self.typeName(layer)
        func fail(_ reason: String, cause: (any Error)? = nil) {
            b.problems.append(.init(layer: layer.name, type: type, reason: reason, cause: cause))
            for o in layer.output { b.poisoned.insert(o) }
        }
        if let reason = Self.staticUnsupportedReason(layer.layer), !(b.exact && Self.exactImports(layer.layer)) {
            fail(reason)
            return
        }
        if layer.input.contains(where: { b.poisoned.contains($0) }) {
            // Depends on a layer that failed: nothing more can be checked.
            for o in layer.output { b.poisoned.insert(o) }
            return
        }
        do {
            let ins = try layer.input.map { try b.blob($0) }
            let first = b.nodes.count  // the nodes this layer adds: b.nodes[first...]
            let outs = b.exact ? try convertExact(layer, ins, index: index) : try convert(layer, ins, index: index)
            #if DEBUG  // test builds: the table `mlconv ops` lists stays true
            let allowed = (CoreMLLayerOps.table[layer.layer.typeName] ?? []).union(b.exact ? CoreMLLayerOps.exactLayoutOps : [])
            if !CoreMLLayerOps.nestingLayers.contains(layer.layer.typeName),
               let stray = b.nodes[first...].first(where: { !allowed.contains($0.op.kind) }) {
                throw LayerImportFailure("internal error: importing it produced a '\(stray.op.kind.rawValue)' node, which CoreMLLayerOps does not list for \(layer.layer.typeName); please report it")
            }
            #endif
            guard outs.count == layer.output.count else {
                throw LayerImportFailure("has \(layer.output.count) output blob(s); the conversion produced \(outs.count)")
            }
            for (blob, t) in zip(layer.output, outs) { b.blobs[blob] = t }
        } catch let e as LayerImportFailure {
            fail(e.ownReason, cause: e.cause?.error)
        } catch {
            fail("", cause: error)
        }
    }

    /// Why a layer type or configuration can never be imported, independent of shapes; nil if
    /// it may be.
    static func staticUnsupportedReason(_ l: Spec.NeuralNetworkLayer.Layer) -> String? {
        switch l {
        case .none: return "the layer has no type (an empty `layer` field)"
        case .convolution, .pooling, .activation, .innerProduct, .softmax, .crop, .padding, .upsample,
             .add, .multiply, .average, .max, .min, .scale, .bias, .reshape, .flatten, .permute, .custom,
             .loadConstant, .split, .embedding:
            break
        case let .concat(seq):
            if seq { return "sequence concatenation (sequenceConcat) is not supported: mlconv's IR has no sequence axis" }
        case let .unary(u):
            // MARK: elementwise math ops: every UnaryFunctionLayerParams type imports as `Op.unary`.
            if Self.unaryFunction(u.type) == nil { return "unary function \(u.type.rawValue) is unknown" }
        case let .batchnorm(p):
            if p.computeMeanVar && !p.instanceNormalization {
                return "batchnorm with computeMeanVar over the batch (statistics of N, H, W at run time) is not expressible in mlconv's IR "
                    + "(instanceNormalization is: it maps to instanceNorm)"
            }
        case .mvn, .l2normalize, .lrn: break  // reductions and normalisation ops: NormalizationImport.swift
        case let .reduce(p):
            if let reason = Self.reduceUnsupportedReason(p) { return reason }
        case .slice, .resizeBilinear, .dot: break  // every configuration (Layers/ClassicVariants.swift)
        case let .reorganizeData(p):
            if ![.spaceToDepth, .depthToSpace, .pixelShuffle].contains(p.mode) { return "reorganizeData mode \(p.mode.rawValue) is unknown" }
            if p.blockSize < 1 || p.blockSize > UInt64(Node.maxWindowAttribute) { return "reorganizeData blockSize \(p.blockSize) is out of range" }
        case .sequenceRepeat: return "sequenceRepeat is not supported: mlconv's IR has no sequence axis"
        case .simpleRecurrent, .gru, .uniDirectionalLSTM, .biDirectionalLSTM:
            return RecurrentImport.unsupportedReason(l)  // RecurrentImport.swift
        case let .simple(k):
            if k == .copy || k == .tanh || Self.isMathLayer(l) { break }  // nnmath: Layers/MathImport.swift
            return Self.rankNReason
        case .clip, .clampedReLU: break
        case .gelu: break  // every mode (the sigmoid approximation is Activation.geluSigmoid)
        // MARK: shape family (Layers/ShapeImport.swift)
        case .transpose, .reshapeStatic, .flattenTo2D, .expandDims, .squeeze, .concatND, .splitND, .stack, .tile, .gather,
             .sliceStatic, .embeddingND, .batchedMatmul, .loadConstantND, .constantPad:
            return Self.rankNShapeLayerNeedsExact  // imported in EXACT networks (exactImports)
        case .other(.reshapeLike), .other(.rankPreservingReshape), .other(.sliceBySize), .other(.gatherND),
             .other(.gatherAlongAxis), .other(.scatter), .other(.scatterND), .other(.scatterAlongAxis), .other(.getShape),
             .other(.broadcastToStatic), .other(.broadcastToDynamic), .other(.broadcastToLike), .other(.fillStatic),
             .other(.fillDynamic), .other(.fillLike), .other(.rangeStatic), .other(.reverse), .other(.reverseSeq),
             .other(.slidingWindows), .other(.oneHot), .other(.upperTriangular), .other(.lowerTriangular),
             .other(.matrixBandPart), .other(.argSort), .other(.topK), .other(.cumSum), .other(.rangeDynamic),
             .other(.whereNonZero), .other(.reshapeDynamic), .other(.sliceDynamic):
            return Self.rankNShapeLayerNeedsExact
        case .unsupported(let n):
            return "layer type \(Spec.NeuralNetworkLayer.typeName(fieldNumber: n)) is not in mlconv's Core ML schema"
        // MARK: nnmath (Layers/MathImport.swift)
        case _ where Self.isMathLayer(l): break
        default:
            return Self.rankNReason
        }
        return nil
    }

    /// Why rank-N (NeuralNetwork v2) layers are refused.
    static let rankNReason = "rank-N layers (spec 4, NeuralNetwork v2) are not supported; of them mlconv imports only copy, tanh, "
        + "clip, clampedReLU and gelu"

    static func unaryName(_ t: Spec.UnaryFunctionLayerParams.Operation) -> String {
        switch t {
        case .sqrt: return "sqrt"
        case .rsqrt: return "rsqrt"
        case .inverse: return "inverse"
        case .power: return "power"
        case .exp: return "exp"
        case .log: return "log"
        case .abs: return "abs"
        case .threshold: return "threshold"
        default: return "function \(t.rawValue)"
        }
    }


    // MARK: - Conversion

    private func expectInputs(_ ins: [String], _ n: Int) throws {
        guard ins.count == n else { throw LayerImportFailure("expects \(n) input blob(s), found \(ins.count)") }
    }

    /// Converts one layer; returns one IR tensor per output blob. The last node emitted for an
    /// output is named after the layer and its tensor after the blob.
    func convert(_ layer: Spec.NeuralNetworkLayer, _ ins: [String], index: Int) throws -> [String] {
        let name = layer.name
        let out = layer.output.first ?? name
        switch layer.layer {
        case let .convolution(p):
            try expectInputs(ins, 1)
            return [try convolution(p, ins[0], name: name, out: out)]
        case let .pooling(p):
            try expectInputs(ins, 1)
            return [try pooling(p, ins[0], name: name, out: out)]
        case let .activation(p):
            try expectInputs(ins, 1)
            return [try activation(p.nonlinearity, ins[0], name: name, out: out)]
        case let .innerProduct(p):
            try expectInputs(ins, 1)
            return [try innerProduct(p, ins[0], name: name, out: out)]
        case let .batchnorm(p):
            try expectInputs(ins, 1)
            if p.instanceNormalization { return [try instanceNorm(p, ins[0], name: name, out: out)] }  // NormalizationImport.swift
            let x = ins[0], c = b.chw(x).c
            guard try Checked.int(p.channels, "channels") == c else {
                throw LayerImportFailure("has \(p.channels) channels but its input has \(c)")
            }
            let w: [String: ConstantTensor] = [
                "gamma": try WeightImport.constant(p.gamma, shape: [c], what: "gamma"),
                "beta": try WeightImport.constant(p.beta, shape: [c], what: "beta"),
                "mean": try WeightImport.constant(p.mean, shape: [c], what: "mean"),
                "variance": try WeightImport.constant(p.variance, shape: [c], what: "variance"),
            ]
            return [try b.emit(name, .batchNorm(BatchNormAttributes(axis: b.channelAxis(x), epsilon: p.epsilon)), [x], output: out, weights: w)]
        case .softmax:
            try expectInputs(ins, 1)
            return [try b.emit(name, .softmax(axis: b.channelAxis(ins[0])), ins, output: out)]
        case let .add(alpha):
            return [try elementwise(.add, ins, single: .linear(alpha: 1, beta: alpha), name: name, out: out)]
        case let .multiply(alpha):
            return [try elementwise(.multiply, ins, single: .linear(alpha: alpha, beta: 0), name: name, out: out)]
        case .average:
            return [try elementwise(.average, ins, single: nil, name: name, out: out)]
        case .max:
            return [try elementwise(.maximum, ins, single: nil, name: name, out: out)]
        case .min:
            return [try elementwise(.minimum, ins, single: nil, name: name, out: out)]
        case let .scale(p):
            try expectInputs(ins, 1)
            return [try scaleBias(scale: (p.shapeScale, p.scale), bias: p.hasBias ? (p.shapeBias, p.bias) : nil, ins[0], name: name, out: out)]
        case let .bias(p):
            try expectInputs(ins, 1)
            return [try scaleBias(scale: nil, bias: (p.shape, p.bias), ins[0], name: name, out: out)]
        case .concat:
            guard !ins.isEmpty else { throw LayerImportFailure("has no inputs") }
            if ins.allSatisfy({ b.isVector($0) }) {
                return [try b.emit(name, .concat(axis: 1), ins, output: out)]
            }
            let nhwc = try ins.enumerated().map { try b.toNHWC($1, base: "\(name)__in\($0)") }
            return [try b.emit(name, .concat(axis: 3), nhwc, output: out)]
        case let .flatten(mode):
            try expectInputs(ins, 1)
            let x = ins[0], d = b.chw(x)
            if d.h == 1 && d.w == 1 || mode == .channelLast {
                if b.isVector(x) { return [try b.emit(name, .identity, [x], output: out)] }
                return [try b.emit(name, .reshape(targetShape: [d.c * d.h * d.w]), [x], output: out)]
            }
            let nchw = try b.emit(name + "__to_nchw", .transpose(perm: [0, 3, 1, 2]), [x])
            return [try b.emit(name, .reshape(targetShape: [d.c * d.h * d.w]), [nchw], output: out)]
        case let .reshape(p):
            try expectInputs(ins, 1)
            return [try reshape(p, ins[0], name: name, out: out)]
        case let .permute(axis):
            try expectInputs(ins, 1)
            if axis.first != 0 || b.isSequence(ins[0]) {  // the Seq axis: RecurrentImport.swift
                return [try sequencePermute(Checked.ints(axis, "axis"), ins[0], name: name, out: out)]
            }
            return [try permute(Checked.ints(axis, "axis"), ins[0], name: name, out: out)]
        case let .padding(p):
            try expectInputs(ins, 1)
            let x = try b.toNHWC(ins[0], base: name)
            let e = try edges(p.paddingAmounts)
            let pads = [[0, 0], [e.top, e.bottom], [e.left, e.right], [0, 0]]
            let attrs: PadAttributes
            switch p.paddingType {
            case let .constant(v)?: attrs = PadAttributes(mode: .constant, pads: pads, value: v.value)
            case .reflection?: attrs = PadAttributes(mode: .reflect, pads: pads)
            case .replication?: attrs = PadAttributes(mode: .edge, pads: pads)
            case nil: throw LayerImportFailure("has no padding type (constant, reflection or replication)")
            }
            return [try b.emit(name, .pad(attrs), [x], output: out)]
        case let .crop(p):
            return [try crop(p, ins, name: name, out: out)]
        case let .upsample(p):
            try expectInputs(ins, 1)
            return [try upsample(p, ins[0], name: name, out: out)]
        case let .unary(p):
            try expectInputs(ins, 1)
            return [try unary(p, ins[0], name: name, out: out)]
        case let .embedding(p):
            try expectInputs(ins, 1)
            if b.isSequence(ins[0]) { return [try sequenceEmbedding(p, ins[0], name: name, out: out)] }  // RecurrentImport.swift
            return [try embedding(p, ins[0], name: name, out: out)]
        case .simpleRecurrent, .gru, .uniDirectionalLSTM, .biDirectionalLSTM:
            return try recurrent(layer, ins)  // RecurrentImport.swift
        case let .resizeBilinear(p):
            try expectInputs(ins, 1)
            return [try resizeBilinear(p, ins[0], name: name, out: out)]
        case let .split(n):
            try expectInputs(ins, 1)
            return try split(Checked.int(n, "nOutputs"), ins[0], layer: layer)
        case let .slice(p):
            try expectInputs(ins, 1)
            return [try slice(p, ins[0], name: name, out: out)]
        case let .reduce(p):
            try expectInputs(ins, 1)
            return [try reduce(p, ins[0], name: name, out: out)]  // NormalizationImport.swift
        case let .mvn(p):
            try expectInputs(ins, 1)
            if p.normalizeVariance { return [try mvnVariance(p, ins[0], name: name, out: out)] }  // NormalizationImport.swift
            return [try mvn(p, ins[0], name: name, out: out)]
        // MARK: reductions and normalisation ops (NormalizationImport.swift)
        case let .l2normalize(epsilon):
            try expectInputs(ins, 1)
            return [try l2normalize(epsilon, ins[0], name: name, out: out)]
        case let .lrn(p):
            try expectInputs(ins, 1)
            return [try lrn(p, ins[0], name: name, out: out)]
        case let .loadConstant(p):
            let s = try Checked.ints(p.shape, "constant shape", in: 0...TensorType.maxElementCount)
            guard s.count == 3, s.allSatisfy({ $0 > 0 }) else {
                throw LayerImportFailure("has constant shape \(s); expected [C, H, W]")
            }
            let values = try WeightImport.floats(p.data, count: Checked.product(s, "constant shape"), what: "constant")
            guard let anchor = b.inputs.first?.name else { throw LayerImportFailure("a constant needs a model input to anchor it") }
            let t = try b.constantTensor(values, c: s[0], h: s[1], w: s[2], anchor: b.blobs[anchor] ?? anchor, base: name)
            return [try finish(t, name: name, out: out)]
        case let .custom(p):
            return try custom(p, ins, layer: layer, index: index)
        // MARK: shape and data movement ops (issue 9)
        case let .reorganizeData(p):
            try expectInputs(ins, 1)
            return [try reorganizeData(p, ins[0], name: name, out: out)]
        case let .dot(cosine):
            // [C] · [C] → [1]: matmul of the two [1, C] vectors, the second transposed ([1, 1]).
            try expectInputs(ins, 2)
            if cosine { return [try cosineSimilarity(ins, name: name, out: out)] }  // Layers/ClassicVariants.swift
            let v = try ins.enumerated().map { try b.toVector($1, base: "\(name)__in\($0)") }
            return [try b.emit(name, .matmul(MatMulAttributes(transposeY: true)), v, output: out)]
        case .simple(.copy):
            try expectInputs(ins, 1)
            return [try b.emit(name, .identity, ins, output: out)]
        case .simple(.tanh):
            try expectInputs(ins, 1)
            return [try b.emit(name, .activation(.tanh), ins, output: out)]
        case let .clip(lo, hi):
            try expectInputs(ins, 1)
            // MARK: elementwise math ops: Core ML clip is MIL clip, min(max(x, minVal), maxVal).
            guard !lo.isNaN, !hi.isNaN else { throw LayerImportFailure("clip bounds [\(lo), \(hi)] must not be NaN") }
            return [try b.emit(name, .clip(alpha: lo, beta: hi), ins, output: out)]
        case let .clampedReLU(alpha, beta):
            try expectInputs(ins, 1)
            if beta >= 0 {
                return [try b.emit(name, .activation(.clippedReLU(maxValue: beta, negativeSlope: alpha, threshold: 0)), ins, output: out)]
            }
            // min(beta, x≥0 ? x : alpha·x) with beta < 0: leaky part, then min with a constant.
            let leaky = try b.emit(name + "__leaky", .activation(.leakyReLU(alpha: alpha)), ins)
            return [try clip(lo: -.infinity, hi: beta, leaky, name: name, out: out)]
        case let .gelu(mode):
            try expectInputs(ins, 1)
            let act: Activation = mode == .sigmoidApproximation ? .geluSigmoid : .gelu(approximate: mode == .tanhApproximation)
            return [try b.emit(name, .activation(act), ins, output: out)]
        // MARK: shape family (Layers/ShapeImport.swift)
        case let .transpose(axes):
            try expectInputs(ins, 1); return [try transposeND(axes, ins[0], name: name, out: out)]
        case let .reshapeStatic(shape):
            try expectInputs(ins, 1); return [try reshapeStatic(shape, ins[0], name: name, out: out)]
        case .other(.reshapeLike):
            return [try reshapeLike(ins, name: name, out: out)]
        case let .other(.rankPreservingReshape(p)):
            try expectInputs(ins, 1); return [try rankPreservingReshape(p.targetShape, ins[0], name: name, out: out)]
        case let .flattenTo2D(axis):
            try expectInputs(ins, 1); return [try flattenTo2D(axis, ins[0], name: name, out: out)]
        case let .expandDims(axes):
            try expectInputs(ins, 1); return [try expandDimsND(axes, ins[0], name: name, out: out)]
        case let .squeeze(axes, all):
            try expectInputs(ins, 1); return [try squeezeND(axes, all: all, ins[0], name: name, out: out)]
        case let .concatND(axis, interleave):
            return [try concatND(axis, interleave: interleave, ins, name: name, out: out)]
        case let .splitND(p):
            try expectInputs(ins, 1); return try splitND(p, ins[0], layer: layer)
        case let .stack(axis):
            return [try stackND(axis, ins, name: name, out: out)]
        case let .tile(reps):
            return [try tileND(reps, ins, name: name, out: out)]
        case let .sliceStatic(p):
            try expectInputs(ins, 1); return [try sliceStatic(p, ins[0], name: name, out: out)]
        case let .other(.sliceBySize(p)):
            return [try sliceBySize(p, ins, name: name, out: out)]
        case let .other(.slidingWindows(p)):
            try expectInputs(ins, 1); return [try slidingWindows(p, ins[0], name: name, out: out)]
        case let .gather(axis):
            return [try gatherND(.gather, axis: axis, ins, name: name, out: out)]
        case .other(.gatherND):
            return [try gatherND(.gatherND, axis: nil, ins, name: name, out: out)]
        case let .other(.gatherAlongAxis(p)):
            return [try gatherND(.gatherAlongAxis, axis: p.axis, ins, name: name, out: out)]
        case let .other(.scatter(p)):
            return [try scatterND(.scatter, axis: p.axis, mode: p.mode, ins, name: name, out: out)]
        case let .other(.scatterND(p)):
            return [try scatterND(.scatterND, axis: nil, mode: p.mode, ins, name: name, out: out)]
        case let .other(.scatterAlongAxis(p)):
            return [try scatterND(.scatterAlongAxis, axis: p.axis, mode: p.mode, ins, name: name, out: out)]
        case let .embeddingND(p):
            try expectInputs(ins, 1); return [try embeddingND(p, ins[0], name: name, out: out)]
        case .other(.getShape):
            try expectInputs(ins, 1); return [try getShape(ins[0], name: name, out: out)]
        case let .other(.broadcastToStatic(p)):
            try expectInputs(ins, 1); return [try broadcastToStatic(p.targetShape, ins[0], name: name, out: out)]
        case .other(.broadcastToDynamic):
            try expectInputs(ins, 2)
            return [try broadcast(ins[0], toZeros: try fillDynamic(0, ins[1], name: name + "__zeros", out: name + "__zeros"), name: name, out: out)]
        case .other(.broadcastToLike):
            try expectInputs(ins, 2)
            return [try broadcast(ins[0], toZeros: try fill(like: ins[1], value: 0, base: name + "__zeros"), name: name, out: out)]
        case let .other(.fillStatic(p)):
            return [try fillStatic(p, name: name, out: out)]
        case let .other(.fillDynamic(p)):
            try expectInputs(ins, 1); return [try fillDynamic(p.value, ins[0], name: name, out: out)]
        case let .other(.fillLike(p)):
            try expectInputs(ins, 1); return [try fill(like: ins[0], value: p.value, base: name, output: out)]
        case let .other(.rangeStatic(p)):
            return [try rangeStatic(p, name: name, out: out)]
        case let .loadConstantND(p):
            return [try loadConstantND(p, name: name, out: out)]
        case let .other(.reverse(p)):
            try expectInputs(ins, 1); return [try reverseND(p.reverseDim, ins[0], name: name, out: out)]
        case let .other(.reverseSeq(p)):
            return [try reverseSeq(p, ins, name: name, out: out)]
        case let .other(.oneHot(p)):
            return [try oneHot(p, ins, name: name, out: out)]
        case let .other(.upperTriangular(p)):
            try expectInputs(ins, 1); return [try upperTriangular(p.k, ins[0], name: name, out: out)]
        case let .other(.lowerTriangular(p)):
            try expectInputs(ins, 1); return [try lowerTriangular(p.k, ins[0], name: name, out: out)]
        case let .other(.matrixBandPart(p)):
            try expectInputs(ins, 1); return [try matrixBandPart(p, ins[0], name: name, out: out)]
        case let .other(.argSort(p)):
            try expectInputs(ins, 1); return [try argSort(p, ins[0], name: name, out: out)]
        case let .other(.topK(p)):
            return try topK(p, ins, layer: layer)
        case let .other(.cumSum(p)):
            return [try cumSum(p, ins, name: name, out: out)]
        case let .batchedMatmul(p):
            return [try batchedMatmul(p, ins, name: name, out: out)]
        case let .constantPad(p):
            return [try constantPad(p, ins, name: name, out: out)]
        case let .other(.rangeDynamic(p)):
            return [try rangeDynamic(p, ins, name: name, out: out)]  // Layers/ShapeDynamicImport.swift
        case .other(.whereNonZero):
            try expectInputs(ins, 1); return [try whereNonZero(ins[0], name: name, out: out)]
        case .other(.reshapeDynamic):
            return [try reshapeDynamic(ins, name: name, out: out)]
        case let .other(.sliceDynamic(p)):
            return [try sliceDynamic(p, ins, name: name, out: out)]
        // MARK: nnmath (Layers/MathImport.swift)
        case _ where Self.isMathLayer(layer.layer):
            return try convertMath(layer, ins)
        default:
            throw LayerImportFailure(Self.staticUnsupportedReason(layer.layer) ?? "is not supported")
        }
    }

    /// Makes `t` the layer's output: an identity named after the layer when `t` came from helper
    /// nodes with other names.
    private func finish(_ t: String, name: String, out: String) throws -> String {
        if let last = b.nodes.last, last.outputs == [t], last.name.hasPrefix(name) {
            return t
        }
        return try b.emit(name, .identity, [t], output: out)
    }

    // MARK: Convolution

    private func convPadding(_ p: Spec.ConvolutionLayerParams.Padding?, inH: Int, inW: Int, k: [Int], s: [Int], d: [Int]) throws -> PaddingMode {
        switch p {
        case nil: return .valid
        case let .valid(v)?:
            let e = try edges(v.paddingAmounts)
            return e == (0, 0, 0, 0) ? .valid : .explicit(top: e.top, bottom: e.bottom, left: e.left, right: e.right)
        case let .same(mode)?:
            if mode.asymmetryMode == .topLeftHeavy {
                let r = PaddingMode.same.resolve(inH: inH, inW: inW, kernel: (k[0], k[1]), stride: (s[0], s[1]), dilation: (d[0], d[1]))
                return .explicit(top: r.bottom, bottom: r.top, left: r.right, right: r.left)
            }
            return .same
        }
    }

    private func convolution(_ p: Spec.ConvolutionLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let dims = b.chw(x)
        let k = p.kernelSize.isEmpty ? [3, 3] : try Checked.ints(p.kernelSize, "kernelSize")
        let s = p.stride.isEmpty ? [1, 1] : try Checked.ints(p.stride, "stride")
        let d = p.dilationFactor.isEmpty ? [1, 1] : try Checked.ints(p.dilationFactor, "dilationFactor")
        guard k.count == 2, s.count == 2, d.count == 2 else {
            throw LayerImportFailure("kernelSize \(k), stride \(s), dilationFactor \(d) must have two values each")
        }
        let groups = Swift.max(1, try Checked.int(p.nGroups, "nGroups"))
        let cout = try Checked.int(p.outputChannels, "outputChannels")
        let kernelChannels = try Checked.int(p.kernelChannels, "kernelChannels")
        let cin = dims.c
        if p.isDeconvolution {
            let shape = [cin, cout / groups, k[0], k[1]]
            var w: [String: ConstantTensor] = ["weight": try WeightImport.constant(p.weights, shape: shape, axis: 1, what: "weight")]
            if p.hasBias { w["bias"] = try WeightImport.constant(p.bias, shape: [cout], what: "bias") }
            var padding: PaddingMode
            switch p.padding {
            case nil: padding = .valid
            case let .valid(v)?:
                let e = try edges(v.paddingAmounts)
                padding = e == (0, 0, 0, 0) ? .valid : .explicit(top: e.top, bottom: e.bottom, left: e.left, right: e.right)
            case let .same(mode)?:
                padding = .same
                if mode.asymmetryMode == .topLeftHeavy {
                    // Crop the odd pixel at the top/left instead of the bottom/right.
                    var a = Deconv2DAttributes(kernel: k, strides: s, dilations: d, padding: .valid, groups: groups, outputChannels: cout)
                    let full = [deconvOutputSize(dims.h, axis: 0, a), deconvOutputSize(dims.w, axis: 1, a)]
                    let total = [full[0] - dims.h * s[0], full[1] - dims.w * s[1]].map { Swift.max(0, $0) }
                    a.padding = .explicit(top: total[0] - total[0] / 2, bottom: total[0] / 2, left: total[1] - total[1] / 2, right: total[1] / 2)
                    padding = a.padding
                }
            }
            var attrs = Deconv2DAttributes(kernel: k, strides: s, dilations: d, padding: padding, groups: groups, outputChannels: cout)
            if p.outputShape.count == 2 {
                let want = try Checked.ints(p.outputShape, "outputShape")
                let got = [deconvOutputSize(dims.h, axis: 0, attrs), deconvOutputSize(dims.w, axis: 1, attrs)]
                let extra = [want[0] - got[0], want[1] - got[1]]
                guard (0..<2).allSatisfy({ extra[$0] >= 0 && extra[$0] < Swift.max(1, s[$0]) || extra[$0] == 0 }) else {
                    throw LayerImportFailure("deconvolution outputShape \(want) cannot be reached from the computed size \(got) "
                        + "with an output padding smaller than the stride")
                }
                attrs.outputPadding = extra
            }
            return try b.emit(name, .deconv2d(attrs), [x], output: out, weights: w)
        }
        guard kernelChannels * groups == cin || kernelChannels == 0 else {
            throw LayerImportFailure("has kernelChannels \(p.kernelChannels) × nGroups \(groups) but its input has \(cin) channels")
        }
        let shape = [cout, cin / groups, k[0], k[1]]
        var w: [String: ConstantTensor] = ["weight": try WeightImport.constant(p.weights, shape: shape, axis: 0, what: "weight")]
        if p.hasBias { w["bias"] = try WeightImport.constant(p.bias, shape: [cout], what: "bias") }
        let padding = try convPadding(p.padding, inH: dims.h, inW: dims.w, k: k, s: s, d: d)
        let attrs = Conv2DAttributes(kernel: k, strides: s, dilations: d, padding: padding, groups: groups, outputChannels: cout)
        return try b.emit(name, .conv2d(attrs), [x], output: out, weights: w)
    }

    // MARK: Pooling

    private func pooling(_ p: Spec.PoolingLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let kind: PoolKind
        switch p.type {
        case .max: kind = .max
        case .average, .l2: kind = .average
        default: throw LayerImportFailure("pooling type \(p.type.rawValue) is not supported")
        }
        let x = try b.toNHWC(x0, base: name)
        if p.globalPooling {
            if p.type == .l2 { return try l2Pooling(x, kernel: [1, 1], strides: [1, 1], padding: .valid, global: true, name: name, out: out) }
            return try b.emit(name, .globalPool2d(kind: kind, keepDims: false), [x], output: out)
        }
        let d = b.chw(x)
        let k = p.kernelSize.isEmpty ? [3, 3] : try Checked.ints(p.kernelSize, "kernelSize")
        let s = p.stride.isEmpty ? [1, 1] : try Checked.ints(p.stride, "stride")
        guard k.count == 2, s.count == 2 else { throw LayerImportFailure("kernelSize \(k) and stride \(s) must have two values each") }
        var padding: PaddingMode
        switch p.padding {
        case nil: padding = .valid
        case let .valid(v)?:
            let e = try edges(v.paddingAmounts)
            padding = e == (0, 0, 0, 0) ? .valid : .explicit(top: e.top, bottom: e.bottom, left: e.left, right: e.right)
        case let .same(mode)?:
            if mode.asymmetryMode == .topLeftHeavy {
                let r = PaddingMode.same.resolve(inH: d.h, inW: d.w, kernel: (k[0], k[1]), stride: (s[0], s[1]), dilation: (1, 1))
                padding = .explicit(top: r.bottom, bottom: r.top, left: r.right, right: r.left)
            } else {
                padding = .same
            }
        case let .includeLastPixel(valid)?:
            let amounts = valid.paddingAmounts
            // Caffe's rounding-up ("valid complete") pooling: out = ceil((n + 2p − k)/s) + 1,
            // minus one when the last window would start inside the padding.
            let pads = amounts.count == 2 ? try Checked.ints(amounts, "includeLastPixel paddingAmounts") : [0, 0]
            if kind == .average && pads != [0, 0] && !p.avgPoolExcludePadding {
                throw LayerImportFailure("average pooling with includeLastPixel padding \(pads) that counts padded pixels is not expressible")
            }
            func size(_ n: Int, _ k: Int, _ s: Int, _ pad: Int) -> (Int, Int) {
                var o = (n + 2 * pad - k + s - 1) / s + 1
                if pad > 0 && (o - 1) * s >= n + pad { o -= 1 }
                let after = Swift.max(0, (o - 1) * s + k - n - pad)
                return (o, after)
            }
            let (_, bottom) = size(d.h, k[0], s[0], pads[0])
            let (_, right) = size(d.w, k[1], s[1], pads[1])
            padding = .explicit(top: pads[0], bottom: bottom, left: pads[1], right: right)
            if padding == .explicit(top: 0, bottom: 0, left: 0, right: 0) { padding = .valid }
        }
        if p.type == .l2 { return try l2Pooling(x, kernel: k, strides: s, padding: padding, global: false, name: name, out: out) }
        var input = x
        if kind == .average && !p.avgPoolExcludePadding && padding != .valid {
            // Core ML counts the padded zeros in the average: pad explicitly, then pool without padding.
            let r = padding.resolve(inH: d.h, inW: d.w, kernel: (k[0], k[1]), stride: (s[0], s[1]), dilation: (1, 1))
            if r != (0, 0, 0, 0) {
                input = try b.emit(name + "__pad", .pad(PadAttributes(mode: .constant, pads: [[0, 0], [r.top, r.bottom], [r.left, r.right], [0, 0]])), [x])
            }
            padding = .valid
        }
        return try b.emit(name, .pool2d(Pool2DAttributes(kind: kind, kernel: k, strides: s, padding: padding)), [input], output: out)
    }

    // MARK: Activations

    private func activation(_ a: Spec.ActivationParams.Nonlinearity, _ x: String, name: String, out: String) throws -> String {
        let act: Activation
        switch a {
        case .none: throw LayerImportFailure("has no non-linearity set")
        case let .linear(alpha, beta): act = .linear(alpha: alpha, beta: beta)
        case .relu: act = .relu
        case let .leakyReLU(alpha): act = .leakyReLU(alpha: alpha)
        case let .thresholdedReLU(alpha):
            // Core ML: x if x >= alpha else 0 (the IR's thresholdedReLU uses x > theta).
            act = .clippedReLU(maxValue: nil, negativeSlope: 0, threshold: alpha)
        case .tanh: act = .tanh
        case .sigmoid: act = .sigmoid
        case let .sigmoidHard(alpha, beta): act = .hardSigmoid(alpha: alpha, beta: beta)
        case let .elu(alpha): act = .elu(alpha: alpha)
        case .softsign: act = .softsign
        case .softplus: act = .softplus
        case let .scaledTanh(alpha, beta):
            act = .scaledTanh(alpha: alpha, beta: beta)  // alpha·tanh(beta·x)
        case let .preLU(alpha):
            let c = b.chw(x).c
            let values = try perChannel(alpha, channels: c, what: "PReLU alpha")
            let shape = b.isVector(x) ? [c] : [1, 1, c]
            return try b.emit(name, .prelu, [x], output: out, weights: ["alpha": ConstantTensor(shape: shape, floats: values)])
        case let .parametricSoftplus(alpha, beta):
            // alpha[c]·log(1 + exp(beta[c]·x))
            let c = b.chw(x).c
            let a = try perChannel(alpha, channels: c, what: "parametricSoftplus alpha")
            let bt = try perChannel(beta, channels: c, what: "parametricSoftplus beta")
            if let a0 = a.first, let b0 = bt.first, a.allSatisfy({ $0 == a0 }), bt.allSatisfy({ $0 == b0 }) {
                return try b.emit(name, .activation(.parametricSoftplus(alpha: a0, beta: b0)), [x], output: out)
            }
            var t = x
            if bt.contains(where: { $0 != 1 }) { t = try channelAffine(t, scale: bt, bias: nil, name: name + "__scale_in") }
            if a.allSatisfy({ $0 == 1 }) { return try b.emit(name, .activation(.softplus), [t], output: out) }
            t = try b.emit(name + "__softplus", .activation(.softplus), [t])
            return try channelAffine(t, scale: a, bias: nil, name: name, out: out)
        }
        return try b.emit(name, .activation(act), [x], output: out)
    }

    /// `count` values per channel from a [C] or [1] weight (a single value is broadcast).
    private func perChannel(_ w: Spec.WeightParams?, channels c: Int, what: String) throws -> [Float] {
        let n = w?.storedElementCount ?? 0
        if n == 1 || (w?.storage == .quantized && n < c) {
            let v = try WeightImport.floats(w, count: 1, what: what)
            return [Float](repeating: v[0], count: c)
        }
        return try WeightImport.floats(w, count: c, what: what)
    }

    /// y = scale[c]·x + bias[c] as a batchNorm (mean 0, variance 1, epsilon 0).
    private func channelAffine(_ x: String, scale: [Float]?, bias: [Float]?, name: String, out: String? = nil) throws -> String {
        let c = b.chw(x).c
        var w: [String: ConstantTensor] = [
            "mean": ConstantTensor(shape: [c], floats: [Float](repeating: 0, count: c)),
            "variance": ConstantTensor(shape: [c], floats: [Float](repeating: 1, count: c)),
        ]
        if let scale { w["gamma"] = ConstantTensor(shape: [c], floats: scale) }
        if let bias { w["beta"] = ConstantTensor(shape: [c], floats: bias) }
        return try b.emit(name, .batchNorm(BatchNormAttributes(axis: b.channelAxis(x), epsilon: 0)), [x], output: out, weights: w)
    }

    // MARK: Inner product

    private func innerProduct(_ p: Spec.InnerProductLayerParams, _ x0: String, name: String, out: String) throws -> String {
        var x = x0
        let d = b.chw(x)
        let cin = try Checked.int(p.inputChannels, "inputChannels"), cout = try Checked.int(p.outputChannels, "outputChannels")
        if d.h * d.w > 1 {
            guard cin == d.c * d.h * d.w else {
                throw LayerImportFailure("has inputChannels \(cin) but its input blob is [C, H, W] = [\(d.c), \(d.h), \(d.w)]")
            }
            // Core ML reads a [C, H, W] blob in C, H, W order.
            let nchw = try b.emit(name + "__to_nchw", .transpose(perm: [0, 3, 1, 2]), [x])
            x = try b.emit(name + "__flatten", .reshape(targetShape: [cin]), [nchw])
        } else {
            guard cin == d.c else { throw LayerImportFailure("has inputChannels \(cin) but its input has \(d.c) channels") }
            x = try b.toVector(x, base: name)
        }
        var w: [String: ConstantTensor] = ["weight": try WeightImport.constant(p.weights, shape: [cout, cin], axis: 0, what: "weight")]
        if p.hasBias { w["bias"] = try WeightImport.constant(p.bias, shape: [cout], what: "bias") }
        return try b.emit(name, .dense(DenseAttributes(outputChannels: cout)), [x], output: out, weights: w)
    }

    // MARK: Elementwise

    private func elementwise(_ kind: ElementwiseKind, _ ins: [String], single: Activation?, name: String, out: String) throws -> String {
        guard !ins.isEmpty else { throw LayerImportFailure("has no inputs") }
        if ins.count == 1 {
            return try b.emit(name, .activation(single ?? .identity), ins, output: out)
        }
        var xs = ins
        let shapes = ins.map { b.shape($0) }
        if Set(shapes.map(\.count)).count > 1 {
            xs = try ins.enumerated().map { try b.toNHWC($1, base: "\(name)__in\($0)") }
        }
        return try b.emit(name, .elementwise(kind), xs, output: out)
    }

    private func scaleBias(scale: ([UInt64], Spec.WeightParams?)?, bias: ([UInt64], Spec.WeightParams?)?,
                           _ x: String, name: String, out: String) throws -> String {
        let d = b.chw(x)
        enum Part { case channel([Float]), full([Float]) }
        func part(_ shape: [UInt64], _ w: Spec.WeightParams?, what: String) throws -> Part {
            let s = try Checked.ints(shape, "\(what) shape", in: 0...TensorType.maxElementCount)
            switch s {
            case [], [1]: return .channel([Float](repeating: try WeightImport.floats(w, count: 1, what: what)[0], count: d.c))
            case [d.c]: return .channel(try WeightImport.floats(w, count: d.c, what: what))
            case [d.c, 1, 1]: return .channel(try WeightImport.floats(w, count: d.c, what: what))
            case [d.c, d.h, d.w]: return .full(try WeightImport.floats(w, count: d.c * d.h * d.w, what: what))
            case [1, d.h, d.w]:
                let v = try WeightImport.floats(w, count: d.h * d.w, what: what)
                return .full((0..<d.c).flatMap { _ in v })
            default:
                throw LayerImportFailure("\(what) shape \(s) does not fit the input [C, H, W] = [\(d.c), \(d.h), \(d.w)]")
            }
        }
        let sp = try scale.map { try part($0.0, $0.1, what: "scale") }
        let bp = try bias.map { try part($0.0, $0.1, what: "bias") }
        switch (sp, bp) {
        case (nil, nil): return try b.emit(name, .identity, [x], output: out)
        case let (.channel(s)?, .channel(bb)?): return try channelAffine(x, scale: s, bias: bb, name: name, out: out)
        case let (.channel(s)?, nil): return try channelAffine(x, scale: s, bias: nil, name: name, out: out)
        case let (nil, .channel(bb)?): return try channelAffine(x, scale: nil, bias: bb, name: name, out: out)
        default:
            var t = x
            if let sp {
                switch sp {
                case let .channel(s): t = try channelAffine(t, scale: s, bias: nil, name: name + "__scale")
                case let .full(v):
                    let k = try b.constantTensor(v, c: d.c, h: d.h, w: d.w, anchor: t, base: name + "__scale")
                    t = try b.emit(name + (bp == nil ? "" : "__scale"), .elementwise(.multiply), [t, k], output: bp == nil ? out : nil)
                    if bp == nil { return t }
                }
            }
            switch bp! {
            case let .channel(bb): return try channelAffine(t, scale: nil, bias: bb, name: name, out: out)
            case let .full(v):
                let k = try b.constantTensor(v, c: d.c, h: d.h, w: d.w, anchor: t, base: name + "__bias")
                return try b.emit(name, .elementwise(.add), [t, k], output: out)
            }
        }
    }

    // MARK: Shape layers

    private func reshape(_ p: Spec.ReshapeLayerParams, _ x: String, name: String, out: String) throws -> String {
        var t = p.targetShape.map(Int.init)
        if t.count == 4 {
            guard t[0] == 1 else { throw LayerImportFailure("reshapes to sequence length \(t[0]); mlconv's IR has no sequence axis") }
            t.removeFirst()
        }
        guard t.count == 3, t.allSatisfy({ $0 > 0 }) else {
            throw LayerImportFailure("targetShape \(p.targetShape) must be [C, H, W] or [1, C, H, W] with positive sizes")
        }
        let d = b.chw(x)
        guard try Checked.product(t, "targetShape") == d.c * d.h * d.w else {
            throw LayerImportFailure("cannot reshape [C, H, W] = [\(d.c), \(d.h), \(d.w)] to \(t)")
        }
        let (c2, h2, w2) = (t[0], t[1], t[2])
        if p.mode == .channelLast || (d.h == 1 && d.w == 1) {
            // HWC order (or a vector, where both orders agree) reinterpreted as [H', W', C'].
            if h2 == 1 && w2 == 1 { return try b.emit(name, .reshape(targetShape: [c2]), [x], output: out) }
            if p.mode == .channelLast {
                return try b.emit(name, .reshape(targetShape: [h2, w2, c2]), [x], output: out)
            }
        }
        // CHW order: to NCHW, reshape, back to NHWC.
        var src = x
        if !(d.h == 1 && d.w == 1) { src = try b.emit(name + "__to_nchw", .transpose(perm: [0, 3, 1, 2]), [x]) }
        if h2 == 1 && w2 == 1 { return try b.emit(name, .reshape(targetShape: [c2]), [src], output: out) }
        let r = try b.emit(name + "__reshape", .reshape(targetShape: [c2, h2, w2]), [src])
        return try b.emit(name, .transpose(perm: [0, 2, 3, 1]), [r], output: out)
    }

    private func permute(_ axis: [Int], _ x0: String, name: String, out: String) throws -> String {
        guard axis.count == 4, axis.sorted() == [0, 1, 2, 3] else {
            throw LayerImportFailure("axis \(axis) is not a permutation of [Seq, C, H, W] = [0, 1, 2, 3]")
        }
        guard axis[0] == 0 else {
            throw LayerImportFailure("permutes the sequence axis (axis \(axis)); mlconv's IR has no sequence axis")
        }
        let x = try b.toNHWC(x0, base: name)
        // Core ML axis index (1 = C, 2 = H, 3 = W) → NHWC axis.
        let ir = [1: 3, 2: 1, 3: 2]
        let perm = [0, ir[axis[2]]!, ir[axis[3]]!, ir[axis[1]]!]
        if perm == [0, 1, 2, 3] { return try b.emit(name, .identity, [x], output: out) }
        return try b.emit(name, .transpose(perm: perm), [x], output: out)
    }

    private func edges(_ a: Spec.BorderAmounts?) throws -> (top: Int, bottom: Int, left: Int, right: Int) {
        let e = a?.borderAmounts ?? []
        // MARK: refused configurations (issue 10): a third entry would be dropped without a word.
        guard e.count <= 2 else { throw LayerImportFailure("has \(e.count) border amounts; Core ML pads or crops [height, width] (2 entries)") }
        let h = e.count > 0 ? e[0] : Spec.EdgeSizes(startEdgeSize: 0, endEdgeSize: 0)
        let w = e.count > 1 ? e[1] : Spec.EdgeSizes(startEdgeSize: 0, endEdgeSize: 0)
        let v = try Checked.ints([h.startEdgeSize, h.endEdgeSize, w.startEdgeSize, w.endEdgeSize], "border amounts [top, bottom, left, right]")
        return (v[0], v[1], v[2], v[3])
    }

    private func crop(_ p: Spec.CropLayerParams, _ ins: [String], name: String, out: String) throws -> String {
        guard ins.count == 1 || ins.count == 2 else { throw LayerImportFailure("expects 1 or 2 input blobs, found \(ins.count)") }
        let x = try b.toNHWC(ins[0], base: name)
        let d = b.chw(x)
        let e: (top: Int, bottom: Int, left: Int, right: Int)
        if ins.count == 2 {
            let ref = b.chw(ins[1])
            // MARK: refused configurations (issue 10): an offset is [H, W] or absent, never read partly.
            guard p.offset.isEmpty || p.offset.count == 2 else {
                throw LayerImportFailure("has offset \(p.offset); a two-input crop takes [H, W] (or no offset for [0, 0])")
            }
            let off = p.offset.count == 2 ? try Checked.ints(p.offset, "offset") : [0, 0]
            e = (off[0], d.h - off[0] - ref.h, off[1], d.w - off[1] - ref.w)
            guard e.bottom >= 0, e.right >= 0 else {
                throw LayerImportFailure("cannot crop [\(d.h), \(d.w)] at offset \(off) to the reference size [\(ref.h), \(ref.w)]")
            }
        } else {
            e = try edges(p.cropAmounts)
        }
        if e == (0, 0, 0, 0) { return try b.emit(name, .identity, [x], output: out) }
        return try b.emit(name, .crop(crops: [[0, 0], [e.top, e.bottom], [e.left, e.right], [0, 0]]), [x], output: out)
    }

    private func upsample(_ p: Spec.UpsampleLayerParams, _ x0: String, name: String, out: String) throws -> String {
        var scale = p.scalingFactor.isEmpty ? [1, 1] : try Checked.ints(p.scalingFactor, "scalingFactor")
        if !p.fractionalScalingFactor.isEmpty {
            let f = p.fractionalScalingFactor
            if p.mode == .bilinear, f.count == 2, f.allSatisfy({ $0.isFinite && $0 > 0 && $0 <= Float(Node.maxCountAttribute) }) {
                // Output size ⌊X·f⌋ on the LinearUpsampleMode grid: Layers/ClassicVariants.swift.
                let x = try b.toNHWC(x0, base: name)
                let d = b.chw(x)
                let n = [Int((Double(d.h) * Double(f[0])).rounded(.down)), Int((Double(d.w) * Double(f[1])).rounded(.down))]
                guard n.allSatisfy({ $0 >= 1 }) else { throw LayerImportFailure("fractional scaling factors \(f) give an empty output") }
                return try bilinearResample(x, gridH: Self.upsampleGrid(p.linearUpsampleMode, x: d.h, n: n[0]),
                                            gridW: Self.upsampleGrid(p.linearUpsampleMode, x: d.w, n: n[1]), name: name, out: out)
            }
            guard f.count == 2, f.allSatisfy({ $0 == $0.rounded() && $0 >= 1 && $0 <= Float(Node.maxCountAttribute) }) else {
                throw LayerImportFailure("fractional scaling factors \(f) are not supported (mlconv's upsample takes integer factors)")
            }
            scale = f.map { Int($0) }
        }
        guard scale.count == 2, scale.allSatisfy({ $0 >= 1 }) else { throw LayerImportFailure("scalingFactor \(scale) must be two positive integers") }
        let mode: UpsampleMode
        switch p.mode {
        case .nn: mode = .nearest
        case .bilinear:
            switch p.linearUpsampleMode {
            case .alignCornersTrue: mode = .bilinearAlignCorners
            case .alignCornersFalse: mode = .bilinearHalfPixel
            default: mode = .bilinearAsymmetric
            }
        default: throw LayerImportFailure("interpolation mode \(p.mode.rawValue) is not supported")
        }
        let x = try b.toNHWC(x0, base: name)
        return try b.emit(name, .upsample2d(Upsample2DAttributes(scale: scale, mode: mode)), [x], output: out)
    }

    /// Embedding of one index (a [1] blob; Core ML's sequence axis is not represented): the IR's
    /// embedding on [1, 1] gives [1, 1, D], reshaped to the vector [1, D]; the bias, if any, is a
    /// per-channel affine.
    private func embedding(_ p: Spec.EmbeddingLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let d = b.chw(x0)
        guard d.c == 1, d.h == 1, d.w == 1 else {
            throw LayerImportFailure("expects one index ([1] blob), found [C, H, W] = [\(d.c), \(d.h), \(d.w)]")
        }
        let x = try b.toVector(x0, base: name)
        let dim = try Checked.int(p.outputChannels, "outputChannels"), vocab = try Checked.int(p.inputDim, "inputDim")
        let w = try WeightImport.constant(p.weights, shape: [dim, vocab], axis: 0, what: "weight")
        let e = try b.emit(name + "__lookup", .embedding(outputChannels: dim), [x], weights: ["weight": w])
        if !p.hasBias { return try b.emit(name, .reshape(targetShape: [dim]), [e], output: out) }
        let v = try b.emit(name + "__vector", .reshape(targetShape: [dim]), [e])
        let bias = try WeightImport.floats(p.bias, count: dim, what: "bias")
        return try channelAffine(v, scale: nil, bias: bias, name: name, out: out)
    }

    /// resizeBilinear to an integer multiple of the input size: the sampling grid of
    /// STRICT_ALIGN_ENDPOINTS / ALIGN_ENDPOINTS (the default) is linspace(0, n − 1, N), i.e.
    /// align-corners; UPSAMPLE_MODE samples i·n/N, i.e. asymmetric.
    private func resizeBilinear(_ p: Spec.ResizeBilinearLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let d = b.chw(x)
        guard p.targetSize.count == 2 else { throw LayerImportFailure("targetSize \(p.targetSize) must be [height, width]") }
        let t = try Checked.ints(p.targetSize, "targetSize", in: 1...Node.maxCountAttribute)
        let method = p.mode?.samplingMethod ?? .strictAlignEndpointsMode  // no mode message: strict endpoint alignment
        if !(t[0] % d.h == 0 && t[1] % d.w == 0) || method == .roiAlignMode {  // any size, any grid: Layers/ClassicVariants.swift
            let mode = method
            return try bilinearResample(x, gridH: Self.samplingGrid(mode, x: d.h, n: t[0]), gridW: Self.samplingGrid(mode, x: d.w, n: t[1]),
                                        name: name, out: out)
        }
        let mode: UpsampleMode
        switch method {
        case .strictAlignEndpointsMode, .alignEndpointsMode: mode = .bilinearAlignCorners
        case .upsampleMode: mode = .bilinearAsymmetric
        default: throw LayerImportFailure(Self.staticUnsupportedReason(.resizeBilinear(p)) ?? "unsupported sampling mode")
        }
        return try b.emit(name, .upsample2d(Upsample2DAttributes(scale: [t[0] / d.h, t[1] / d.w], mode: mode)), [x], output: out)
    }

    // MARK: elementwise math ops
    /// The IR function of a Core ML unary type; nil for an unknown type.
    static func unaryFunction(_ t: Spec.UnaryFunctionLayerParams.Operation) -> UnaryFunction? {
        switch t {
        case .sqrt: return .sqrt
        case .rsqrt: return .rsqrt
        case .inverse: return .inverse
        case .power: return .power
        case .exp: return .exp
        case .log: return .log
        case .abs: return .abs
        case .threshold: return .threshold
        default: return nil
        }
    }

    /// `UnaryFunctionLayerParams` per NeuralNetwork.proto: y = f(scale·x + shift), a scale of 0
    /// (unset) meaning 1; epsilon (0 or unset meaning 1e-6) enters RSQRT 1/√(x+ε) and INVERSE
    /// 1/(x+ε) only (LOG is log x); alpha is POWER's exponent and THRESHOLD's floor.
    private func unary(_ p: Spec.UnaryFunctionLayerParams, _ x: String, name: String, out: String) throws -> String {
        guard let f = Self.unaryFunction(p.type) else { throw LayerImportFailure("unary function \(p.type.rawValue) is unknown") }
        let epsilon: Float = f == .rsqrt || f == .inverse ? (p.epsilon == 0 ? 1e-6 : p.epsilon) : 0
        let a = UnaryAttributes(f, alpha: f.usesAlpha ? p.alpha : 0, epsilon: epsilon, scale: p.scale == 0 ? 1 : p.scale, shift: p.shift)
        return try b.emit(name, .unary(a), [x], output: out)
    }

    /// clip(x, lo, hi) = clippedReLU(x − lo, max hi − lo) + lo.
    private func clip(lo: Float, hi: Float, _ x: String, name: String, out: String) throws -> String {
        guard hi >= lo else { throw LayerImportFailure("clip range [\(lo), \(hi)] is empty") }
        if lo == 0 {
            return try b.emit(name, .activation(.clippedReLU(maxValue: hi, negativeSlope: 0, threshold: 0)), [x], output: out)
        }
        if lo == -.infinity {
            // min(x, hi) = −max(−x, −hi) = −(relu(−x − (−hi)) + (−hi)) = hi − relu(hi − x).
            let r = try b.emit(name + "__relu", .activation(.linear(alpha: -1, beta: hi)), [x])
            let rr = try b.emit(name + "__relu2", .activation(.relu), [r])
            return try b.emit(name, .activation(.linear(alpha: -1, beta: hi)), [rr], output: out)
        }
        let s = try b.emit(name + "__shift", .activation(.linear(alpha: 1, beta: -lo)), [x])
        let c = try b.emit(name + "__clip", .activation(.clippedReLU(maxValue: hi - lo, negativeSlope: 0, threshold: 0)), [s])
        return try b.emit(name, .activation(.linear(alpha: 1, beta: lo)), [c], output: out)
    }

    private func split(_ n: Int, _ x: String, layer: Spec.NeuralNetworkLayer) throws -> [String] {
        let count = layer.output.count
        guard count >= 1, n == 0 || n == count else {
            throw LayerImportFailure("nOutputs \(n) does not match its \(count) output blobs")
        }
        let c = b.chw(x).c, axis = b.channelAxis(x)
        guard c % count == 0 else { throw LayerImportFailure("cannot split \(c) channels into \(count) equal parts") }
        let part = c / count
        return try layer.output.enumerated().map { i, o in
            var crops = [[Int]](repeating: [0, 0], count: b.shape(x).count)
            crops[axis] = [i * part, c - (i + 1) * part]
            return try b.emit(i == 0 ? layer.name : "\(layer.name)__\(i)", .crop(crops: crops), [x], output: o)
        }
    }

    private func slice(_ p: Spec.SliceLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let d = b.chw(x)
        let (axis, n): (Int, Int)
        switch p.axis {
        case .channelAxis: (axis, n) = (3, d.c)
        case .heightAxis: (axis, n) = (1, d.h)
        case .widthAxis: (axis, n) = (2, d.w)
        default: throw LayerImportFailure("slice axis \(p.axis.rawValue) is not C, H or W")
        }
        let start = p.startIndex < 0 ? n + Int(p.startIndex) : Int(p.startIndex)
        let end = p.endIndex < 0 ? n + Int(p.endIndex) : Swift.min(n, Int(p.endIndex))
        guard 0 <= start, start < end, end <= n else {
            throw LayerImportFailure("slice [\(p.startIndex), \(p.endIndex)) of an axis of size \(n) is empty or out of range")
        }
        var crops = [[Int]](repeating: [0, 0], count: 4)
        crops[axis] = [start, n - end]
        let stride = Swift.max(1, try Checked.int(p.stride, "stride"))
        if stride > 1 && axis == 3 { return try stridedChannelSlice(x, start: start, end: end, stride: stride, name: name, out: out) }
        if stride == 1 { return try b.emit(name, .crop(crops: crops), [x], output: out) }
        let cropped = try b.emit(name + "__crop", .crop(crops: crops), [x])
        // Every stride-th row/column: a 1×1 max pool with that stride.
        let strides = axis == 1 ? [stride, 1] : [1, stride]
        return try b.emit(name, .pool2d(Pool2DAttributes(kind: .max, kernel: [1, 1], strides: strides, padding: .valid)), [cropped], output: out)
    }

    private func mvn(_ p: Spec.MeanVarianceNormalizeLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        var mean = try b.emit(name + "__mean", .globalPool2d(kind: .average, keepDims: true), [x])
        if p.acrossChannels {
            let c = b.chw(x).c
            let w = ConstantTensor(shape: [1, c], floats: [Float](repeating: 1 / Float(c), count: c))
            mean = try b.emit(name + "__mean_c", .dense(DenseAttributes(outputChannels: 1)), [mean], weights: ["weight": w])
        }
        return try b.emit(name, .elementwise(.subtract), [x, mean], output: out)
    }

    // MARK: Custom layers

    private func custom(_ p: Spec.CustomLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer, index: Int) throws -> [String] {
        guard !layer.output.isEmpty else { throw LayerImportFailure("has no output blobs") }
        var params: [String: CustomParameterValue] = [:]
        for e in p.parameters {
            switch e.paramValue {
            case let .double(v): params[e.key] = .double(v)
            case let .string(v): params[e.key] = .string(v)
            case let .int(v): params[e.key] = .int(v)
            case let .long(v): params[e.key] = .long(v)
            case let .bool(v): params[e.key] = .bool(v)
            case .unset: b.warnings.append("custom layer '\(layer.name)': parameter '\(e.key)' has no value and is dropped")
            }
        }
        var weights: [String: ConstantTensor] = [:]
        for (i, w) in p.weights.enumerated() {
            let n = w.storedElementCount
            guard n > 0 else { continue }
            weights["w\(i)"] = try WeightImport.constant(w, shape: [n], axis: 0, what: "custom weight \(i)")
        }
        // Keep the inputs in NHWC when any is spatial, so the layer sees one layout.
        var xs = ins
        if ins.contains(where: { !b.isVector($0) }) {
            xs = try ins.enumerated().map { try b.toNHWC($1, base: "\(layer.name)__in\($0)") }
        }
        let shapes = try customOutputShapes(p.className, xs, layer: layer, index: index)
        let attrs = CustomLayerAttributes(className: p.className, description: p.description, parameters: params, outputShapes: shapes)
        return try b.emitMulti(layer.name, .custom(attrs), xs, outputs: layer.output, weights: weights)
    }

    /// Output shapes (IR layout) of a custom layer: known classes by rule; otherwise from the
    /// model's output description, else assumed shape-preserving when the input and the next
    /// layers agree with that.
    private func customOutputShapes(_ className: String, _ xs: [String], layer: Spec.NeuralNetworkLayer, index: Int) throws -> [[Int]] {
        let label = "custom layer '\(layer.name)' (class \(className))"
        switch className {
        case "ResCropBlockLambda":
            guard xs.count == 1, layer.output.count == 1, b.shape(xs[0]).count == 4 else {
                throw LayerImportFailure("ResCropBlockLambda takes one [C, H, W] input and gives one output")
            }
            let s = b.shape(xs[0])
            guard s[1] > 4, s[2] > 4 else { throw LayerImportFailure("ResCropBlockLambda needs H, W > 4, found \(s[1])×\(s[2])") }
            return [[s[0], s[1] - 4, s[2] - 4, s[3]]]
        case "RescaleOutputLambda":
            guard xs.count == 1, layer.output.count == 1 else { throw LayerImportFailure("RescaleOutputLambda takes one input and gives one output") }
            return [b.shape(xs[0])]
        default: break
        }
        var shapes: [[Int]] = []
        for o in layer.output {
            if let f = description.output.first(where: { $0.name == o }), let s = irShape(of: f) {
                shapes.append(s)
                continue
            }
            guard xs.count == 1, layer.output.count == 1 else {
                throw LayerImportFailure("the output shape of \(label) is unknown: mlconv knows the classes "
                    + "ResCropBlockLambda and RescaleOutputLambda, and a layer with several inputs or outputs that are not "
                    + "model outputs cannot be inferred")
            }
            let s = b.shape(xs[0]), d = b.chw(xs[0])
            if let conflict = consumerConflict(blob: o, c: d.c, h: d.h, w: d.w) {
                throw LayerImportFailure("the output shape of \(label) is unknown and is not its input's shape: \(conflict)")
            }
            b.warnings.append("\(label): the output shape is not known to mlconv; assumed equal to the input shape "
                + "[C, H, W] = [\(d.c), \(d.h), \(d.w)] (consistent with the layers that read it)")
            shapes.append(s)
        }
        return shapes
    }

    /// The IR shape of a model output feature (multi-array or image), if declared.
    private func irShape(of f: Spec.FeatureDescription) -> [Int]? {
        switch f.type?.kind {
        case let .multiArray(a)?:
            let s = a.shape.map(Int.init)
            if s.count == 1 { return [1, s[0]] }
            if s.count >= 3 { let t = Array(s.suffix(3)); return [1, t[1], t[2], t[0]] }
            return nil
        case let .image(img)?:
            return [1, Int(img.height), Int(img.width), img.colorSpace == .grayscale ? 1 : 3]
        default: return nil
        }
    }

    /// Why the layers reading `blob` cannot take a [c, h, w] blob, or nil.
    private func consumerConflict(blob: String, c: Int, h: Int, w: Int) -> String? {
        for i in consumers[blob] ?? [] {
            let l = layers[i]
            switch l.layer {
            case let .convolution(p) where !p.isDeconvolution && p.kernelChannels > 0:
                let (need, overflow) = p.kernelChannels.multipliedReportingOverflow(by: Swift.max(1, p.nGroups))
                if overflow || need != UInt64(exactly: c) {
                    return "layer '\(l.name)' (convolution) expects kernelChannels·nGroups = \(p.kernelChannels)·\(Swift.max(1, p.nGroups)) channels, the input has \(c)"
                }
            case let .batchnorm(p):
                if Int(exactly: p.channels) != c { return "layer '\(l.name)' (batchnorm) expects \(p.channels) channels, the input has \(c)" }
            case let .innerProduct(p):
                if Int(exactly: p.inputChannels) != c && Int(exactly: p.inputChannels) != c * h * w {
                    return "layer '\(l.name)' (innerProduct) expects \(p.inputChannels) inputs, the input has [C, H, W] = [\(c), \(h), \(w)]"
                }
            default: continue
            }
        }
        return nil
    }
}

// MARK: shape and data movement ops (issue 9)
extension LayerImporter {
    /// reorganizeData on the NHWC blob. SPACE_TO_DEPTH / DEPTH_TO_SPACE use TensorFlow's DCR
    /// channel order, as the IR's ops. PIXEL_SHUFFLE (PyTorch) is depth-to-space in CRD order:
    /// input channel c·b² + i·b + j goes to output channel c at block offset (i, j); its channels
    /// are first regrouped to DCR order ((i·b + j)·C + c) by reshape [H, W, C, b²] → transpose → reshape.
    func reorganizeData(_ p: Spec.ReorganizeDataLayerParams, _ x0: String, name: String, out: String) throws -> String {
        let x = try b.toNHWC(x0, base: name)
        let bs = try Checked.int(p.blockSize, "blockSize", in: 1...Node.maxCountAttribute)
        switch p.mode {
        case .spaceToDepth: return try b.emit(name, .spaceToDepth(blockSize: bs), [x], output: out)
        case .depthToSpace: return try b.emit(name, .depthToSpace(blockSize: bs), [x], output: out)
        default:
            let s = b.shape(x), bb = bs * bs
            guard s.count == 4, s[3] % bb == 0 else {
                throw LayerImportFailure("pixel shuffle needs channels divisible by blockSize² = \(bb), found \(s[3])")
            }
            let split = try b.emit(name + "__crd", .reshape(targetShape: [s[1], s[2], s[3] / bb, bb]), [x])
            let swapped = try b.emit(name + "__dcr", .transpose(perm: [0, 1, 2, 4, 3]), [split])
            let merged = try b.emit(name + "__dcr_channels", .reshape(targetShape: [s[1], s[2], s[3]]), [swapped])
            return try b.emit(name, .depthToSpace(blockSize: bs), [merged], output: out)
        }
    }
}
