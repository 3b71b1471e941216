// IR node → Core ML classic (rank-5) layers. Each case follows what coremltools' Keras
// converter (CT@5.2 `_layers2.py`) and `NeuralNetworkBuilder` write; see `layerTable`.
import MLGraph

typealias CoreMLLayer = Spec.NeuralNetworkLayer.Layer

extension ExportWriter {
    /// The IR axis Core ML classic layers treat as channels: the last one (ranks 2–4).
    static func channelAxis(rank: Int) -> Int? { (2...4).contains(rank) ? rank - 1 : nil }

    /// The NHWC view of an IR shape in the writer's layout: rank 4 as is, rank 3 [N, S, D] →
    /// [N, S, 1, D] (the steps on Core ML's H axis), rank 2 [N, D] → [N, 1, 1, D].
    static func view(_ s: [Int]) -> [Int]? {
        switch s.count {
        case 4: return s
        case 3: return [s[0], s[1], 1, s[2]]
        case 2: return [s[0], 1, 1, s[1]]
        default: return nil
        }
    }

    /// Core ML [C, H, W] of an IR shape in the writer's layout.
    static func chw(_ s: [Int]) -> [Int]? { view(s).map { [$0[3], $0[1], $0[2]] } }

    /// The index in Core ML's [Seq, C, H, W] numbering (permute axes) of IR axis `a` of a
    /// rank-`rank` tensor; nil for the batch axis.
    static func coreMLAxis(_ a: Int, rank: Int) -> Int? {
        switch (rank, a) {
        case (4, 1), (3, 1): return 2
        case (4, 2): return 3
        case (4, 3), (3, 2), (2, 1): return 1
        default: return nil
        }
    }

    static func convPadding(_ p: PaddingMode) -> Spec.ConvolutionLayerParams.Padding {
        switch p {
        case .same: return .same(Spec.SamePadding(asymmetryMode: .bottomRightHeavy))
        case .valid: return .valid(validAmounts(0, 0, 0, 0))
        case let .explicit(t, b, l, r): return .valid(validAmounts(t, b, l, r))
        }
    }

    static func poolPadding(_ p: PaddingMode) -> Spec.PoolingLayerParams.Padding {
        switch p {
        case .same: return .same(Spec.SamePadding(asymmetryMode: .bottomRightHeavy))
        case .valid: return .valid(validAmounts(0, 0, 0, 0))
        case let .explicit(t, b, l, r): return .valid(validAmounts(t, b, l, r))
        }
    }

    static func borders(_ t: Int, _ b: Int, _ l: Int, _ r: Int) -> Spec.BorderAmounts {
        Spec.BorderAmounts([Spec.EdgeSizes(startEdgeSize: UInt64(t), endEdgeSize: UInt64(b)),
                            Spec.EdgeSizes(startEdgeSize: UInt64(l), endEdgeSize: UInt64(r))])
    }

    static func validAmounts(_ t: Int, _ b: Int, _ l: Int, _ r: Int) -> Spec.ValidPadding {
        Spec.ValidPadding(paddingAmounts: borders(t, b, l, r))
    }

    static func act(_ n: Spec.ActivationParams.Nonlinearity) -> CoreMLLayer { .activation(Spec.ActivationParams(n)) }

    /// `UnaryFunctionLayerParams` as `NeuralNetworkBuilder.add_unary` writes it (scale 1,
    /// shift 0, epsilon 1e-6 for these modes).
    static func unary(_ type: Spec.UnaryFunctionLayerParams.Operation, alpha: Float = 1) -> CoreMLLayer {
        .unary(Spec.UnaryFunctionLayerParams(type: type, alpha: alpha, epsilon: 1e-6, shift: 0, scale: 1))
    }

    /// Emits `steps` in a chain from `input` to `output`; the first layer is `name`, the others
    /// `name__1`, `name__2`, … with intermediate blobs `output__1`, ….
    mutating func chain(_ steps: [CoreMLLayer], name: String, input: String, output: String) {
        var current = input
        for (i, step) in steps.enumerated() {
            let last = i == steps.count - 1
            let next = last ? output : tempBlob("\(output)__\(i + 1)")
            let layerName = i == 0 ? name : freshLayerName("\(name)__\(i)")
            emit(layerName, [current], [next], step)
            current = next
        }
    }

    // MARK: - Dispatch

    mutating func lower(_ node: Node) {
        if refuseVolumetric(node) { return }  // conv3d / pool3d: rank-5 volumes, not frames (ConvPoolNDExport.swift)
        if lowerStepStacked(node) { return }  // TimeDistributed frames: RecurrentExport.swift
        let ins = node.inputs.map { types[$0] ?? TensorType([1]) }
        let inBlobs = node.inputs.map { blob($0) }
        let out = node.outputs.first.map { blob($0) } ?? ""
        switch node.op {
        case let .conv2d(a): lowerConv(node, a, ins[0], inBlobs[0], out)
        case let .deconv2d(a): lowerDeconv(node, a, ins[0], inBlobs[0], out)
        case let .dense(a): lowerDense(node, a, ins[0], inBlobs[0], out)
        case let .batchNorm(a): lowerBatchNorm(node, a, ins[0], inBlobs[0], out)
        case let .activation(a):
            lowerActivation(a, node: node, input: inBlobs[0], output: out, layerName: node.name)
        case let .softmax(rawAxis):
            guard let axis = resolvedAxis(rawAxis, rank: ins[0].rank), let k = Self.coreMLAxis(axis, rank: ins[0].rank) else {
                fail(node, "softmax over axis \(rawAxis) of shape \(formatShape(ins[0].shape))", "Use a non-batch axis of a rank-2, 3 or 4 tensor.")
                return
            }
            onChannelAxis(node, k, inBlobs, out) { w, i, o in w.emit(node.name, i, [o], .softmax) }
        case .prelu: lowerPReLU(node, ins[0], inBlobs[0], out)
        case let .pool2d(a):
            emit(node.name, inBlobs, [out], .pooling(Spec.PoolingLayerParams(
                type: a.kind == .max ? .max : .average, kernelSize: a.kernel.map(UInt64.init),
                stride: a.strides.map(UInt64.init), padding: Self.poolPadding(a.padding), avgPoolExcludePadding: true)))
        case let .globalPool2d(kind, keepDims):
            // Core ML's [C, 1, 1] result is both IR [N, C] and [N, 1, 1, C]: no reshape needed.
            emit(node.name, inBlobs, [out], .pooling(Spec.PoolingLayerParams(
                type: kind == .max ? .max : .average, kernelSize: [0, 0], stride: [0, 0],
                padding: .valid(Self.validAmounts(0, 0, 0, 0)), avgPoolExcludePadding: true, globalPooling: true)))
            if !keepDims {
                notes.append("node '\(node.name)': global pooling result [C, 1, 1] is the Core ML layout of IR (N, C); no flatten layer needed")
            }
        case let .pad(a): lowerPad(node, a, ins[0], inBlobs[0], out)
        case let .crop(crops): lowerCrop(node, crops, ins[0], inBlobs[0], out)
        case let .upsample2d(a): lowerUpsample(node, a, ins[0], inBlobs[0], out)
        case .reshape: lowerReshape(node, ins[0], types[node.outputs[0]] ?? ins[0], inBlobs[0], out)
        case let .transpose(perm): lowerTranspose(node, perm, ins[0], inBlobs[0], out)
        case let .elementwise(kind): lowerElementwise(node, kind, ins, inBlobs, types[node.outputs[0]] ?? ins[0], out)
        case let .concat(rawAxis):
            guard let axis = resolvedAxis(rawAxis, rank: ins[0].rank), let k = Self.coreMLAxis(axis, rank: ins[0].rank) else {
                fail(node, "concatenation along axis \(rawAxis) of rank-\(ins[0].rank) tensors", "Concatenate along a non-batch axis of rank-2, 3 or 4 tensors.")
                return
            }
            onChannelAxis(node, k, inBlobs, out) { w, i, o in w.emit(node.name, i, [o], .concat(sequenceConcat: false)) }
        case let .repeatVector(n):
            // [D, 1, 1] → [D, n, 1]: the repeats go on H, the axis of rank-3 steps.
            emit(node.name, inBlobs, [out], .upsample(Spec.UpsampleLayerParams(scalingFactor: [UInt64(n), 1], mode: .nn)))
        case .identity:
            emit(node.name, inBlobs, [out], Self.act(.linear(alpha: 1, beta: 0)))
        case let .custom(a): lowerCustom(node, a, inBlobs)
        case .recurrent, .embedding, .sequenceMask, .applyMask:
            lowerSequenceNode(node)  // RecurrentExport.swift
        // MARK: shape and data movement ops (issue 9)
        case .matmul, .constant, .squeeze, .expandDims, .stack, .split, .sliceByIndex, .sliceBySize, .tile,
             .spaceToDepth, .depthToSpace, .resize, .bandPart, .cumsum:
            lowerShapeOp(node, ins, inBlobs, out)  // ShapeOpExport.swift
        // MARK: reductions and normalisation ops
        case .reduce, .logSoftmax, .layerNorm, .instanceNorm, .l2Norm, .localResponseNorm:
            lowerNormalization(node, ins, inBlobs, out)  // NormalizationExport.swift
        // MARK: typed ops
        case .cast where castFeedsOnlyEmbeddings(node):
            // Keras Embedding's float → int index cast: Core ML's embedding layer reads the float
            // blob, so the indices pass through unchanged (equal for integral indices).
            emit(node.name, inBlobs, [out], Self.act(.linear(alpha: 1, beta: 0)))
        // MARK: elementwise math ops (ElementwiseMathExport.swift)
        case let .unary(a): lowerUnary(node, a, inBlobs[0], out)
        case let .binary(f): lowerBinary(node, f, ins, inBlobs, types[node.outputs[0]] ?? ins[0], out)
        case let .clip(alpha, beta): lowerClip(node, alpha: alpha, beta: beta, inBlobs[0], out)
        // MARK: scatter, reverse, sort, einsum, windows, NMS ops
        case .scatter, .scatterND, .scatterAlongAxis, .reverse, .reverseSequence, .argsort, .einsum, .slidingWindows, .nonMaximumSuppression:
            failRankNOp(node)  // ScatterExport.swift
        // MARK: convolution and pooling in 1-D and 3-D (ConvPoolNDExport.swift)
        case .conv1d, .conv3d, .pool1d, .pool3d, .deconv3d, .deconv1d:
            lowerConvPoolND(node, ins, inBlobs, out)
        default:
            // Ops without a lowering state why in their definition (Sources/MLGraph/Ops/).
            let refusal = node.op.definition.neuralNetworkExportRefusal ?? NeuralNetworkExportRefusal(
                reason: CoreMLExporter.missingRefusal, suggestion: "Report it: the op's definition should say why.")
            fail(node, refusal.reason, refusal.suggestion)
        }
    }

    /// Runs `body` (which emits the layer from its input blobs to its output blob) on Core ML
    /// axis `k` ([Seq, C, H, W] numbering) moved to the channel axis: H or W is swapped with C by
    /// a permute before and after (as the Keras converter wraps non-channel batch norms).
    mutating func onChannelAxis(_ node: Node, _ k: Int, _ inputs: [String], _ out: String,
                                _ body: (inout ExportWriter, [String], String) -> Void) {
        guard k != 1 else { return body(&self, inputs, out) }
        var swap: [UInt64] = [0, 1, 2, 3]
        swap[1] = UInt64(k); swap[k] = 1
        let moved = inputs.enumerated().map { i, b -> String in
            let m = tempBlob("\(b)__axis\(k)_to_c")
            emit(freshLayerName("\(node.name)__permute_in\(inputs.count > 1 ? "\(i)" : "")"), [b], [m], .permute(axis: swap))
            return m
        }
        let mid = tempBlob("\(out)__channel_axis")
        body(&self, moved, mid)
        emit(freshLayerName("\(node.name)__permute_out"), [mid], [out], .permute(axis: swap))
        notes.append("node '\(node.name)': axis moved to the channels and back with permute \(swap) around the layer")
    }

    // MARK: - Convolution, deconvolution, dense

    /// Emits `layer` for `node`, then its fused activation as `<name>__activation__` (as the
    /// Keras converter splits fused activations).
    mutating func emitWithActivation(_ node: Node, _ inputs: [String], _ out: String, _ layer: CoreMLLayer, activation: Activation?) {
        guard let a = activation, !a.isIdentity else {
            emit(node.name, inputs, [out], layer)
            return
        }
        let pre = tempBlob("\(node.name)__activation___input")
        emit(node.name, inputs, [pre], layer)
        lowerActivation(a, node: node, input: pre, output: out, layerName: freshLayerName("\(node.name)__activation__"))
    }

    mutating func lowerConv(_ node: Node, _ a: Conv2DAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        // MARK: residual add fusion (issue 12)
        guard a.residual == nil else {
            fail(node, "convolution with a fused residual add (the runtime's fuse_residual_add pass); Core ML has no such layer",
                 "Export the graph as converted, before PassPipeline.inference (or with --disable-pass fuse_residual_add).")
            return
        }
        guard let w = node.weights["weight"], let wp = weightParams(w, node: node, role: "weight") else { return }
        var p = Spec.ConvolutionLayerParams(
            outputChannels: UInt64(a.outputChannels), kernelChannels: UInt64(input.shape[3] / a.groups),
            nGroups: UInt64(a.groups), kernelSize: a.kernel.map(UInt64.init), stride: a.strides.map(UInt64.init),
            dilationFactor: a.dilations.map(UInt64.init), padding: Self.convPadding(a.padding), weights: wp)
        if let b = node.weights["bias"] {
            p.hasBias = true
            p.bias = pairedBias(b, weight: wp, node: node)
        }
        emitWithActivation(node, [inBlob], out, .convolution(p), activation: a.activation)
    }

    mutating func lowerDeconv(_ node: Node, _ a: Deconv2DAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        guard a.dilations == [1, 1] else {
            fail(node, "transposed convolution with dilation \(a.dilations); Core ML deconvolution (as coremltools writes it) has dilation 1",
                 "Use dilation 1.")
            return
        }
        let outH = deconvOutputSize(input.shape[1], axis: 0, a), outW = deconvOutputSize(input.shape[2], axis: 1, a)
        var outputShape: [UInt64] = [UInt64(outH), UInt64(outW)]
        if case .explicit = a.padding {
            // Core ML ignores the padding when outputShape is set; explicit crops need it unset.
            guard a.outputPadding == [0, 0] else {
                fail(node, "transposed convolution with explicit padding and output padding \(a.outputPadding)",
                     "Use 'same' or 'valid' padding, or no output padding.")
                return
            }
            outputShape = []
        }
        guard let w = node.weights["weight"], let wp = weightParams(w, node: node, role: "weight", channelAxis: 1) else { return }
        var p = Spec.ConvolutionLayerParams(
            outputChannels: UInt64(a.outputChannels), kernelChannels: UInt64(input.shape[3]),
            nGroups: UInt64(a.groups), kernelSize: a.kernel.map(UInt64.init), stride: a.strides.map(UInt64.init),
            dilationFactor: [1, 1], padding: Self.convPadding(a.padding), isDeconvolution: true, weights: wp,
            outputShape: outputShape)
        if let b = node.weights["bias"] {
            p.hasBias = true
            p.bias = pairedBias(b, weight: wp, node: node)
        }
        emitWithActivation(node, [inBlob], out, .convolution(p), activation: a.activation)
    }

    mutating func lowerDense(_ node: Node, _ a: DenseAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        guard let w = node.weights["weight"], let wp = weightParams(w, node: node, role: "weight") else { return }
        let cin = input.shape.last ?? 0
        let bias = node.weights["bias"].map { pairedBias($0, weight: wp, node: node) }
        switch input.rank {
        case 2:
            emitWithActivation(node, [inBlob], out, .innerProduct(Spec.InnerProductLayerParams(
                inputChannels: UInt64(cin), outputChannels: UInt64(a.outputChannels), hasBias: bias != nil,
                weights: wp, bias: bias)), activation: a.activation)
        case 3, 4:
            // Dense on the channel axis of NHWC = a 1×1 convolution (innerProduct would flatten C·H·W).
            notes.append("node '\(node.name)': dense on a rank-\(input.rank) tensor written as a 1×1 convolution")
            emitWithActivation(node, [inBlob], out, .convolution(Spec.ConvolutionLayerParams(
                outputChannels: UInt64(a.outputChannels), kernelChannels: UInt64(cin), nGroups: 1,
                kernelSize: [1, 1], stride: [1, 1], dilationFactor: [1, 1], padding: Self.convPadding(.valid),
                hasBias: bias != nil, weights: wp, bias: bias)), activation: a.activation)
        default:
            fail(node, "dense on a rank-\(input.rank) tensor \(formatShape(input.shape))", "Reshape the input to rank 2, 3 or 4.")
        }
    }

    // MARK: - Normalization, PReLU

    mutating func lowerBatchNorm(_ node: Node, _ a: BatchNormAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        guard let k = Self.coreMLAxis(a.axis, rank: input.rank) else {
            fail(node, "batch normalization along axis \(a.axis) of shape \(formatShape(input.shape))",
                 "Normalise a non-batch axis of a rank-2, 3 or 4 tensor.")
            return
        }
        let c = input.shape[a.axis]
        guard let mean = node.weights["mean"].flatMap({ weightParams($0, node: node, role: "mean") }),
              let variance = node.weights["variance"].flatMap({ weightParams($0, node: node, role: "variance") }) else { return }
        let gamma = node.weights["gamma"].map { weightParams($0, node: node, role: "gamma") }
            ?? Spec.WeightParams([Float](repeating: 1, count: c))
        let beta = node.weights["beta"].map { weightParams($0, node: node, role: "beta") }
            ?? Spec.WeightParams([Float](repeating: 0, count: c))
        guard let gamma, let beta else { return }
        let layer = CoreMLLayer.batchnorm(Spec.BatchnormLayerParams(
            channels: UInt64(c), epsilon: a.epsilon, gamma: gamma, beta: beta, mean: mean, variance: variance))
        onChannelAxis(node, k, [inBlob], out) { w, i, o in w.emit(node.name, i, [o], layer) }
    }

    mutating func lowerPReLU(_ node: Node, _ input: TensorType, _ inBlob: String, _ out: String) {
        guard let alpha = node.weights["alpha"], let ca = Self.channelAxis(rank: input.rank) else {
            fail(node, "PReLU on shape \(formatShape(input.shape))", "Use a rank-2, 3 or 4 input.")
            return
        }
        let shape = alpha.shape  // input shape without batch
        let channelDim = ca - 1
        let shared = shape.enumerated().allSatisfy { $0.offset == channelDim || $0.element == 1 }
        guard shared, shape[channelDim] == input.shape[ca] || shape[channelDim] == 1 else {
            return lowerFullPReLU(node, alpha, input, inBlob, out)
        }
        guard let wp = weightParams(alpha, node: node, role: "alpha") else { return }
        emit(node.name, [inBlob], [out], Self.act(.preLU(alpha: wp)))
    }

    /// PReLU whose alpha varies over H or W: relu(x) + alpha·min(x, 0), with alpha a
    /// loadConstant [C, H, W] (spec 1).
    mutating func lowerFullPReLU(_ node: Node, _ alpha: ConstantTensor, _ input: TensorType, _ inBlob: String, _ out: String) {
        guard let v = Self.view(input.shape), let av = Self.view([1] + alpha.shape) else { return }
        let (h, w, c) = (v[1], v[2], v[3])
        let a = alpha.floats()
        var full = [Float](repeating: 0, count: c * h * w)
        for ci in 0..<c { for y in 0..<h { for x in 0..<w {
            let iy = av[1] == 1 ? 0 : y, ix = av[2] == 1 ? 0 : x, ic = av[3] == 1 ? 0 : ci
            full[(ci * h + y) * w + x] = a[(iy * av[2] + ix) * av[3] + ic]
        } } }
        let pos = tempBlob("\(out)__positive"), negx = tempBlob("\(out)__negated"), rneg = tempBlob("\(out)__relu_negated")
        let neg = tempBlob("\(out)__negative"), k = tempBlob("\(out)__alpha"), prod = tempBlob("\(out)__scaled_negative")
        emit(node.name, [inBlob], [pos], Self.act(.relu))
        emit(freshLayerName("\(node.name)__negate"), [inBlob], [negx], Self.act(.linear(alpha: -1, beta: 0)))
        emit(freshLayerName("\(node.name)__relu_negated"), [negx], [rneg], Self.act(.relu))
        emit(freshLayerName("\(node.name)__negative"), [rneg], [neg], Self.act(.linear(alpha: -1, beta: 0)))
        emit(freshLayerName("\(node.name)__alpha"), [], [k], .loadConstant(Spec.LoadConstantLayerParams(
            shape: [UInt64(c), UInt64(h), UInt64(w)], data: Spec.WeightParams(full))))
        emit(freshLayerName("\(node.name)__multiply"), [neg, k], [prod], .multiply(alpha: 0))
        emit(freshLayerName("\(node.name)__add"), [pos, prod], [out], .add(alpha: 0))
        notes.append("node '\(node.name)': PReLU with alpha \(formatShape(alpha.shape)) written as relu(x) + loadConstant(alpha)·min(x, 0)")
    }

    // MARK: - Activations

    /// Writes activation `a` from `input` to `output`; the first layer is named `layerName`.
    mutating func lowerActivation(_ a: Activation, node: Node, input: String, output: String, layerName: String) {
        switch a {
        case let .linear(alpha, beta): emit(layerName, [input], [output], Self.act(.linear(alpha: alpha, beta: beta)))
        case .relu: emit(layerName, [input], [output], Self.act(.relu))
        case let .leakyReLU(alpha): emit(layerName, [input], [output], Self.act(.leakyReLU(alpha: alpha)))
        case let .elu(alpha): emit(layerName, [input], [output], Self.act(.elu(alpha: alpha)))
        case .sigmoid: emit(layerName, [input], [output], Self.act(.sigmoid))
        case .tanh: emit(layerName, [input], [output], Self.act(.tanh))
        case .softplus: emit(layerName, [input], [output], Self.act(.softplus))
        case .softsign: emit(layerName, [input], [output], Self.act(.softsign))
        case let .hardSigmoid(alpha, beta): emit(layerName, [input], [output], Self.act(.sigmoidHard(alpha: alpha, beta: beta)))
        case let .thresholdedReLU(theta): emit(layerName, [input], [output], Self.act(.thresholdedReLU(alpha: theta)))
        case .selu:
            // Keras converter: ELU(1.6733) then a ×1.0507 scale.
            chain([Self.act(.elu(alpha: 1.6732632423543772)), Self.act(.linear(alpha: 1.0507009873554805, beta: 0))],
                  name: layerName, input: input, output: output)
        case let .clippedReLU(maxValue, slope, threshold):
            var steps: [CoreMLLayer]
            switch (slope == 0, threshold == 0) {
            case (true, true): steps = [Self.act(.relu)]
            case (false, true): steps = [Self.act(.leakyReLU(alpha: slope))]
            case (true, false): steps = [Self.act(.thresholdedReLU(alpha: threshold))]
            case (false, false):
                // x ≥ t ? x : slope·(x − t)  =  thresholdedReLU_t(x) + slope·min(x − t, 0)
                //                             =  thresholdedReLU_t(x) − slope·relu(t − x).
                let a = tempBlob("\(output)__above"), b = tempBlob("\(output)__t_minus_x"), c = tempBlob("\(output)__relu_t_minus_x")
                let d = tempBlob("\(output)__below"), sum = maxValue == nil ? output : tempBlob("\(output)__unclipped")
                emit(layerName, [input], [a], Self.act(.thresholdedReLU(alpha: threshold)))
                emit(freshLayerName("\(layerName)__t_minus_x"), [input], [b], Self.act(.linear(alpha: -1, beta: threshold)))
                emit(freshLayerName("\(layerName)__relu"), [b], [c], Self.act(.relu))
                emit(freshLayerName("\(layerName)__slope"), [c], [d], Self.act(.linear(alpha: -slope, beta: 0)))
                emit(freshLayerName("\(layerName)__add"), [a, d], [sum], .add(alpha: 0))
                if let m = maxValue {
                    chain([Self.act(.linear(alpha: -1, beta: 0)), Self.unary(.threshold, alpha: -m), Self.act(.linear(alpha: -1, beta: 0))],
                          name: freshLayerName("\(layerName)__clip"), input: sum, output: output)
                }
                return
            }
            if let m = maxValue {
                // coremltools' relu6 lowering: min(y, m) = -max(-y, -m) with unary threshold.
                steps += [Self.act(.linear(alpha: -1, beta: 0)), Self.unary(.threshold, alpha: -m), Self.act(.linear(alpha: -1, beta: 0))]
            }
            chain(steps, name: layerName, input: input, output: output)
        case .swish:
            let s = tempBlob("\(output)__sigmoid")
            emit(layerName, [input], [s], Self.act(.sigmoid))
            emit(freshLayerName("\(layerName)__multiply"), [input, s], [output], .multiply(alpha: 0))
        case .gelu(approximate: true):
            // 0.5x(1 + tanh(c(x + 0.044715x³))) = x·sigmoid(2c(x + 0.044715x³)), spec-1 layers only.
            let c: Float = 0.7978845608028654
            let x2 = tempBlob("\(output)__x2"), x3 = tempBlob("\(output)__x3"), t = tempBlob("\(output)__cubic")
            let sum = tempBlob("\(output)__inner"), z = tempBlob("\(output)__scaled"), s = tempBlob("\(output)__sigmoid")
            emit(layerName, [input, input], [x2], .multiply(alpha: 0))
            emit(freshLayerName("\(layerName)__x3"), [x2, input], [x3], .multiply(alpha: 0))
            emit(freshLayerName("\(layerName)__cubic"), [x3], [t], Self.act(.linear(alpha: 0.044715, beta: 0)))
            emit(freshLayerName("\(layerName)__inner"), [input, t], [sum], .add(alpha: 0))
            emit(freshLayerName("\(layerName)__scaled"), [sum], [z], Self.act(.linear(alpha: 2 * c, beta: 0)))
            emit(freshLayerName("\(layerName)__sigmoid"), [z], [s], Self.act(.sigmoid))
            emit(freshLayerName("\(layerName)__multiply"), [input, s], [output], .multiply(alpha: 0))
        case .gelu(approximate: false):
            lowerExactGELU(node: node, input: input, output: output, layerName: layerName)
        case .exponential:
            emit(layerName, [input], [output], Self.unary(.exp))
        // MARK: elementwise math ops (ElementwiseMathExport.swift)
        case .mish, .hardSwish, .parametricSoftplus, .scaledTanh, .geluSigmoid, .logSigmoid:
            lowerMathActivation(a, node: node, input: input, output: output, layerName: layerName)
        }
    }

    /// Exact GELU with spec-1 layers (the `gelu` layer needs spec 4 and the ND layout):
    /// 0.5·(x + |x|·erf(|x|/√2)) — x·erf(x/√2) is even — with erf from Abramowitz & Stegun
    /// 7.1.26 (|error| ≤ 1.5e-7): erf(z) = 1 − t(a1 + t(a2 + t(a3 + t(a4 + t·a5))))·e^(−z²),
    /// t = 1/(1 + p·z). Uses unary ABS, INVERSE and EXP.
    mutating func lowerExactGELU(node: Node, input: String, output: String, layerName: String) {
        let p: Float = 0.3275911
        let a: [Float] = [0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429]
        var step = 0
        func blob(_ what: String) -> String { tempBlob("\(output)__gelu_\(what)") }
        func next(_ what: String) -> String {
            step += 1
            return step == 1 ? layerName : freshLayerName("\(layerName)__\(what)")
        }
        let u = blob("abs")
        emit(next("abs"), [input], [u], .unary(Spec.UnaryFunctionLayerParams(type: .abs, alpha: 1, epsilon: 1e-6, shift: 0, scale: 1)))
        let t = blob("t")
        emit(next("t"), [u], [t], .unary(Spec.UnaryFunctionLayerParams(type: .inverse, alpha: 1, epsilon: 0, shift: 1, scale: p / Float(2).squareRoot())))
        // Horner: h = a5·t + a4; h = h·t + a3; …; poly = h·t.
        var h = blob("h4")
        emit(next("h4"), [t], [h], Self.act(.linear(alpha: a[4], beta: a[3])))
        for k in stride(from: 2, through: 0, by: -1) {
            let m = blob("m\(k + 1)"), hk = blob("h\(k + 1)")
            emit(next("m\(k + 1)"), [h, t], [m], .multiply(alpha: 0))
            emit(next("h\(k + 1)"), [m], [hk], Self.act(.linear(alpha: 1, beta: a[k])))
            h = hk
        }
        let poly = blob("poly"), x2 = blob("x2"), e = blob("exp"), pe = blob("poly_exp"), erf = blob("erf"), ue = blob("x_erf"), sum = blob("sum")
        emit(next("poly"), [h, t], [poly], .multiply(alpha: 0))
        emit(next("x2"), [input, input], [x2], .multiply(alpha: 0))
        emit(next("exp"), [x2], [e], .unary(Spec.UnaryFunctionLayerParams(type: .exp, alpha: 1, epsilon: 1e-6, shift: 0, scale: -0.5)))
        emit(next("poly_exp"), [poly, e], [pe], .multiply(alpha: 0))
        emit(next("erf"), [pe], [erf], Self.act(.linear(alpha: -1, beta: 1)))
        emit(next("x_erf"), [u, erf], [ue], .multiply(alpha: 0))
        emit(next("sum"), [input, ue], [sum], .add(alpha: 0))
        emit(next("half"), [sum], [output], Self.act(.linear(alpha: 0.5, beta: 0)))
        notes.append("node '\(node.name)': exact GELU written with spec-1 layers (erf by Abramowitz–Stegun 7.1.26, |error| ≤ 1.5e-7)")
    }

    // MARK: - Spatial

    mutating func lowerPad(_ node: Node, _ a: PadAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        let pads = input.rank == 3 ? [a.pads[0], a.pads[1], [0, 0], a.pads[2]] : a.pads
        guard input.rank == 4 || input.rank == 3, pads[0] == [0, 0], pads[3] == [0, 0] else {
            fail(node, "padding \(a.pads) of shape \(formatShape(input.shape)); the padding layer pads height and width only",
                 "Pad only axes 1 and 2 of an NHWC tensor (or axis 1 of an (N, S, D) one).")
            return
        }
        let type: Spec.PaddingLayerParams.PaddingType
        switch a.mode {
        case .constant: type = .constant(.init(value: a.value))
        case .reflect: type = .reflection(.init())
        case .edge: type = .replication(.init())
        }
        emit(node.name, [inBlob], [out], .padding(Spec.PaddingLayerParams(
            paddingAmounts: Self.borders(pads[1][0], pads[1][1], pads[2][0], pads[2][1]), paddingType: type)))
    }

    mutating func lowerCrop(_ node: Node, _ irCrops: [[Int]], _ input: TensorType, _ inBlob: String, _ out: String) {
        let crops = input.rank == 3 ? [irCrops[0], irCrops[1], [0, 0], irCrops[2]] : irCrops
        guard input.rank == 4 || input.rank == 3, crops[0] == [0, 0], crops[3] == [0, 0] else {
            fail(node, "cropping \(crops) of shape \(formatShape(input.shape)); the crop layer crops height and width only",
                 "Crop only axes 1 and 2 of an NHWC tensor.")
            return
        }
        emit(node.name, [inBlob], [out], .crop(Spec.CropLayerParams(
            cropAmounts: Self.borders(crops[1][0], crops[1][1], crops[2][0], crops[2][1]), offset: [0, 0])))
    }

    mutating func lowerUpsample(_ node: Node, _ a: Upsample2DAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        let factors = a.scale.map(UInt64.init)
        switch a.mode {
        case .nearest:
            emit(node.name, [inBlob], [out], .upsample(Spec.UpsampleLayerParams(scalingFactor: factors, mode: .nn)))
        case .bilinearAsymmetric:
            // BILINEAR with the DEFAULT linear mode samples x_in = x_out / scale (UPSAMPLE_MODE).
            emit(node.name, [inBlob], [out], .upsample(Spec.UpsampleLayerParams(scalingFactor: factors, mode: .bilinear)))
        case .bilinearAlignCorners:
            // resizeBilinear STRICT_ALIGN_ENDPOINTS_MODE = linspace(0, X-1, N): align_corners=True, spec 3.
            // (upsample ALIGN_CORNERS_TRUE would need spec 5 and the ND layout.)
            need(3, "bilinear align-corners upsampling as resizeBilinear", node: node.name)
            emit(node.name, [inBlob], [out], .resizeBilinear(Spec.ResizeBilinearLayerParams(
                targetSize: [UInt64(input.shape[1] * a.scale[0]), UInt64(input.shape[2] * a.scale[1])],
                mode: Spec.SamplingMode(samplingMethod: .strictAlignEndpointsMode))))
        case .bilinearHalfPixel:
            lowerHalfPixelBilinear(node, a, input, inBlob, out)
        }
    }

    /// Half-pixel bilinear upsampling by integer factors (Keras UpSampling2D, TF2 resize) with
    /// spec-1 layers: edge-replicate by 1 pixel, a depthwise transposed convolution with the
    /// bilinear kernel, and a crop. Exact: x_in = (x_out + 0.5)/s − 0.5 clamped to the image.
    /// (upsample ALIGN_CORNERS_FALSE is the same maths but needs spec 5 and the ND layout.)
    mutating func lowerHalfPixelBilinear(_ node: Node, _ a: Upsample2DAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        let c = input.shape[3]
        // Per axis with factor s: input pixel k contributes to output o = s·k + d with weight
        // 1 − |(d + 0.5)/s − 0.5| for dmin ≤ d ≤ dmax.
        func taps(_ s: Int) -> (dmin: Int, weights: [Float]) {
            let sf = Double(s)
            let dmin = Int((-sf / 2 - 0.5).rounded(.down)) + 1
            let dmax = Int((1.5 * sf - 0.5).rounded(.up)) - 1
            return (dmin, (dmin...dmax).map { Float(1 - abs((Double($0) + 0.5) / sf - 0.5)) })
        }
        let (dminH, wh) = taps(a.scale[0]), (dminW, ww) = taps(a.scale[1])
        var kernel: [Float] = []
        kernel.reserveCapacity(c * wh.count * ww.count)
        for _ in 0..<c { for y in wh { for x in ww { kernel.append(y * x) } } }
        let padded = tempBlob("\(out)__edge_padded"), full = tempBlob("\(out)__full")
        emit(freshLayerName("\(node.name)__edge_pad"), [inBlob], [padded], .padding(Spec.PaddingLayerParams(
            paddingAmounts: Self.borders(1, 1, 1, 1), paddingType: .replication(.init()))))
        emit(freshLayerName("\(node.name)__bilinear"), [padded], [full], .convolution(Spec.ConvolutionLayerParams(
            outputChannels: UInt64(c), kernelChannels: UInt64(c), nGroups: UInt64(c),
            kernelSize: [UInt64(wh.count), UInt64(ww.count)], stride: a.scale.map(UInt64.init), dilationFactor: [1, 1],
            padding: .valid(Self.validAmounts(0, 0, 0, 0)), isDeconvolution: true, hasBias: false,
            weights: Spec.WeightParams(kernel))))
        let sh = a.scale[0], sw = a.scale[1]
        emit(node.name, [full], [out], .crop(Spec.CropLayerParams(
            cropAmounts: Self.borders(sh - dminH, wh.count + dminH, sw - dminW, ww.count + dminW), offset: [0, 0])))
        notes.append("node '\(node.name)': half-pixel bilinear upsampling ×\(a.scale) written as replication padding + "
            + "depthwise deconvolution (\(wh.count)×\(ww.count) bilinear kernel) + crop (spec 1)")
    }

    // MARK: - Shape ops

    mutating func lowerReshape(_ node: Node, _ input: TensorType, _ output: TensorType, _ inBlob: String, _ out: String) {
        guard Self.view(input.shape) != nil, let o = Self.chw(output.shape) else {
            fail(node, "reshape \(formatShape(input.shape)) → \(formatShape(output.shape)); the writer maps ranks 2, 3 and 4",
                 "Reshape to (N, D), (N, S, D) or (N, H, W, C).")
            return
        }
        if Self.chw(input.shape) == o {
            emit(node.name, [inBlob], [out], Self.act(.linear(alpha: 1, beta: 0)))
        } else if output.rank == 2 {
            // Keras Flatten over NHWC: CHANNEL_LAST flattens in H, W, C order.
            emit(node.name, [inBlob], [out], .flatten(mode: .channelLast))
        } else {
            // CHANNEL_LAST: [C,H,W] is viewed as [H,W,C], reshaped row-major and transposed
            // back, which is the IR's row-major reshape of the NHWC views.
            emit(node.name, [inBlob], [out], .reshape(Spec.ReshapeLayerParams(targetShape: o.map(Int64.init), mode: .channelLast)))
        }
    }

    mutating func lowerTranspose(_ node: Node, _ perm: [Int], _ input: TensorType, _ inBlob: String, _ out: String) {
        // Core ML permute axes index [Seq, C, H, W]; output axis k = input axis axis[k]. IR
        // output axis i holds input axis perm[i]; Core ML dims no IR axis maps to stay in place.
        let r = input.rank
        guard (2...4).contains(r), perm.first == 0 else {
            fail(node, "transpose \(perm) of shape \(formatShape(input.shape)) moves the batch axis or has an unsupported rank",
                 "Keep axis 0 (batch) in place; ranks 2, 3 and 4 are supported.")
            return
        }
        var axis: [UInt64] = [0, 1, 2, 3]
        for i in 1..<r {
            if let k = Self.coreMLAxis(i, rank: r), let src = Self.coreMLAxis(perm[i], rank: r) { axis[k] = UInt64(src) }
        }
        if axis == [0, 1, 2, 3] {
            emit(node.name, [inBlob], [out], Self.act(.linear(alpha: 1, beta: 0)))
        } else {
            emit(node.name, [inBlob], [out], .permute(axis: axis))
        }
    }

    mutating func lowerElementwise(_ node: Node, _ kind: ElementwiseKind, _ ins: [TensorType], _ inBlobs: [String],
                                   _ output: TensorType, _ out: String) {
        // Classic add / multiply broadcast [1,1,1], [C,1,1] and [1,H,W] against [C,H,W]; the
        // other kinds need equal shapes. The first input must have the full shape.
        let broadcastOK = kind == .add || kind == .multiply || kind == .subtract
        var order = Array(ins.indices)
        var ok = true
        if ins.contains(where: { $0.shape != output.shape }) {
            if !broadcastOK { ok = false }
            guard let full = Self.chw(output.shape) else { ok = false; return failElementwise(node, ins) }
            for t in ins {
                let padded = Array(repeating: 1, count: max(0, output.rank - t.rank)) + t.shape
                guard let p = Self.chw(padded), let own = Self.chw(t.shape), p == own else { ok = false; break }
                let allowed = p == full || p == [1, 1, 1] || p == [full[0], 1, 1] || p == [1, full[1], full[2]]
                if !allowed { ok = false }
            }
            if ok {
                guard let first = ins.firstIndex(where: { $0.shape == output.shape }) else { return failElementwise(node, ins) }
                if kind == .subtract, first != 0 { ok = false } else {
                    order.swapAt(0, first)
                }
            }
        }
        guard ok else { return failElementwise(node, ins) }
        let blobs = order.map { inBlobs[$0] }
        switch kind {
        case .add: emit(node.name, blobs, [out], .add(alpha: 0))
        case .multiply: emit(node.name, blobs, [out], .multiply(alpha: 0))
        case .average: emit(node.name, blobs, [out], .average)
        case .maximum: emit(node.name, blobs, [out], .max)
        case .minimum: emit(node.name, blobs, [out], .min)
        case .subtract:
            // a − b = a + (−1·b) (Keras converter: Subtract is absent; this is the classic lowering).
            let neg = tempBlob("\(inBlobs[1])__neg__\(node.name)")
            emit(freshLayerName("\(node.name)__neg__"), [inBlobs[1]], [neg], Self.act(.linear(alpha: -1, beta: 0)))
            emit(node.name, [inBlobs[0], neg], [out], .add(alpha: 0))
        }
    }

    mutating func failElementwise(_ node: Node, _ ins: [TensorType]) {
        fail(node, "inputs of shapes \(ins.map { formatShape($0.shape) }.joined(separator: ", ")) need broadcasting the classic layers do not have",
             "Classic add/multiply broadcast only (N,1,1,C), (N,H,W,1) or (N,1,1,1) against (N,H,W,C) (the full shape first for subtract); average/maximum/minimum need equal shapes.")
    }

    // MARK: - Custom

    mutating func lowerCustom(_ node: Node, _ a: CustomLayerAttributes, _ inBlobs: [String]) {
        need(2, "custom layer '\(a.className)'", node: node.name)
        let keys = node.weights.keys.sorted { (Int($0.dropFirst()) ?? Int.max, $0) < (Int($1.dropFirst()) ?? Int.max, $1) }
        var weights: [Spec.WeightParams] = []
        for k in keys {
            guard let w = node.weights[k], let wp = weightParams(w, node: node, role: "weight '\(k)'") else { return }
            weights.append(wp)
        }
        let params = a.parameters.keys.sorted().map { key -> Spec.CustomLayerParams.ParametersEntry in
            let v: Spec.CustomLayerParams.ParamValue
            switch a.parameters[key]! {
            case let .double(d): v = .double(d)
            case let .string(s): v = .string(s)
            case let .int(i): v = .int(i)
            case let .long(l): v = .long(l)
            case let .bool(b): v = .bool(b)
            }
            return Spec.CustomLayerParams.ParametersEntry(key: key, paramValue: v)
        }
        emit(node.name, inBlobs, node.outputs.map { blob($0) }, .custom(Spec.CustomLayerParams(
            className: a.className, weights: weights, parameters: params, description: a.description)))
    }
}

extension ExportWriter {
    /// Whether `node` (a cast to an integer type) feeds embedding nodes only: the index cast the
    /// Keras converter puts before an Embedding.
    func castFeedsOnlyEmbeddings(_ node: Node) -> Bool {
        guard case let .cast(to) = node.op, to == .int32 || to == .int64, let out = node.outputs.first,
              !graph.outputs.contains(out) else { return false }
        let users = graph.nodes.filter { $0.inputs.contains(out) }
        return !users.isEmpty && users.allSatisfy { if case .embedding = $0.op { return true }; return false }
    }
}
