// cropResize (NeuralNetwork.proto CropResizeLayerParams): features [1, B, C, H, W], boxes
// [N, 1, 4, 1, 1] (every box from every batch entry → [N, B, C, Ho, Wo]) or [N, 1, 5, 1, 1]
// (first value: the batch entry → [N, 1, C, Ho, Wo]).
//
// The boxes are run-time values, so the sampling grid is computed in the graph: each box gives
// [h0, w0, h1, w1] (per BoxCoordinatesMode; normalized coordinates times H − 1, W − 1; times
// spatialScale when set), the grid is linspace(h0, h1, Ho) × linspace(w0, w1, Wo) (STRICT and
// ALIGN_ENDPOINTS modes; ALIGN_ENDPOINTS takes the box centre when the size is 1) clamped to the
// image, and bilinear sampling is two batched matmuls by the interpolation matrices
// A[n, i, y] = max(0, 1 − |g[n, i] − y|) (the tent form of linear interpolation).
//
// `padValue` (MIL iOS16+ crop_resize `pad_value`, TensorFlow crop_and_resize's
// extrapolation_value): an output point whose unclamped grid row is outside [0, H − 1] or whose
// column is outside [0, W − 1] takes `padValue` instead of the clamped sample.
import MLGraph

extension LayerImporter {
    func cropResize(_ p: Spec.CropResizeLayerParams, _ ins: [String], layer: Spec.NeuralNetworkLayer, padValue: Float? = nil) throws -> [String] {
        let name = layer.name, out = layer.output.first ?? name
        guard ins.count == 2 else { throw LayerImportFailure("cropResize takes 2 inputs (features, boxes), found \(ins.count)") }
        let fs = b.shape(ins[0]), bs = b.shape(ins[1])
        guard fs.count == 5, fs[0] == 1, fs.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("cropResize features must be [1, B, C, H, W], found \(fs)") }
        guard bs.count == 5, bs[1] == 1, bs[2] == 4 || bs[2] == 5, bs[3] == 1, bs[4] == 1, bs[0] > 0 else {
            throw LayerImportFailure("cropResize boxes must be [N, 1, 4, 1, 1] or [N, 1, 5, 1, 1], found \(bs)")
        }
        let (batch, c, h, w, n, k) = (fs[1], fs[2], fs[3], fs[4], bs[0], bs[2])
        let size = p.targetSize.isEmpty ? [1, 1] : try Checked.ints(p.targetSize, "targetSize", in: 1...Node.maxCountAttribute)
        guard size.count == 2 else { throw LayerImportFailure("targetSize \(p.targetSize) must be [height, width]") }
        let method = p.mode?.samplingMethod ?? .strictAlignEndpointsMode
        guard method == .strictAlignEndpointsMode || method == .alignEndpointsMode else {
            throw LayerImportFailure("cropResize with sampling mode \(method.rawValue) (UPSAMPLE / ROI_ALIGN) is not imported: its grid inside a run-time box is not defined by the proto beyond the endpoint modes")
        }
        func emit(_ suffix: String, _ op: Op, _ xs: [String], weights: [String: ConstantTensor] = [:]) throws -> String {
            try b.emit("\(name)__\(suffix)", op, xs, weights: weights)
        }
        func col(_ t: String, _ i: Int) throws -> String {
            try emit("col\(i)", .sliceByIndex(SliceByIndexAttributes(begin: [0, i], end: [0, i + 1], stride: [1, 1],
                                                                     beginMask: [true, false], endMask: [true, false])), [t])
        }
        func linear(_ t: String, _ a: Float, _ bb: Float, _ s: String) throws -> String { try emit(s, .activation(.linear(alpha: a, beta: bb)), [t]) }
        let rows = try emit("rows", .reshapeND(shape: [n, k]), [ins[1]])
        let off = k == 5 ? 1 : 0
        let cs = try (0..<4).map { try col(rows, $0 + off) }
        var h0: String, h1: String, w0: String, w1: String
        switch p.boxIndicesMode?.boxMode ?? .cornersHeightFirst {
        case .cornersHeightFirst: (h0, w0, h1, w1) = (cs[0], cs[1], cs[2], cs[3])
        case .cornersWidthFirst: (w0, h0, w1, h1) = (cs[0], cs[1], cs[2], cs[3])
        case let m:
            let hf = m == .centerSizeHeightFirst
            let (hc, wc, hs, ws) = hf ? (cs[0], cs[1], cs[2], cs[3]) : (cs[1], cs[0], cs[3], cs[2])
            guard m == .centerSizeHeightFirst || m == .centerSizeWidthFirst else { throw LayerImportFailure("box coordinates mode \(m.rawValue) is unknown") }
            let hh = try linear(hs, 0.5, 0, "half_h"), hw = try linear(ws, 0.5, 0, "half_w")
            h0 = try emit("h0", .binary(.sub), [hc, hh]); h1 = try emit("h1", .binary(.add), [hc, hh])
            w0 = try emit("w0", .binary(.sub), [wc, hw]); w1 = try emit("w1", .binary(.add), [wc, hw])
        }
        let scale = p.spatialScale == 0 ? Float(1) : p.spatialScale
        let fh = (p.normalizedCoordinates ? Float(h - 1) : 1) * scale, fw = (p.normalizedCoordinates ? Float(w - 1) : 1) * scale
        if fh != 1 { h0 = try linear(h0, fh, 0, "h0_px"); h1 = try linear(h1, fh, 0, "h1_px") }
        if fw != 1 { w0 = try linear(w0, fw, 0, "w0_px"); w1 = try linear(w1, fw, 0, "w1_px") }
        /// Per axis with `padValue`: bool [N, S] whether the unclamped grid point is inside the image.
        var inside: [String] = []
        /// A [N, S, X] interpolation matrix for the grid linspace(lo, hi, S) clamped to [0, X − 1].
        func matrix(_ lo: String, _ hi: String, samples s: Int, x: Int, _ tag: String) throws -> String {
            let t: [Float] = s == 1 ? [method == .alignEndpointsMode ? 0.5 : 0] : (0..<s).map { Float($0) / Float(s - 1) }
            let span = try emit(tag + "_span", .binary(.sub), [hi, lo])
            let steps = try emit(tag + "_steps", .binary(.mul), [span], weights: ["y": ConstantTensor(shape: [1, s], floats: t)])
            var g = try emit(tag + "_grid", .binary(.add), [steps, lo])
            let grid = g
            g = try emit(tag + "_clamped", .clip(alpha: 0, beta: Float(x - 1)), [g])
            if padValue != nil { inside.append(try emit(tag + "_inside", .compare(.equal), [grid, g])) }
            g = try emit(tag + "_column", .reshapeND(shape: [n, s, 1]), [g])
            let d = try emit(tag + "_offset", .binary(.sub), [g], weights: ["y": ConstantTensor(shape: [1, 1, x], floats: (0..<x).map(Float.init))])
            let a = try emit(tag + "_distance", .unary(UnaryAttributes(.abs)), [d])
            let tent = try linear(a, -1, 1, tag + "_tent")
            let r = try emit(tag + "_weights", .activation(.relu), [tent])
            return try emit(tag + "_matrix", .reshapeND(shape: [n, 1, s, x]), [r])
        }
        let ah = try matrix(h0, h1, samples: size[0], x: h, "h")
        let aw = try matrix(w0, w1, samples: size[1], x: w, "w")
        let x: String
        if k == 5 {
            let bidx = try emit("batch_index", .reshapeND(shape: [n]), [try col(rows, 0)])
            let idx = try emit("batch_index_int", .cast(to: .int32), [bidx])
            let feats = try emit("features", .reshapeND(shape: [batch, c, h, w]), [ins[0]])
            x = try emit("per_box", .gather(axis: 0), [feats, idx])  // [N, C, H, W]
        } else {
            x = try emit("features", .reshapeND(shape: [1, batch * c, h, w]), [ins[0]])
        }
        let rowsSampled = try emit("sample_h", .matmul(MatMulAttributes()), [ah, x])  // [N, ·, Ho, W]
        var both = try emit("sample_w", .matmul(MatMulAttributes(transposeY: true)), [rowsSampled, aw])  // [N, ·, Ho, Wo]
        if let pad = padValue, inside.count == 2 {
            let rowsIn = try emit("h_inside_column", .reshapeND(shape: [n, 1, size[0], 1]), [inside[0]])
            let colsIn = try emit("w_inside_row", .reshapeND(shape: [n, 1, 1, size[1]]), [inside[1]])
            let keep = try emit("inside", .logical(.and), [rowsIn, colsIn])  // [N, 1, Ho, Wo]
            let padT = try b.emit(b.freshNodeName("\(name)__pad_value"), .constant, [], weights: ["value": ConstantTensor(shape: [1], floats: [pad])])
            both = try emit("padded", .select, [keep, both, padT])
        }
        return [try b.emit(name, .reshapeND(shape: [n, k == 5 ? 1 : batch, c, size[0], size[1]]), [both], output: out)]
    }
}
