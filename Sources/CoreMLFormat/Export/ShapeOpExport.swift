// Core ML classic-layer lowering of the shape and data-movement ops (issue 9), or an explicit,
// reasoned refusal. See `CoreMLExporter.layerTable`.
import MLGraph

extension ExportWriter {
    mutating func lowerShapeOp(_ node: Node, _ ins: [TensorType], _ inBlobs: [String], _ out: String) {
        let ndLater = "Rank-N (NeuralNetwork v2, spec 4) layers are owned by a later issue; restructure the graph or keep the model in .mlbundle."
        switch node.op {
        case let .matmul(a):
            lowerMatMul(node, a, ins, inBlobs, out)
        case .constant:
            guard let v = node.weights["value"], let view = Self.view(v.shape), view[0] == 1, let chw = Self.chw(v.shape) else {
                fail(node, "constant of shape \(node.weights["value"].map { formatShape($0.shape) } ?? "?"): loadConstant holds one [C, H, W] "
                     + "(IR (1, C) or (1, H, W, C))", "Give the constant a batch axis of 1 and rank 2 or 4.")
                return
            }
            let (c, h, w) = (chw[0], chw[1], chw[2])
            let hwc = v.floats()
            var values = [Float](repeating: 0, count: c * h * w)
            for ci in 0..<c { for y in 0..<h { for x in 0..<w { values[(ci * h + y) * w + x] = hwc[(y * w + x) * c + ci] } } }
            emit(node.name, [], [out], .loadConstant(Spec.LoadConstantLayerParams(
                shape: [UInt64(c), UInt64(h), UInt64(w)], data: Spec.WeightParams(values))))
        case let .spaceToDepth(bs), let .depthToSpace(bs):
            guard ins.first?.rank == 4 else { fail(node, "\(node.op.name) on a non-NHWC tensor", "Use a rank-4 (N, H, W, C) input."); return }
            // Core ML SPACE_TO_DEPTH / DEPTH_TO_SPACE use TensorFlow's DCR order, as the IR (PIXEL_SHUFFLE is CRD).
            let isS2D: Bool
            if case .spaceToDepth = node.op { isS2D = true } else { isS2D = false }
            emit(node.name, inBlobs, [out], .reorganizeData(Spec.ReorganizeDataLayerParams(
                mode: isS2D ? .spaceToDepth : .depthToSpace, blockSize: UInt64(bs))))
        case .resize:
            fail(node, "resize has no general classic-layer lowering (upsample needs integer factors; resizeBilinear has no nearest mode "
                 + "and no half-pixel mode below spec 5)", "Use upsample2d for integer factors, or keep the model in .mlbundle. " + ndLater)
        case .squeeze, .expandDims:
            fail(node, "\(node.op.name) changes the rank; classic layers see every blob as [C, H, W]", "Use reshape to rank 2, 3 or 4. " + ndLater)
        case .stack, .split, .sliceByIndex, .sliceBySize, .tile, .bandPart, .cumsum:
            fail(node, "\(node.op.name) (MIL \(node.op.definition.milOps.joined(separator: "/"))) has no NeuralNetwork v1 layer "
                 + "(its layer — stack, splitND, sliceStatic, tile, matrixBandPart, cumSum — needs spec 4 and the rank-N layout)", ndLater)
        default:
            fail(node, "\(node.op.name) is not a shape op", "Report this as a bug.")
        }
    }

    /// matmul with a constant rank-2 second operand on a rank-2/3/4 x (no transposeX) is a dense
    /// layer (innerProduct or 1×1 convolution); anything else is refused: NeuralNetwork v1 has no
    /// general matrix product (batchedMatmul needs spec 4 and the rank-N layout).
    mutating func lowerMatMul(_ node: Node, _ a: MatMulAttributes, _ ins: [TensorType], _ inBlobs: [String], _ out: String) {
        guard ins.count == 1, let y = node.weights["y"], y.shape.count == 2, !a.transposeX, (2...4).contains(ins[0].rank) else {
            fail(node, "matmul of \(ins.map { formatShape($0.shape) }.joined(separator: " and "))"
                 + (node.weights["y"].map { " by a constant \(formatShape($0.shape))" } ?? "")
                 + ": NeuralNetwork v1 has no general matrix product (batchedMatmul needs spec 4 and the rank-N layout, owned by a later issue)",
                 "Only x (rank 2–4, not transposed) times a constant rank-2 matrix is written (as innerProduct / 1×1 convolution).")
            return
        }
        let k = y.shape[a.transposeY ? 1 : 0], n = y.shape[a.transposeY ? 0 : 1]
        var weight = y
        if !a.transposeY {  // innerProduct stores [Cout, Cin] = yᵀ
            let v = y.floats()
            var t = [Float](repeating: 0, count: v.count)
            for i in 0..<k { for j in 0..<n { t[j * k + i] = v[i * n + j] } }
            weight = ConstantTensor(shape: [n, k], floats: t)
            if y.encoding != .float32 { notes.append("node '\(node.name)': matmul weight transposed and written as float32") }
        }
        var dense = node
        dense.op = .dense(DenseAttributes(outputChannels: n))
        dense.weights = ["weight": weight]
        lowerDense(dense, DenseAttributes(outputChannels: n), ins[0], inBlobs[0], out)
    }
}
