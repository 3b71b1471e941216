// MARK: rank-N export (issue 10) — IR node → Core ML NeuralNetwork v2 layers of an
// EXACT_ARRAY_MAPPING network (specification 4+).
//
// `CoreMLExporter.export` writes the classic (RANK5) network when every node has a classic
// lowering; otherwise it writes this form. Every blob is the IR tensor with its exact shape (batch
// axis included), so layout-free ops map one to one onto the rank-N layers (transpose,
// reshapeStatic, concatND, sliceStatic, gather, scatter, reduceXxx, batchedMatmul, softmaxND,
// addBroadcastable, comparisons, logical, whereBroadcastable, …). Layout-sensitive ops
// (convolution, pooling, batchnorm, padding, crop, upsample, reorganizeData, lrn, …) use the
// classic layer on an NCHW blob: the IR tensor's NHWC view (`ExportWriter.view`) goes through a
// transpose (0, 3, 1, 2) (or a reshapeStatic when H = W = 1) before the layer and back after it,
// the inverse of what `CoreMLImporter` does with classic layers of EXACT networks
// (Import/Layers/ExactMapping.swift). Integer and bool IR tensors are float blobs holding the
// same values (Core ML NeuralNetwork blobs are float); integer inputs are declared INT32.
import MLGraph

extension ExportWriter {
    /// NeuralNetwork layer fields introduced with specification 5 (iOS 14), by the layer written.
    static func rankNLayerVersion(_ p: Spec.LayerParameters) -> Int32 {
        switch p {
        case .oneHot, .cumSum, .clampedReLU, .argSort, .pooling3d, .globalPooling3d, .sliceBySize, .convolution3d: return 5
        default: return 4
        }
    }

    /// Emits the rank-N layer `p` (noting spec 5 for the iOS 14 layers).
    mutating func emitND(_ name: String, _ inputs: [String], _ outputs: [String], _ p: Spec.LayerParameters, node: Node) {
        let v = Self.rankNLayerVersion(p)
        if v > 4 { need(v, "\(Spec.NeuralNetworkLayer.Layer(p).typeName) layers (NeuralNetwork v2, iOS 14)", node: node.name) }
        emit(name, inputs, outputs, Spec.NeuralNetworkLayer.Layer(p))
    }

    /// A fresh blob and layer for an intermediate step of `node`.
    mutating func stepND(_ node: Node, _ what: String, _ inputs: [String], _ p: Spec.LayerParameters, output: String? = nil) -> String {
        let o = output ?? tempBlob("\(node.outputs.first.map { blob($0) } ?? node.name)__\(what)")
        emitND(freshLayerName("\(node.name)__\(what)"), inputs, [o], p, node: node)
        return o
    }

    static func reshapeND(_ shape: [Int]) -> Spec.LayerParameters {
        .reshapeStatic(Spec.ReshapeStaticLayerParams(targetShape: shape.map(Int64.init)))
    }

    static func transposeND(_ perm: [Int]) -> Spec.LayerParameters {
        .transpose(Spec.TransposeLayerParams(axes: perm.map(UInt64.init)))
    }

    /// A loadConstantND of `c` (named `<node>__<what>`); nil after recording a problem.
    mutating func constantND(_ node: Node, _ c: ConstantTensor, _ what: String) -> String? {
        guard !c.shape.isEmpty else {
            return constantND(node, ConstantTensor(shape: [1], floats: c.floats()), what)
        }
        guard let w = weightParams(c, node: node, role: what) else { return nil }
        return stepND(node, what, [], .loadConstantND(Spec.LoadConstantNDLayerParams(shape: c.shape.map(UInt64.init), data: w)))
    }

    // MARK: - Dispatch

    mutating func lowerRankN(_ node: Node) {
        let ins = node.inputs.map { types[$0] ?? TensorType([1]) }
        let inB = node.inputs.map { blob($0) }
        let outs = node.outputs.map { blob($0) }
        let out = outs.first ?? ""
        let outTypes = node.outputs.map { types[$0] ?? TensorType([1]) }
        let outType = outTypes.first ?? TensorType([1])
        if let t = (ins + outTypes).first(where: { $0.rank == 0 }) {
            return fail(node, "reads or produces a rank-0 tensor (\(t)); Core ML NeuralNetwork blobs have rank 1 to 5",
                        "Keep a size-1 axis (keepDims, or a reshape to (1)).")
        }
        if let t = (ins + outTypes).first(where: { !$0.isFullyKnown }) {
            return fail(node, "reads or produces \(t), whose dimensions are known only at run time; the writer declares static shapes",
                        "Give the graph static input shapes, or run the model with mlconv.")
        }
        if let t = (ins + outTypes).first(where: { $0.rank > 5 }) {
            return fail(node, "reads or produces a rank-\(t.rank) tensor \(formatShape(t.shape)); Core ML NeuralNetwork blobs have rank 1 to 5",
                        "Reshape to rank 5 or less.")
        }
        func ax(_ a: Int, _ rank: Int) -> Int64 { Int64(resolvedAxis(a, rank: rank) ?? a) }
        let r0 = ins.first?.rank ?? outType.rank
        switch node.op {
        case .identity:
            emit(node.name, inB, [out], Self.act(.linear(alpha: 1, beta: 0)))
        case let .activation(a):
            lowerActivationND(a, node: node, input: inB[0], output: out, layerName: node.name)
        case let .softmax(axis):
            emitND(node.name, inB, [out], .softmaxND(Spec.SoftmaxNDLayerParams(axis: ax(axis, r0))), node: node)
        case let .logSoftmax(axis):
            // log softmax = x − logΣexp(x) over the axis (no layer of its own).
            let lse = stepND(node, "logsumexp", inB, .reduceLogSumExp(Spec.ReduceLogSumExpLayerParams(axes: [ax(axis, r0)], keepDims: true)))
            emitND(node.name, [inB[0], lse], [out], .subtractBroadcastable(Spec.SubtractBroadcastableLayerParams()), node: node)
        case let .concat(axis):
            emitND(node.name, inB, [out], .concatND(Spec.ConcatNDLayerParams(axis: ax(axis, r0))), node: node)
        case let .transpose(perm):
            emitND(node.name, inB, [out], Self.transposeND(perm), node: node)
        case .reshape, .reshapeND:
            emitND(node.name, inB, [out], Self.reshapeND(outType.shape), node: node)
        case let .squeeze(axes):
            let resolved = axes.compactMap { resolvedAxis($0, rank: r0) }
            if axes.isEmpty || resolved.count != axes.count {
                emitND(node.name, inB, [out], Self.reshapeND(outType.shape), node: node)
            } else {
                emitND(node.name, inB, [out], .squeeze(Spec.SqueezeLayerParams(axes: resolved.sorted().map(Int64.init))), node: node)
            }
        case let .expandDims(axes):
            let resolved = axes.compactMap { resolvedAxis($0, rank: outType.rank) }
            emitND(node.name, inB, [out], .expandDims(Spec.ExpandDimsLayerParams(axes: resolved.sorted().map(Int64.init))), node: node)
        case let .stack(axis):
            emitND(node.name, inB, [out], .stack(Spec.StackLayerParams(axis: ax(axis, outType.rank))), node: node)
        case let .split(a):
            var p = Spec.SplitNDLayerParams(axis: ax(a.axis, r0))
            let axis = Int(p.axis)
            guard (0..<r0).contains(axis) else { return fail(node, "split axis \(a.axis) of a rank-\(r0) input", "Use an axis of the input.") }
            if let sizes = a.splitSizes { p.splitSizes = sizes.map(UInt64.init); p.numSplits = UInt64(sizes.count) }
            else { p.splitSizes = outTypes.map { UInt64($0.shape[axis]) }; p.numSplits = UInt64(outs.count) }
            emitND(node.name, inB, outs, .splitND(p), node: node)
        case let .sliceByIndex(a):
            lowerSliceND(node, a, ins[0], inB[0], outType, out)
        case let .sliceBySize(begin, size):
            let r = ins[0].rank
            guard begin.count == r, size.count == r else {
                return fail(node, "sliceBySize with \(begin.count) begins and \(size.count) sizes for a rank-\(r) input", "Give one per axis.")
            }
            let p = Spec.SliceStaticLayerParams(
                beginIds: begin.map(Int64.init), beginMasks: Array(repeating: false, count: r),
                endIds: zip(begin, size).map { $1 < 0 ? 0 : Int64($0 + $1) }, endMasks: size.map { $0 < 0 },
                strides: Array(repeating: 1, count: r))
            emitND(node.name, inB, [out], .sliceStatic(p), node: node)
        case let .tile(reps):
            emitND(node.name, inB, [out], .tile(Spec.TileLayerParams(reps: reps.map(UInt64.init))), node: node)
        case let .repeatVector(n):
            // [N, D] → [N, 1, D] → [N, n, D].
            let e = stepND(node, "expand", inB, .expandDims(Spec.ExpandDimsLayerParams(axes: [1])))
            emitND(node.name, [e], [out], .tile(Spec.TileLayerParams(reps: [1, UInt64(n), 1])), node: node)
        case let .matmul(a):
            lowerMatMulND(node, a, ins, inB, outType, out)
        case let .dense(a):
            lowerDenseND(node, a, ins[0], inB[0], out)
        case .constant:
            guard let v = node.weights["value"], let w = weightParams(v, node: node, role: "value") else {
                return fail(node, "constant without a 'value' weight", "Give the node its value.")
            }
            emitND(node.name, [], [out], .loadConstantND(Spec.LoadConstantNDLayerParams(shape: v.shape.map(UInt64.init), data: w)), node: node)
        case let .elementwise(kind):
            lowerElementwiseND(node, kind, inB, out)
        case let .binary(f):
            var operands = inB
            if let y = node.weights["y"] {
                guard let c = constantND(node, y, "y") else { return }
                operands.append(c)
            }
            emitND(node.name, operands, [out], Self.binaryND(f), node: node)
        case let .unary(a):
            lowerUnaryND(node, a, inB[0], out)
        case let .clip(alpha, beta):
            emitND(node.name, inB, [out], .clip(Spec.ClipLayerParams(minVal: alpha, maxVal: beta)), node: node)
        case let .reduce(a):
            let axes = a.axes.isEmpty ? Array(0..<r0) : a.axes.map { Int(ax($0, r0)) }
            emitND(node.name, inB, [out], Self.reduceND(a.function, axes: axes.map(Int64.init), keepDims: a.keepDims), node: node)
        case let .layerNorm(a):
            lowerLayerNormND(node, a, ins[0], inB[0], out)
        case let .l2Norm(a):
            // y = x / sqrt(Σx² + ε): reduceSumSquare, unary RSQRT (ε), multiplyBroadcastable.
            let axes = a.axes.isEmpty ? Array(0..<r0) : a.axes.map { Int(ax($0, r0)) }
            let s = stepND(node, "sumsq", inB, .reduceSumSquare(Spec.ReduceSumSquareLayerParams(axes: axes.map(Int64.init), keepDims: true)))
            let rs = tempBlob("\(out)__rsqrt")
            emit(freshLayerName("\(node.name)__rsqrt"), [s], [rs], Self.exactUnary(.rsqrt, epsilon: a.epsilon))
            emitND(node.name, [inB[0], rs], [out], .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams()), node: node)
        case let .cast(to):
            lowerCastND(node, from: ins[0].elementType, to: to, inB[0], out)
        case let .argmax(a):
            emitND(node.name, inB, [out], .argMax(Spec.ArgMaxLayerParams(axis: ax(a.axis, r0), removeDim: !a.keepDims)), node: node)
        case let .argmin(a):
            emitND(node.name, inB, [out], .argMin(Spec.ArgMinLayerParams(axis: ax(a.axis, r0), removeDim: !a.keepDims)), node: node)
        case let .compare(f):
            let p: Spec.LayerParameters
            switch f {
            case .equal: p = .equal(Spec.EqualLayerParams())
            case .notEqual: p = .notEqual(Spec.NotEqualLayerParams())
            case .less: p = .lessThan(Spec.LessThanLayerParams())
            case .lessEqual: p = .lessEqual(Spec.LessEqualLayerParams())
            case .greater: p = .greaterThan(Spec.GreaterThanLayerParams())
            case .greaterEqual: p = .greaterEqual(Spec.GreaterEqualLayerParams())
            }
            emitND(node.name, inB, [out], p, node: node)
        case let .logical(f):
            let p: Spec.LayerParameters
            switch f {
            case .and: p = .logicalAnd(Spec.LogicalAndLayerParams())
            case .or: p = .logicalOr(Spec.LogicalOrLayerParams())
            case .xor: p = .logicalXor(Spec.LogicalXorLayerParams())
            case .not: p = .logicalNot(Spec.LogicalNotLayerParams())
            }
            emitND(node.name, inB, [out], p, node: node)
        case .select:
            emitND(node.name, inB, [out], .whereBroadcastable(Spec.WhereBroadcastableLayerParams()), node: node)
        case let .gather(axis):
            emitND(node.name, inB, [out], .gather(Spec.GatherLayerParams(axis: ax(axis, r0))), node: node)
        case .gatherND:
            emitND(node.name, inB, [out], .gatherND(Spec.GatherNDLayerParams()), node: node)
        case let .gatherAlongAxis(axis):
            emitND(node.name, inB, [out], .gatherAlongAxis(Spec.GatherAlongAxisLayerParams(axis: ax(axis, r0))), node: node)
        case let .scatter(a) where a.mode == .div && ins[0].elementType.isInteger,
             let .scatterAlongAxis(a) where a.mode == .div && ins[0].elementType.isInteger:
            fail(node, "\(node.op.name) with mode div on \(ins[0].elementType) data divides integers (truncating); Core ML NeuralNetwork blobs hold floats",
                 "Scatter float data, or run the model with mlconv.")
        case let .scatterND(mode) where mode == .div && ins[0].elementType.isInteger:
            fail(node, "scatterND with mode div on \(ins[0].elementType) data divides integers (truncating); Core ML NeuralNetwork blobs hold floats",
                 "Scatter float data, or run the model with mlconv.")
        case let .scatter(a):
            emitND(node.name, inB, [out], .scatter(Spec.ScatterLayerParams(axis: ax(a.axis, r0), mode: Self.scatterMode(a.mode))), node: node)
        case let .scatterND(mode):
            emitND(node.name, inB, [out], .scatterND(Spec.ScatterNDLayerParams(mode: Self.scatterMode(mode))), node: node)
        case let .scatterAlongAxis(a):
            emitND(node.name, inB, [out], .scatterAlongAxis(Spec.ScatterAlongAxisLayerParams(axis: ax(a.axis, r0), mode: Self.scatterMode(a.mode))), node: node)
        case let .oneHot(a):
            emitND(node.name, inB, [out], .oneHot(Spec.OneHotLayerParams(
                oneHotVectorSize: UInt64(a.depth), axis: ax(a.axis, outType.rank), onValue: a.onValue, offValue: a.offValue)), node: node)
        case let .range1d(a):
            emitND(node.name, [], [out], .rangeStatic(Spec.RangeStaticLayerParams(endValue: a.end, startValue: a.start, stepSizeValue: a.step)), node: node)
        case let .fill(a):
            // The value as the element type holds it (the blob is float).
            let value: Float
            switch a.elementType {
            case .bool: value = a.value != 0 ? 1 : 0
            case .int32, .int64: value = a.value.rounded(.towardZero)
            case .float16: value = Float(Float16(a.value))
            case .float32: value = a.value
            }
            emitND(node.name, [], [out], .fillStatic(Spec.FillStaticLayerParams(value: value, targetShape: outType.shape.map(UInt64.init))), node: node)
        case let .topk(a):
            emitND(node.name, inB, outs, .topK(Spec.TopKLayerParams(axis: ax(a.axis, r0), k: UInt64(a.k), useBottomK: a.ascending)), node: node)
        case let .argsort(axis, ascending):
            emitND(node.name, inB, [out], .argSort(Spec.ArgSortLayerParams(axis: ax(axis, r0), descending: !ascending)), node: node)
        case let .cumsum(a):
            emitND(node.name, inB, [out], .cumSum(Spec.CumSumLayerParams(axis: ax(a.axis, r0), excludeFinalSum: a.exclusive, reverse: a.reverse)), node: node)
        case let .bandPart(lower, upper):
            emitND(node.name, inB, [out], .matrixBandPart(Spec.MatrixBandPartLayerParams(numLower: Int64(lower), numUpper: Int64(upper))), node: node)
        case let .reverse(axes):
            let set = axes.isEmpty ? Set(0..<r0) : Set(axes.compactMap { resolvedAxis($0, rank: r0) })  // none given = all
            emitND(node.name, inB, [out], .reverse(Spec.ReverseLayerParams(reverseDim: (0..<r0).map { set.contains($0) })), node: node)
        case let .reverseSequence(seqAxis, batchAxis):
            emitND(node.name, inB, [out], .reverseSeq(Spec.ReverseSeqLayerParams(batchAxis: ax(batchAxis, r0), sequenceAxis: ax(seqAxis, r0))), node: node)
        case let .slidingWindows(a):
            emitND(node.name, inB, [out], .slidingWindows(Spec.SlidingWindowsLayerParams(
                axis: ax(a.axis, r0), windowSize: UInt64(a.size), step: UInt64(a.stride))), node: node)
        case .embedding:
            // [N, L] indices → [N, L, 1] → embeddingND [N, L, D]; the weight is [D, vocabulary].
            guard let w = node.weights["weight"], w.shape.count == 2, let wp = weightParams(w, node: node, role: "weight") else {
                return fail(node, "embedding without a [D, vocabulary] weight", "Give the node its table.")
            }
            let e = stepND(node, "expand", inB, .expandDims(Spec.ExpandDimsLayerParams(axes: [-1])))
            emitND(node.name, [e], [out], .embeddingND(Spec.EmbeddingNDLayerParams(
                vocabSize: UInt64(w.shape[1]), embeddingSize: UInt64(w.shape[0]), weights: wp)), node: node)
        case let .pad(a) where a.mode == .constant:
            emitND(node.name, inB, [out], .constantPad(Spec.ConstantPaddingLayerParams(
                value: a.value, padAmounts: a.pads.flatMap { $0.map(UInt64.init) })), node: node)
        case let .custom(a):
            lowerCustom(node, a, inB)
        // Layout-sensitive ops: the classic layer on the NCHW blob.
        case let .conv2d(a): onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerConv(node, a, ins[0], i, o) }
        case let .deconv2d(a): onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerDeconv(node, a, ins[0], i, o) }
        case .conv1d, .pool1d, .deconv1d:
            onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerConvPoolND(node, ins, [i], o) }
        case let .batchNorm(a):
            guard resolvedAxis(a.axis, rank: r0) == r0 - 1 else {
                return fail(node, "batchNorm over axis \(a.axis) of shape \(formatShape(ins[0].shape)) (the rank-N writer takes the last axis as channels)",
                            "Transpose the normalised axis to the end.")
            }
            onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerBatchNorm(node, a, ins[0], i, o) }
        case .prelu: onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerPReLU(node, ins[0], i, o) }
        case let .pool2d(a):
            onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in
                w.emit(node.name, [i], [o], .pooling(Spec.PoolingLayerParams(
                    type: a.kind == .max ? .max : .average, kernelSize: a.kernel.map(UInt64.init),
                    stride: a.strides.map(UInt64.init), padding: Self.poolPadding(a.padding), avgPoolExcludePadding: true)))
            }
        case let .globalPool2d(kind, _):
            onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in
                w.emit(node.name, [i], [o], .pooling(Spec.PoolingLayerParams(
                    type: kind == .max ? .max : .average, kernelSize: [0, 0], stride: [0, 0],
                    padding: .valid(Self.validAmounts(0, 0, 0, 0)), avgPoolExcludePadding: true, globalPooling: true)))
            }
        case let .pad(a): onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerPad(node, a, ins[0], i, o) }
        case let .crop(crops): onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerCrop(node, crops, ins[0], i, o) }
        case let .upsample2d(a): onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerUpsample(node, a, ins[0], i, o) }
        case .spaceToDepth, .depthToSpace:
            onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerShapeOp(node, ins, [i], o) }
        case .instanceNorm, .localResponseNorm:
            onNCHW(node, ins[0], inB[0], outType, out) { w, i, o in w.lowerNormalization(node, ins, [i], o) }
        case .recurrent, .sequenceMask, .applyMask:
            fail(node, "\(node.op.name) is written by the classic (RANK5) writer only; this graph needs the rank-N (EXACT) writer for other nodes",
                 "Export the recurrent part and the rank-N part as separate models, or run the model with mlconv.")
        case .conv3d, .pool3d, .deconv3d:
            fail(node, "\(node.op.name) would need convolution3d / pooling3d (spec 5) on NCDHW blobs, which the rank-N writer does not emit yet",
                 "Run the model with mlconv, or export an ML Program with coremltools.")
        case .resize:
            fail(node, "resize has no NeuralNetwork layer with its modes (upsample and resizeBilinear need integer factors or given sizes on H and W)",
                 "Use upsample2d for integer factors, or run the model with mlconv.")
        case let .einsum(equation):
            lowerEinsumND(node, equation: equation, ins, inB, outType, out)  // RankNEinsumExport.swift
        case .nonMaximumSuppression:
            fail(node, "the NonMaximumSuppression layer's box and score layout differs from the IR op's; the writer does not convert it",
                 "Run the model with mlconv, or export an ML Program with coremltools.")
        default:
            let refusal = node.op.definition.neuralNetworkExportRefusal ?? NeuralNetworkExportRefusal(
                reason: CoreMLExporter.missingRefusal, suggestion: "Report it: the op's definition should say why.")
            fail(node, refusal.reason, refusal.suggestion)
        }
    }

    // MARK: - Classic layers on NCHW blobs

    /// Runs `body` (which writes a classic layer from an NCHW blob to an NCHW blob) between the
    /// IR input's NHWC view → NCHW and the NCHW result → the IR output shape.
    mutating func onNCHW(_ node: Node, _ input: TensorType, _ inBlob: String, _ output: TensorType, _ out: String,
                         _ body: (inout ExportWriter, String, String) -> Void) {
        guard let vi = Self.view(input.shape), let vo = Self.view(output.shape) else {
            return fail(node, "\(node.op.name) on \(formatShape(input.shape)) → \(formatShape(output.shape)): classic layers take IR ranks 2, 3 and 4 (NHWC views)",
                        "Reshape to (N, D), (N, S, D) or (N, H, W, C).")
        }
        let nchwIn = tempBlob("\(inBlob)__nchw")
        let base = node.name
        if vi[1] == 1 && vi[2] == 1 {
            emitND(freshLayerName("\(base)__to_nchw"), [inBlob], [nchwIn], Self.reshapeND([vi[0], vi[3], 1, 1]), node: node)
        } else {
            var x = inBlob
            if input.rank != 4 {
                x = tempBlob("\(inBlob)__nhwc")
                emitND(freshLayerName("\(base)__to_nhwc"), [inBlob], [x], Self.reshapeND(vi), node: node)
            }
            emitND(freshLayerName("\(base)__to_nchw"), [x], [nchwIn], Self.transposeND([0, 3, 1, 2]), node: node)
        }
        let nchwOut = tempBlob("\(out)__nchw")
        body(&self, nchwIn, nchwOut)
        if vo[1] == 1 && vo[2] == 1 {
            emitND(freshLayerName("\(base)__from_nchw"), [nchwOut], [out], Self.reshapeND(output.shape), node: node)
        } else if output.rank == 4 {
            emitND(freshLayerName("\(base)__from_nchw"), [nchwOut], [out], Self.transposeND([0, 2, 3, 1]), node: node)
        } else {
            let t = tempBlob("\(out)__nhwc")
            emitND(freshLayerName("\(base)__from_nchw"), [nchwOut], [t], Self.transposeND([0, 2, 3, 1]), node: node)
            emitND(freshLayerName("\(base)__to_rank\(output.rank)"), [t], [out], Self.reshapeND(output.shape), node: node)
        }
    }

    // MARK: - Op families

    static func binaryND(_ f: BinaryFunction) -> Spec.LayerParameters {
        switch f {
        case .add: return .addBroadcastable(Spec.AddBroadcastableLayerParams())
        case .sub: return .subtractBroadcastable(Spec.SubtractBroadcastableLayerParams())
        case .mul: return .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams())
        case .realDiv: return .divideBroadcastable(Spec.DivideBroadcastableLayerParams())
        case .floorDiv: return .floorDivBroadcastable(Spec.FloorDivBroadcastableLayerParams())
        case .mod: return .modBroadcastable(Spec.ModBroadcastableLayerParams())
        case .pow: return .powBroadcastable(Spec.PowBroadcastableLayerParams())
        case .maximum: return .maxBroadcastable(Spec.MaxBroadcastableLayerParams())
        case .minimum: return .minBroadcastable(Spec.MinBroadcastableLayerParams())
        }
    }

    static func scatterMode(_ m: ScatterMode) -> Spec.ScatterMode {
        switch m {
        case .update: return .scatterUpdate
        case .add: return .scatterAdd
        case .sub: return .scatterSub
        case .mul: return .scatterMul
        case .div: return .scatterDiv
        case .max: return .scatterMax
        case .min: return .scatterMin
        }
    }

    static func reduceND(_ f: ReduceFunction, axes: [Int64], keepDims: Bool) -> Spec.LayerParameters {
        switch f {
        case .sum: return .reduceSum(Spec.ReduceSumLayerParams(axes: axes, keepDims: keepDims))
        case .mean: return .reduceMean(Spec.ReduceMeanLayerParams(axes: axes, keepDims: keepDims))
        case .prod: return .reduceProd(Spec.ReduceProdLayerParams(axes: axes, keepDims: keepDims))
        case .max: return .reduceMax(Spec.ReduceMaxLayerParams(axes: axes, keepDims: keepDims))
        case .min: return .reduceMin(Spec.ReduceMinLayerParams(axes: axes, keepDims: keepDims))
        case .l1Norm: return .reduceL1(Spec.ReduceL1LayerParams(axes: axes, keepDims: keepDims))
        case .l2Norm: return .reduceL2(Spec.ReduceL2LayerParams(axes: axes, keepDims: keepDims))
        case .logSumExp: return .reduceLogSumExp(Spec.ReduceLogSumExpLayerParams(axes: axes, keepDims: keepDims))
        case .sumSquare: return .reduceSumSquare(Spec.ReduceSumSquareLayerParams(axes: axes, keepDims: keepDims))
        }
    }

    /// Activations: gelu and geluSigmoid as the `gelu` layer; the others as in classic networks
    /// (their layers are elementwise on blobs of equal shapes).
    mutating func lowerActivationND(_ a: Activation, node: Node, input: String, output: String, layerName: String) {
        switch a {
        case let .gelu(approximate):
            emitND(layerName, [input], [output], .gelu(Spec.GeluLayerParams(mode: approximate ? .tanhApproximation : .exact)), node: node)
        case .geluSigmoid:
            emitND(layerName, [input], [output], .gelu(Spec.GeluLayerParams(mode: .sigmoidApproximation)), node: node)
        default:
            lowerActivation(a, node: node, input: input, output: output, layerName: layerName)
        }
    }

    mutating func lowerElementwiseND(_ node: Node, _ kind: ElementwiseKind, _ inB: [String], _ out: String) {
        guard inB.count >= 2 else {
            return emit(node.name, inB, [out], Self.act(.linear(alpha: 1, beta: 0)))
        }
        let p: Spec.LayerParameters
        switch kind {
        case .add, .average: p = .addBroadcastable(Spec.AddBroadcastableLayerParams())
        case .subtract: p = .subtractBroadcastable(Spec.SubtractBroadcastableLayerParams())
        case .multiply: p = .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams())
        case .maximum: p = .maxBroadcastable(Spec.MaxBroadcastableLayerParams())
        case .minimum: p = .minBroadcastable(Spec.MinBroadcastableLayerParams())
        }
        let last = kind == .average ? tempBlob("\(out)__sum") : out
        var acc = inB[0]
        for i in 1..<inB.count {
            let isLast = i == inB.count - 1
            let o = isLast ? last : tempBlob("\(out)__\(i)")
            emitND(isLast && kind != .average ? node.name : freshLayerName("\(node.name)__\(i)"), [acc, inB[i]], [o], p, node: node)
            acc = o
        }
        if kind == .average {
            emit(node.name, [last], [out], Self.act(.linear(alpha: 1 / Float(inB.count), beta: 0)))
        }
    }

    /// Unary functions: the classic `unary` where it has the function (with scale and shift),
    /// else LINEAR(scale, shift) and the rank-N layer (sin, cos, …, erf, floor, ceil, round, sign).
    mutating func lowerUnaryND(_ node: Node, _ a: UnaryAttributes, _ inBlob: String, _ out: String) {
        let p: Spec.LayerParameters
        switch a.function {
        case .sin: p = .sin(Spec.SinLayerParams())
        case .cos: p = .cos(Spec.CosLayerParams())
        case .tan: p = .tan(Spec.TanLayerParams())
        case .asin: p = .asin(Spec.AsinLayerParams())
        case .acos: p = .acos(Spec.AcosLayerParams())
        case .atan: p = .atan(Spec.AtanLayerParams())
        case .sinh: p = .sinh(Spec.SinhLayerParams())
        case .cosh: p = .cosh(Spec.CoshLayerParams())
        case .tanh: p = .tanh(Spec.TanhLayerParams())
        case .asinh: p = .asinh(Spec.AsinhLayerParams())
        case .acosh: p = .acosh(Spec.AcoshLayerParams())
        case .atanh: p = .atanh(Spec.AtanhLayerParams())
        case .erf: p = .erf(Spec.ErfLayerParams())
        case .floor: p = .floor(Spec.FloorLayerParams())
        case .ceil: p = .ceil(Spec.CeilLayerParams())
        case .round: p = .round(Spec.RoundLayerParams())
        case .sign: p = .sign(Spec.SignLayerParams())
        default:
            return lowerUnary(node, a, inBlob, out)
        }
        var x = inBlob
        if a.isAffine {
            x = tempBlob("\(out)__affine")
            emit(freshLayerName("\(node.name)__affine"), [inBlob], [x], Self.act(.linear(alpha: a.scale, beta: a.shift)))
        }
        emitND(node.name, [x], [out], p, node: node)
    }

    /// sliceByIndex → sliceStatic (squeezed axes by a reshapeStatic after it: squeezeMasks need spec 5).
    mutating func lowerSliceND(_ node: Node, _ a: SliceByIndexAttributes, _ input: TensorType, _ inBlob: String, _ output: TensorType, _ out: String) {
        let r = input.rank
        func full<T>(_ v: [T], _ fill: T) -> [T] { v.count >= r ? Array(v.prefix(r)) : v + Array(repeating: fill, count: r - v.count) }
        let begin = full(a.begin, 0), end = full(a.end, 0)
        let beginMask = full(a.beginMask, a.begin.isEmpty), endMask = full(a.endMask, a.end.isEmpty)
        var beginMasks = beginMask, endMasks = endMask
        if a.begin.count < r { for i in a.begin.count..<r { beginMasks[i] = true } }
        if a.end.count < r { for i in a.end.count..<r { endMasks[i] = true } }
        let strides = full(a.stride.isEmpty ? [] : a.stride, 1)
        let squeezed = full(a.squeezeMask, false)
        var ends = end.map(Int64.init)
        // A squeezed axis keeps only its begin index.
        for i in 0..<r where squeezed[i] {
            let b = begin[i] < 0 ? begin[i] + input.shape[i] : begin[i]
            ends[i] = Int64(b + 1); endMasks[i] = false
            if b + 1 == input.shape[i] { endMasks[i] = true }
        }
        let p = Spec.SliceStaticLayerParams(beginIds: begin.map(Int64.init), beginMasks: beginMasks, endIds: ends, endMasks: endMasks,
                                            strides: strides.map(Int64.init))
        guard squeezed.contains(true) else {
            return emitND(node.name, [inBlob], [out], .sliceStatic(p), node: node)
        }
        let s = stepND(node, "slice", [inBlob], .sliceStatic(p))
        emitND(node.name, [s], [out], Self.reshapeND(output.shape), node: node)
    }

    /// matmul → batchedMatmul: a constant rank-2 y as the layer's weights (Wᵀ row-major), any
    /// other y as a loadConstantND or second input. Rank-1 operands (which Core ML keeps as
    /// rank 2) are reshaped to the IR output shape afterwards.
    mutating func lowerMatMulND(_ node: Node, _ a: MatMulAttributes, _ ins: [TensorType], _ inB: [String], _ outType: TensorType, _ out: String) {
        var xb = inB[0]
        if ins[0].rank == 1 {
            xb = stepND(node, "x2d", [xb], Self.reshapeND([1, ins[0].shape[0]]))
        }
        let yType = ins.count > 1 ? ins[1] : TensorType(node.weights["y"]?.shape ?? [1])
        let coreMLRank = max(max(ins[0].rank, 2), max(yType.rank, 2))
        let needsReshape = coreMLRank != outType.rank
        let mm = needsReshape ? tempBlob("\(out)__matmul") : out
        let name = needsReshape ? freshLayerName("\(node.name)__matmul") : node.name
        if ins.count == 1, let y = node.weights["y"], y.shape.count == 2, !a.transposeX {
            let k = y.shape[a.transposeY ? 1 : 0], n = y.shape[a.transposeY ? 0 : 1]
            var weight = y
            if !a.transposeY {  // the layer stores Wᵀ [n, k] row-major
                let v = y.floats()
                var t = [Float](repeating: 0, count: v.count)
                for i in 0..<k { for j in 0..<n { t[j * k + i] = v[i * n + j] } }
                weight = ConstantTensor(shape: [n, k], floats: t)
            }
            guard let wp = weightParams(weight, node: node, role: "y") else { return }
            emitND(name, [xb], [mm], .batchedMatmul(Spec.BatchedMatMulLayerParams(
                weightMatrixFirstDimension: UInt64(k), weightMatrixSecondDimension: UInt64(n), weights: wp)), node: node)
        } else {
            var yb: String
            if ins.count > 1 { yb = inB[1] } else {
                guard let y = node.weights["y"], let c = constantND(node, y, "y") else { return }
                yb = c
            }
            if yType.rank == 1 { yb = stepND(node, "y2d", [yb], Self.reshapeND([yType.shape[0], 1])) }
            emitND(name, [xb, yb], [mm], .batchedMatmul(Spec.BatchedMatMulLayerParams(transposeA: a.transposeX, transposeB: a.transposeY)), node: node)
        }
        if needsReshape { emitND(node.name, [mm], [out], Self.reshapeND(outType.shape), node: node) }
    }

    /// dense on the last axis → batchedMatmul with weights [Cout, Cin] (= Wᵀ) and bias, then the
    /// fused activation.
    mutating func lowerDenseND(_ node: Node, _ a: DenseAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        guard let w = node.weights["weight"], let wp = weightParams(w, node: node, role: "weight") else { return }
        let cin = input.shape.last ?? 0
        let bias = node.weights["bias"].map { pairedBias($0, weight: wp, node: node) }
        let layer = Spec.LayerParameters.batchedMatmul(Spec.BatchedMatMulLayerParams(
            weightMatrixFirstDimension: UInt64(cin), weightMatrixSecondDimension: UInt64(a.outputChannels),
            hasBias: bias != nil, weights: wp, bias: bias))
        guard let act = a.activation, !act.isIdentity else { return emitND(node.name, [inBlob], [out], layer, node: node) }
        let pre = tempBlob("\(node.name)__activation___input")
        emitND(node.name, [inBlob], [pre], layer, node: node)
        lowerActivationND(act, node: node, input: pre, output: out, layerName: freshLayerName("\(node.name)__activation__"))
    }

    /// layerNorm: the layerNormalization layer when the axes are the trailing ones, else
    /// reduceMean / subtract / multiply / reduceMean / unary RSQRT(ε) / multiply (+ gamma, beta).
    mutating func lowerLayerNormND(_ node: Node, _ a: LayerNormAttributes, _ input: TensorType, _ inBlob: String, _ out: String) {
        let r = input.rank
        let axes = (a.axes.isEmpty ? Array(0..<r) : a.axes.compactMap { resolvedAxis($0, rank: r) }).sorted()
        let dims = axes.map { input.shape[$0] }
        let count = dims.reduce(1, *)
        if axes == Array((r - axes.count)..<r) {
            let gamma = node.weights["gamma"] ?? ConstantTensor(shape: dims, floats: Array(repeating: 1, count: count))
            let beta = node.weights["beta"] ?? ConstantTensor(shape: dims, floats: Array(repeating: 0, count: count))
            guard let g = weightParams(gamma, node: node, role: "gamma"), let b = weightParams(beta, node: node, role: "beta") else { return }
            emitND(node.name, [inBlob], [out], .layerNormalization(Spec.LayerNormalizationLayerParams(
                normalizedShape: dims.map(Int64.init), eps: a.epsilon, gamma: g, beta: b)), node: node)
            return
        }
        let ax = axes.map(Int64.init)
        let mean = stepND(node, "mean", [inBlob], .reduceMean(Spec.ReduceMeanLayerParams(axes: ax, keepDims: true)))
        let d = stepND(node, "centered", [inBlob, mean], .subtractBroadcastable(Spec.SubtractBroadcastableLayerParams()))
        let d2 = stepND(node, "squared", [d, d], .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams()))
        let v = stepND(node, "variance", [d2], .reduceMean(Spec.ReduceMeanLayerParams(axes: ax, keepDims: true)))
        let rs = tempBlob("\(out)__rsqrt")
        emit(freshLayerName("\(node.name)__rsqrt"), [v], [rs], Self.exactUnary(.rsqrt, epsilon: a.epsilon))
        guard node.weights["gamma"] != nil || node.weights["beta"] != nil else {
            return emitND(node.name, [d, rs], [out], .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams()), node: node)
        }
        var y = stepND(node, "normalized", [d, rs], .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams()))
        var shape = [Int](repeating: 1, count: r)
        for (i, a) in axes.enumerated() { shape[a] = dims[i] }
        let beta = node.weights["beta"]
        if let g = node.weights["gamma"] {
            guard let c = constantND(node, ConstantTensor(shape: shape, floats: g.floats()), "gamma") else { return }
            let target = beta == nil ? out : tempBlob("\(out)__scaled")
            emitND(beta == nil ? node.name : freshLayerName("\(node.name)__gamma"), [y, c], [target],
                   .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams()), node: node)
            y = target
        }
        if let b = beta {
            guard let c = constantND(node, ConstantTensor(shape: shape, floats: b.floats()), "beta") else { return }
            emitND(node.name, [y, c], [out], .addBroadcastable(Spec.AddBroadcastableLayerParams()), node: node)
        }
    }

    /// cast: integral values are the same float blob; float → int32/int64 truncates
    /// (sign(x)·floor(|x|)); → bool is x ≠ 0.
    mutating func lowerCastND(_ node: Node, from: ElementType, to: ElementType, _ inBlob: String, _ out: String) {
        if to == .float16 && from != .float16 {
            return fail(node, "cast \(from) → float16 rounds the values; Core ML NeuralNetwork blobs have no element type to cast to",
                        "Remove the cast (Core ML may compute in float16 on its own), or run the model with mlconv.")
        }
        if from == .int64 && to == .int32 {
            return fail(node, "cast int64 → int32 wraps values outside the int32 range; Core ML NeuralNetwork blobs hold floats and cannot wrap",
                        "Remove the cast when the values fit in int32, or run the model with mlconv.")
        }
        switch (from.isInteger || from == .bool, to) {
        case (_, .bool):
            emitND(node.name, [inBlob], [out], .notEqual(Spec.NotEqualLayerParams(alpha: 0)), node: node)
        case (true, _), (false, .float32), (false, .float16):
            emit(node.name, [inBlob], [out], Self.act(.linear(alpha: 1, beta: 0)))
        default:
            let s = stepND(node, "sign", [inBlob], .sign(Spec.SignLayerParams()))
            let m = tempBlob("\(out)__abs")
            emit(freshLayerName("\(node.name)__abs"), [inBlob], [m], Self.exactUnary(.abs))
            let f = stepND(node, "floor", [m], .floor(Spec.FloorLayerParams()))
            emitND(node.name, [s, f], [out], .multiplyBroadcastable(Spec.MultiplyBroadcastableLayerParams()), node: node)
        }
    }
}

extension ExportWriter {
    /// Rank-N image inputs: Core ML gives the image as the blob [1, C, H, W]
    /// (RANK4_IMAGE_MAPPING); the IR reads NHWC, so a transpose (0, 2, 3, 1) `<input>__nhwc`
    /// follows the input (and its folded preprocessing).
    mutating func transposeImageInputs() {
        for feature in graph.description.inputs where feature.image != nil {
            guard let input = graph.inputs.first(where: { $0.name == feature.name }), input.type.rank == 4 else { continue }
            let featureBlob = blob(feature.name)
            let nhwc = tempBlob("\(featureBlob)__nhwc")
            emit(freshLayerName("\(featureBlob)__to_nhwc"), [featureBlob], [nhwc], Spec.NeuralNetworkLayer.Layer(Self.transposeND([0, 2, 3, 1])))
            featureBlobs[feature.name] = featureBlob
            for (t, b) in blobOf where b == featureBlob { blobOf[t] = nhwc }
            blobOf[feature.name] = nhwc
        }
    }
}

extension CoreMLExporter {
    /// How the rank-N (EXACT_ARRAY_MAPPING) network writes each IR op; used when some node of the
    /// graph has no classic lowering. Every row needs spec 4 unless it says 5.
    public static let rankNLayerTable: [CoreMLLayerMapping] = {
        func row(_ ir: String, _ coreML: String, _ v: Int32 = 4, _ notes: String = "") -> CoreMLLayerMapping {
            CoreMLLayerMapping(irOp: "rank-N: " + ir, coreML: coreML, minimumSpecificationVersion: v, notes: notes)
        }
        return [
            row("any graph with a node the classic layers cannot express", "EXACT_ARRAY_MAPPING network, inputs with their exact IR shapes",
                4, "integer / bool inputs as INT32 arrays; image inputs (RANK4_IMAGE_MAPPING) followed by a transpose to NHWC"),
            row("reshape / reshapeND", "reshapeStatic"),
            row("transpose", "transpose"),
            row("squeeze / expandDims", "squeeze / expandDims (reshapeStatic when squeeze names no axis)"),
            row("concat / stack / split", "concatND / stack / splitND"),
            row("sliceByIndex / sliceBySize", "sliceStatic (+ reshapeStatic for squeezed axes)", 4, "squeezeMasks would need spec 5"),
            row("tile / repeatVector", "tile (repeatVector: expandDims + tile)"),
            row("softmax / logSoftmax", "softmaxND / reduceLogSumExp + subtractBroadcastable"),
            row("matmul", "batchedMatmul (constant rank-2 y as weights, else loadConstantND or a second input)", 4,
                "rank-1 operands reshaped to rank 2 and the result back"),
            row("dense", "batchedMatmul with weights and bias (+ fused activation)"),
            row("constant", "loadConstantND"),
            row("elementwise / binary", "addBroadcastable / subtractBroadcastable / multiplyBroadcastable / divideBroadcastable / "
                + "floorDivBroadcastable / modBroadcastable / powBroadcastable / maxBroadcastable / minBroadcastable (+ loadConstantND for a constant y)"),
            row("unary sin / cos / tan / asin / acos / atan / sinh / cosh / tanh / asinh / acosh / atanh / erf / floor / ceil / round / sign",
                "sin / cos / tan / asin / acos / atan / sinh / cosh / tanh / asinh / acosh / atanh / erf / floor / ceil / round / sign "
                + "(after activation LINEAR for scale and shift)"),
            row("clip", "clip"),
            row("activation gelu / geluSigmoid", "gelu (EXACT / TANH_APPROXIMATION / SIGMOID_APPROXIMATION)"),
            row("reduce", "reduceSum / reduceMean / reduceProd / reduceMax / reduceMin / reduceL1 / reduceL2 / reduceLogSumExp / reduceSumSquare",
                4, "rank-0 results are refused (keep the axes)"),
            row("layerNorm", "layerNormalization (trailing axes) or reduceMean / subtractBroadcastable / multiplyBroadcastable / unary RSQRT"),
            row("l2Norm", "reduceSumSquare + unary RSQRT(ε) + multiplyBroadcastable"),
            row("cast", "activation LINEAR (integral values), notEqual (→ bool), sign · floor(unary ABS) (float → int)", 4,
                "→ float16 and int64 → int32 are refused (rounding / wrapping)"),
            row("argmax / argmin", "argMax / argMin"),
            row("compare", "equal / notEqual / lessThan / lessEqual / greaterThan / greaterEqual"),
            row("logical", "logicalAnd / logicalOr / logicalXor / logicalNot"),
            row("select", "whereBroadcastable"),
            row("gather / gatherND / gatherAlongAxis", "gather / gatherND / gatherAlongAxis"),
            row("scatter / scatterND / scatterAlongAxis", "scatter / scatterND / scatterAlongAxis", 4, "mode div on integer data is refused"),
            row("oneHot", "oneHot", 5),
            row("range1d / fill", "rangeStatic / fillStatic"),
            row("topk / argsort", "topK / argSort (argSort: spec 5)"),
            row("cumsum", "cumSum", 5),
            row("bandPart", "matrixBandPart"),
            row("reverse / reverseSequence", "reverse / reverseSeq"),
            row("slidingWindows", "slidingWindows"),
            row("embedding", "expandDims + embeddingND"),
            row("pad (constant)", "constantPad"),
            row("conv2d / deconv2d / conv1d / deconv1d / pool1d / pool2d / globalPool2d / batchNorm / prelu / pad / crop / upsample2d / "
                + "spaceToDepth / depthToSpace / instanceNorm / localResponseNorm",
                "the classic layer (convolution, pooling, batchnorm, activation PReLU, padding, crop, upsample, reorganizeData, lrn, …) "
                + "between transpose / reshapeStatic to NCHW and back", 4, "as in classic networks on the NHWC view of IR ranks 2–4"),
            row("einsum (one or two operands, no repeated label in an operand)", "transpose / reshapeStatic / reduceSum + batchedMatmul", 4,
                "labels grouped into batch, contracted and free axes (RankNEinsumExport.swift)"),
            row("recurrent / sequenceMask / applyMask / conv3d / pool3d / deconv3d / resize / nonMaximumSuppression", "error", 4,
                "not written in rank-N networks (recurrent ones are written by the classic writer)"),
        ]
    }()
}
