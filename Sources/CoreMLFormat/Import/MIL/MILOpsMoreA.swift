// More MIL ops (issue 11, group A): gru and rnn (iOS15 / iOS17 recurrent.py) onto the IR's
// recurrent op; l2_pool (pool.py) as √(depthwise sum of squares); iOS17 `resize` and rank-N
// `resize_bilinear` (OFFSET_CORNERS included, image_resizing.py) on the IR's resize or on constant
// interpolation matrices; classify (classify.py) into the IR's classifier description;
// crop_resize (iOS16 pad_value included) through the NeuralNetwork importer's cropResize; resample
// (bilinear or nearest; constant, border, reflection or symmetric padding) and affine as sampling
// at run-time coordinates on tent-weight matrices.
//
// Recurrent layouts: MIL's x is [T, B, I], the IR's [B, T, I]. MIL gru stacks its gates r, o, z
// (coremltools' gru definition and its NeuralNetwork mapping) and applies the reset gate to the
// hidden state before the recurrent matmul (as Core ML's GRULayerParams: c = h ⊙ r,
// o = act(W_o x + R_o c + b_o)), so the IR gets Keras' order z, r, h with `resetAfter` false. A
// `reverse` direction processes the sequence from the end and keeps the outputs in processing
// order (coremltools' NumPy reference), which is the IR's `goBackwards`.
import MLGraph

enum MILMoreAOps {
    /// The most values of a constant these mappers build at import (interpolation matrices,
    /// affine grids): 2^26 floats (256 MB); larger sizes from a file are refused.
    static let maxConstantElements = 1 << 26

    /// Rows of a [3H, …] (or [3H]) GRU weight reordered from MIL's r, o, z to the IR's z, r, o.
    static func reorderGRU(_ k: MILConst, hidden h: Int, _ what: String) throws -> ConstantTensor {
        guard let rows = k.shape.first, rows == 3 * h, k.strings == nil else {
            throw LayerImportFailure("has a GRU \(what) of shape \(k.shape); expected \(3 * h) rows (gates r, o, z)")
        }
        let v = k.floats()
        guard v.count % rows == 0 else { throw LayerImportFailure("has a GRU \(what) of \(v.count) values for shape \(k.shape)") }
        let per = v.count / rows * h
        var out: [Float] = []
        out.reserveCapacity(v.count)
        for g in [2, 0, 1] { out += v[(g * per)..<((g + 1) * per)] }
        return ConstantTensor(shape: k.shape, floats: out)
    }

    /// MIL gru (gates = 3) or rnn (gates = 1).
    static func recurrent(_ c: MILOpContext, kind: RecurrentKind) throws -> [MILValue] {
        let x = try c.tensor("x")
        let xs = c.shape(x)
        guard xs.count == 3, xs.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("has an input of shape \(xs); expected [T, B, I]") }
        let direction = try c.string("direction", default: "forward")
        guard direction == "forward" || direction == "reverse" else {
            throw LayerImportFailure("runs in direction '\(direction)'; MIL \(c.op.type) takes forward or reverse")
        }
        let wih = try c.requiredConstant("weight_ih"), whh = try c.requiredConstant("weight_hh")
        guard whh.shape.count == 2, wih.shape.count == 2 else {
            throw LayerImportFailure("has weight_ih of shape \(wih.shape) and weight_hh of shape \(whh.shape); expected rank-2 matrices")
        }
        let h = whh.shape[1], gates = kind.gateCount
        guard h > 0, whh.shape[0] == gates * h, wih.shape[0] == gates * h, wih.shape[1] == xs[2] else {
            throw LayerImportFailure("has weight_ih \(wih.shape) and weight_hh \(whh.shape) for input size \(xs[2]); expected [\(gates)·H, \(xs[2])] and [\(gates)·H, H]")
        }
        var weights: [String: ConstantTensor]
        if kind == .gru {
            weights = ["kernel": try reorderGRU(wih, hidden: h, "weight_ih"), "recurrentKernel": try reorderGRU(whh, hidden: h, "weight_hh")]
            if let bias = try c.constant("bias") {
                guard bias.elementCount == 3 * h else { throw LayerImportFailure("has a bias of shape \(bias.shape); expected [\(3 * h)]") }
                weights["bias"] = try reorderGRU(bias, hidden: h, "bias")
            }
        } else {
            weights = ["kernel": try wih.constantTensor(), "recurrentKernel": try whh.constantTensor()]
            if let bias = try c.constant("bias") { weights["bias"] = try bias.constantTensor(shape: [h]) }
        }
        let act = try MILRecurrentOps.activation(try c.string("activation", default: "tanh"))
        let gateAct = kind == .gru ? try MILRecurrentOps.activation(try c.string("recurrent_activation", default: "sigmoid")) : .sigmoid
        let sequence = try c.bool("output_sequence", default: false)
        let attrs = RecurrentAttributes(kind: kind, units: h, activation: act, recurrentActivation: gateAct, returnSequences: sequence,
                                        returnState: true, goBackwards: direction == "reverse", resetAfter: false, initialStates: true)
        let h0 = try c.tensor("initial_h")
        guard c.shape(h0) == [xs[1], h] else { throw LayerImportFailure("has initial_h of shape \(c.shape(h0)); expected [\(xs[1]), \(h)]") }
        let xb = try c.helper("batch_first", .transpose(perm: [1, 0, 2]), [x])
        let outs = try c.b.emitMulti(c.name + "__" + c.op.type, .recurrent(attrs), [xb, h0],
                                     outputs: [c.name + "__y", c.name + "__h"], weights: weights)
        let y = sequence ? try c.emit(.transpose(perm: [1, 0, 2]), [outs[0]], output: 0) : try c.emit(.expandDims(axes: [0]), [outs[0]], output: 0)
        return [y, try c.emit(.identity, [outs[1]], output: 1)]
    }

    /// MIL l2_pool over 1 or 2 spatial axes: √(Σ x² over each window), padding contributing zeros.
    static func l2Pool(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let xs = c.shape(x)
        let d = xs.count - 2
        guard d == 1 || d == 2, xs.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("pools an input of shape \(xs); MIL l2_pool takes [N, C, W] or [N, C, H, W]") }
        guard let kernel = try c.ints("kernel_sizes"), kernel.count == d, kernel.allSatisfy({ $0 > 0 }) else {
            throw LayerImportFailure("needs kernel_sizes of \(d) positive values")
        }
        let strides = try c.ints("strides") ?? [Int](repeating: 1, count: d)
        guard strides.count == d, strides.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("has strides \(strides); expected \(d) positive values") }
        if try c.bool("ceil_mode", default: false) { throw LayerImportFailure("uses ceil_mode, which mlconv's l2_pool does not support") }
        let pad = try MILConvNormOps.padding(c, spatial: d, input: Array(xs[2...]), kernel: kernel, strides: strides,
                                             dilations: [Int](repeating: 1, count: d))
        let ch = xs[1]
        let window = try Checked.product(kernel, "l2_pool kernel")
        let ones = ConstantTensor(shape: [ch, 1] + kernel, floats: [Float](repeating: 1, count: try Checked.product([ch, window], "l2_pool weights")))
        let sq = try c.helper("square", .unary(UnaryAttributes(.square)), [try c.toChannelsLast(x)])
        let op: Op
        if d == 2 {
            op = .conv2d(Conv2DAttributes(kernel: kernel, strides: strides, padding: pad.paddingMode2D, groups: ch, outputChannels: ch))
        } else {
            op = .conv1d(ConvNDAttributes(kernel: kernel, strides: strides, padding: pad, groups: ch, outputChannels: ch))
        }
        let sum = try c.helper("window_sum", op, [sq], weights: ["weight": ones])
        let root = try c.helper("sqrt", .unary(UnaryAttributes(.sqrt)), [sum])
        return [try c.fromChannelsLast(root)]
    }

    // MARK: Resizing

    /// MIL sampling_mode names → where output index i samples the input (nil: OFFSET_CORNERS,
    /// which the IR's resize has no mode for; it runs on interpolation matrices).
    static func samplingMode(_ name: String) throws -> ResizeSamplingMode? {
        if name == "OFFSET_CORNERS" { return nil }
        return try MILMoreOps.samplingMode(name)
    }

    /// The OFFSET_CORNERS grid point of output i (image_resizing.py: δ = max(1, Xin − 1)/Xout,
    /// g = 0.5·δ + i·δ, clamped to [0, Xin − 1]).
    static func offsetCornersCoordinate(_ i: Int, inSize: Int, outSize: Int) -> Double {
        let delta = Double(max(1, inSize - 1)) / Double(outSize)
        return min(Double(inSize - 1), max(0, 0.5 * delta + Double(i) * delta))
    }

    /// The [outSize, inSize] linear interpolation matrix of a grid (rows sum to 1).
    static func interpolationMatrix(inSize: Int, outSize: Int, grid: (Int) -> Double) -> [Float] {
        var m = [Float](repeating: 0, count: outSize * inSize)
        for i in 0..<outSize {
            let g = grid(i)
            let lo = Int(g.rounded(.down)), hi = min(lo + 1, inSize - 1)
            let f = g - Double(lo)
            m[i * inSize + lo] += Float(1 - f)
            m[i * inSize + hi] += Float(f)
        }
        return m
    }

    /// Resizes the last two axes of `x` (rank ≥ 2) to [outH, outW]; output `i` of the op.
    static func resizeLastTwo(_ c: MILOpContext, _ x: String, method: ResizeMethod, mode: ResizeSamplingMode?, outH: Int, outW: Int) throws -> MILValue {
        let xs = c.shape(x)
        guard xs.count >= 2, xs.allSatisfy({ $0 > 0 }) else { throw LayerImportFailure("resizes an input of shape \(xs); expected rank 2 or more, known at import") }
        guard c.type(x)?.elementType == .float32 else { throw LayerImportFailure("resizes a \(c.type(x)?.elementType.rawValue ?? "?") tensor; mlconv resizes floats") }
        guard (1...Node.maxCountAttribute).contains(outH), (1...Node.maxCountAttribute).contains(outW) else {
            throw LayerImportFailure("has target size \(outH)×\(outW); expected positive sizes")
        }
        let (h, w) = (xs[xs.count - 2], xs[xs.count - 1])
        let lead = Array(xs.dropLast(2))
        guard let mode else {
            // OFFSET_CORNERS: y = A_h · x · A_wᵀ with constant interpolation matrices.
            guard method == .bilinear else { throw LayerImportFailure("uses nearest-neighbour resizing with OFFSET_CORNERS, which mlconv does not support") }
            guard try Checked.product([outH, h], "interpolation matrix") <= maxConstantElements,
                  try Checked.product([outW, w], "interpolation matrix") <= maxConstantElements else {
                throw LayerImportFailure("resizes \(h)×\(w) to \(outH)×\(outW): its interpolation matrices exceed \(maxConstantElements) values")
            }
            let aw = interpolationMatrix(inSize: w, outSize: outW) { offsetCornersCoordinate($0, inSize: w, outSize: outW) }
            let ah = interpolationMatrix(inSize: h, outSize: outH) { offsetCornersCoordinate($0, inSize: h, outSize: outH) }
            let awT = try c.b.emit(c.b.freshNodeName(c.name + "__width_matrix"), .constant, [], weights: ["value": ConstantTensor(shape: [outW, w], floats: aw)])
            let ahT = try c.b.emit(c.b.freshNodeName(c.name + "__height_matrix"), .constant, [], weights: ["value": ConstantTensor(shape: [outH, h], floats: ah)])
            let cols = try c.helper("resize_width", .matmul(MatMulAttributes(transposeY: true)), [x, awT])  // [..., H, W']
            let flat = try c.helper("as_matrices", .reshapeND(shape: [try Checked.product(lead, "resize batch"), h, outW]), [cols])
            let rows = try c.helper("resize_height", .matmul(MatMulAttributes()), [ahT, flat])  // [L, H', W']
            return try c.emit(.reshapeND(shape: lead + [outH, outW]), [rows])
        }
        let l = try Checked.product(lead, "resize batch")
        let nhwc = try c.helper("as_nhwc", .reshapeND(shape: [l, h, w, 1]), [x])
        let y = try c.helper("resize", .resize(ResizeAttributes(method: method, samplingMode: mode, size: [outH, outW])), [nhwc])
        return try c.emit(.reshapeND(shape: lead + [outH, outW]), [y])
    }

    /// MIL resize_bilinear on any rank ≥ 3 (every sampling mode, OFFSET_CORNERS included).
    static func resizeBilinear(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        guard c.rank(x) >= 3 else { throw LayerImportFailure("resizes a rank-\(c.rank(x)) input; MIL resize_bilinear takes rank 3 or more") }
        let mode = try samplingMode(try c.string("sampling_mode", default: "DEFAULT"))
        return [try resizeLastTwo(c, x, method: .bilinear, mode: mode, outH: try c.int("target_size_height", default: 1),
                                  outW: try c.int("target_size_width", default: 1))]
    }

    /// iOS17 resize: the last `resized_dims` (1 or 2) axes take their sizes from the end of
    /// `shape` (0 keeps the input's size); `shape` must be known at import.
    static func resize(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        let xs = c.shape(x)
        guard let shape = try c.ints("shape") else { throw LayerImportFailure("needs shape known at import") }
        let k = try c.int("resized_dims")
        guard (1...2).contains(k), k <= shape.count, shape.count <= xs.count, shape.allSatisfy({ $0 >= 0 }) else {
            throw LayerImportFailure("has resized_dims \(k) and shape \(shape) for a rank-\(xs.count) input; mlconv resizes the last 1 or 2 axes")
        }
        var target: [Int] = []
        for i in 0..<k {
            let s = shape[shape.count - k + i]
            target.append(s == 0 ? xs[xs.count - k + i] : s)
        }
        let interp = try c.string("interpolation_mode", default: "LINEAR")
        let method: ResizeMethod
        switch interp {
        case "LINEAR": method = .bilinear
        case "NEAREST_NEIGHBOR": method = .nearest
        default: throw LayerImportFailure("has interpolation_mode '\(interp)'; expected LINEAR or NEAREST_NEIGHBOR")
        }
        let modeName = try c.string("sampling_mode", default: "DEFAULT")
        let mode = try samplingMode(modeName)
        if method == .nearest, modeName != "DEFAULT" {
            throw LayerImportFailure("resizes NEAREST_NEIGHBOR with sampling_mode \(modeName); mlconv imports nearest resize with DEFAULT sampling")
        }
        let (outH, outW) = k == 2 ? (target[0], target[1]) : (xs.count >= 2 ? xs[xs.count - 2] : 1, target[0])
        if xs.count == 1 {
            let x2 = try c.helper("as_row", .reshapeND(shape: [1, xs[0]]), [x])
            let y = try resizeLastTwo(c, x2, method: method, mode: mode, outH: 1, outW: outW)
            guard case let .tensor(t) = y else { return [y] }
            return [.tensor(try c.helper("as_vector", .reshapeND(shape: [outW]), [t]))]
        }
        return [try resizeLastTwo(c, x, method: method, mode: mode, outH: outH, outW: outW)]
    }

    // MARK: classify

    /// classify's `classes`: an immediate list of string / int64 scalars, or a rank-1 constant.
    static func classes(_ c: MILOpContext) throws -> (labels: [String], int64: Bool) {
        if let arg = c.op.inputs["classes"], arg.arguments.count == 1, case let .value(v)? = arg.arguments[0].binding,
           case let .immediateValue(iv)? = v.value, case let .list(l)? = iv.value {
            var labels: [String] = []
            var ints = 0
            for item in l.values {
                let k = try MILConst.decode(item, blobs: c.importer.blobs)
                guard k.elementCount == 1 else { throw LayerImportFailure("has a class of shape \(k.shape); expected scalars") }
                if let s = k.strings { labels.append(s[0]); continue }
                guard k.dataType == .int64 || k.dataType == .int32, let d = k.doubles().first, let i = Int64(exactly: d) else {
                    throw LayerImportFailure("has a class of type \(MILTypes.name(k.dataType)); MIL classify takes str or int64 classes")
                }
                labels.append(String(i)); ints += 1
            }
            guard ints == 0 || ints == labels.count else { throw LayerImportFailure("mixes string and integer classes") }
            return (labels, ints > 0)
        }
        let k = try c.requiredConstant("classes")
        if let s = k.strings { return (s, false) }
        let v = try k.doubles().map { d -> String in
            guard let i = Int64(exactly: d) else { throw LayerImportFailure("has class \(d); expected integers or strings") }
            return String(i)
        }
        return (v, true)
    }

    /// MIL classify: the probabilities tensor (flattened) becomes the probabilities output; the
    /// label output is not an IR tensor (`MILGraphImporter.classifier` records both names, and
    /// `run` fills `ModelDescription.classLabels` / `probabilitiesOutput` as the NeuralNetwork
    /// importer does for classifiers).
    static func classify(_ c: MILOpContext) throws -> [MILValue] {
        guard c.op.outputs.count == 2 else { throw LayerImportFailure("has \(c.op.outputs.count) outputs; MIL classify has a label and a probability dictionary") }
        guard c.importer.classifier == nil else { throw LayerImportFailure("is a second classify op; a program has at most one") }
        let p = try c.tensor("probabilities")
        guard c.type(p)?.elementType == .float32 else { throw LayerImportFailure("has probabilities that are not floats") }
        let n = c.shape(p).reduce(1, *)
        let (labels, int64) = try classes(c)
        guard labels.count == n, n > 0 else { throw LayerImportFailure("has \(labels.count) classes for \(n) probabilities") }
        let probs = try c.emit(.reshapeND(shape: [1, n]), [p], output: 1)
        c.importer.classifier = MILClassifier(labelOutput: c.outputName(0), probabilitiesOutput: c.outputName(1), labels: labels, int64Labels: int64)
        return [.none, probs]
    }

    // MARK: crop_resize, resample, affine

    /// MIL crop_resize (STRICT_ALIGN_CORNERS and ALIGN_CORNERS, optional pad_value): x [B, C, H, W] seen as the
    /// NeuralNetwork layer's features [1, B, C, H, W], roi [N, 1, 4|5, 1, 1] as its boxes; the
    /// NeuralNetwork importer's cropResize (Layers/CropResizeImport.swift) builds the grid.
    /// The iOS17 form binds `boxes` [N, 4] and optional `box_indices` [N] (image of each box;
    /// 0, 1, …, N − 1 when absent) instead of `roi`, and its output [N, C, h, w] has no size-1 axis 1: the
    /// indices become roi's first column ([N, 1, 5, 1, 1]) and axis 1 is squeezed afterwards.
    static func cropResize(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        guard c.rank(x) == 4 else { throw LayerImportFailure("crops a rank-\(c.rank(x)) input; MIL crop_resize takes [B, C, H, W]") }
        let iOS17Form = !c.has("roi") && c.has("boxes")
        let roi: String
        if iOS17Form {
            let boxes = try c.tensor("boxes")
            let bs = c.shape(boxes)
            guard bs.count == 2, bs[1] == 4, bs[0] > 0 else {
                throw LayerImportFailure("has boxes of shape \(bs); expected [N, 4] with N known at import")
            }
            let n = bs[0]
            let rows: String
            if c.has("box_indices") {
                let indices = try c.tensor("box_indices")
                guard c.shape(indices) == [n] else {
                    throw LayerImportFailure("has box_indices of shape \(c.shape(indices)); expected [\(n)], one per box")
                }
                let asFloat = try c.helper("box_indices_float", .cast(to: .float32), [indices])
                let column = try c.helper("box_indices_column", .reshapeND(shape: [n, 1]), [asFloat])
                rows = try c.helper("roi_rows", .concat(axis: 1), [column, boxes])
            } else {
                // Default indices 0, 1, …, N − 1 (box i crops image i), so N may not exceed B.
                let b = c.shape(x)[0]
                guard n <= b else {
                    throw LayerImportFailure("has \(n) boxes and no box_indices for a batch of \(b); the default indices 0…N−1 need N ≤ B")
                }
                let column: [Float] = (0..<n).flatMap { i -> [Float] in [Float(i), 0, 0, 0, 0] }
                let padded = try c.helper("roi_rows_padded", .pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 0]], value: 0)), [boxes])
                rows = try c.helper("roi_rows", .binary(.add), [padded], weights: ["y": ConstantTensor(shape: [n, 5], floats: column)])
            }
            roi = try c.helper("roi", .reshapeND(shape: [n, 1, 5, 1, 1]), [rows])
        } else {
            roi = try c.tensor("roi")
        }
        let modeName = try c.string("sampling_mode", default: "DEFAULT")
        let method: Spec.SamplingMode.Method
        switch modeName {
        case "STRICT_ALIGN_CORNERS": method = .strictAlignEndpointsMode
        case "ALIGN_CORNERS": method = .alignEndpointsMode
        default:
            throw LayerImportFailure("samples its boxes with sampling_mode \(modeName); mlconv imports crop_resize with STRICT_ALIGN_CORNERS or ALIGN_CORNERS")
        }
        let boxName = try c.string("box_coordinate_mode", default: "CORNERS_HEIGHT_FIRST")
        let box: Spec.BoxCoordinatesMode.Coordinates
        switch boxName {
        case "CORNERS_HEIGHT_FIRST": box = .cornersHeightFirst
        case "CORNERS_WIDTH_FIRST": box = .cornersWidthFirst
        case "CENTER_SIZE_HEIGHT_FIRST": box = .centerSizeHeightFirst
        case "CENTER_SIZE_WIDTH_FIRST": box = .centerSizeWidthFirst
        default: throw LayerImportFailure("has box_coordinate_mode '\(boxName)'")
        }
        // iOS16+ pad_value: grid points outside the image take it (tf.image.crop_and_resize's
        // extrapolation_value; coremltools' iOS16 crop_resize test), instead of the clamped sample.
        // The iOS17 form always pads, with 0 by default (its definition's default input).
        var padValue: Float? = iOS17Form ? 0 : nil
        if c.has("pad_value") {
            let v = try c.float("pad_value")
            guard v.isFinite else { throw LayerImportFailure("has pad_value \(v); expected a finite number") }
            padValue = v
        }
        let th = try c.int("target_height", default: 1), tw = try c.int("target_width", default: 1)
        guard th > 0, tw > 0 else { throw LayerImportFailure("has target size \(th)×\(tw); expected positive sizes") }
        let scale = try c.float("spatial_scale", default: 1)
        guard scale.isFinite, scale > 0 else { throw LayerImportFailure("has spatial_scale \(scale); expected a positive number") }
        let params = Spec.CropResizeLayerParams(targetSize: [UInt64(th), UInt64(tw)], normalizedCoordinates: try c.bool("normalized_coordinates", default: false),
                                                mode: Spec.SamplingMode(samplingMethod: method), boxIndicesMode: Spec.BoxCoordinatesMode(boxMode: box),
                                                spatialScale: scale)
        let features = try c.helper("features", .expandDims(axes: [0]), [x])
        let cropName = iOS17Form ? c.outputName(0) + "_crop" : c.outputName(0)
        let layer = Spec.NeuralNetworkLayer(name: c.name, input: [], output: [cropName], layer: .other(.cropResize(params)))
        let nn = LayerImporter(builder: c.b, layers: [], consumers: [:], description: Spec.ModelDescription())
        let outs = try nn.cropResize(params, [features, roi], layer: layer, padValue: padValue)
        guard let y = outs.first else { throw LayerImportFailure("produced no output") }
        return iOS17Form ? [try c.emit(.squeeze(axes: [1]), [y])] : [.tensor(y)]
    }

    /// Bilinear sampling of x [B, C, H, W] at pixel coordinates gx, gy [D, P, 1] (D = B or 1;
    /// P output points): out [B, C, P] = Σ_y Σ_x relu(1 − |gy − y|)·relu(1 − |gx − x|)·x[b, c, y, x]
    /// (the tent form of linear interpolation; coordinates outside the image take `padValue` for
    /// the missing weight, as constant padding).
    static func sampleBilinear(_ c: MILOpContext, _ x: String, gx: String, gy: String, points p: Int, padValue: Float) throws -> String {
        let xs = c.shape(x)
        let (h, w) = (xs[2], xs[3])
        let d = c.shape(gx).first ?? 1
        func tent(_ g: String, size n: Int, _ tag: String) throws -> String {
            let offset = try c.helper(tag + "_offset", .binary(.sub), [g], weights: ["y": ConstantTensor(shape: [1, 1, n], floats: (0..<n).map(Float.init))])
            let dist = try c.helper(tag + "_distance", .unary(UnaryAttributes(.abs)), [offset])
            let t = try c.helper(tag + "_tent", .activation(.linear(alpha: -1, beta: 1)), [dist])
            let r = try c.helper(tag + "_weights", .activation(.relu), [t])
            return try c.helper(tag + "_matrix", .reshapeND(shape: [d, 1, p, n]), [r])  // [D, 1, P, n]
        }
        let wy = try tent(gy, size: h, "rows"), wx = try tent(gx, size: w, "cols")
        let rows = try c.helper("sample_rows", .matmul(MatMulAttributes()), [wy, x])  // [B, C, P, W]
        let prod = try c.helper("sample_cols", .binary(.mul), [rows, wx])
        var out = try c.helper("sample", .reduce(ReduceAttributes(function: .sum, axes: [3], keepDims: false)), [prod])  // [B, C, P]
        if padValue != 0 {
            // The weight that fell outside the image, times the padding value.
            let sy = try c.helper("rows_inside", .reduce(ReduceAttributes(function: .sum, axes: [3], keepDims: false)), [wy])  // [D, 1, P]
            let sx = try c.helper("cols_inside", .reduce(ReduceAttributes(function: .sum, axes: [3], keepDims: false)), [wx])
            let inside = try c.helper("inside", .binary(.mul), [sy, sx])
            let missing = try c.helper("outside", .activation(.linear(alpha: -padValue, beta: padValue)), [inside])
            out = try c.helper("padded", .binary(.add), [out, missing])
        }
        return out
    }

    /// How a sampling op reads points outside the image (MIL resample `padding_mode`; the
    /// examples of image_resizing.py): constant (`padding_value`), border (replicated edge),
    /// reflection (mirrored about the edge pixel: |1, 2, 3| → 2, 3, 2, 1, 2, 3, 2, 1) or
    /// symmetric (mirrored including the edge: |1, 2, 3| → 3, 2, 1, 1, 2, 3, 3, 2, 1).
    enum SamplePadding: String { case constant, border, reflection, symmetric }

    /// A normalized coordinate tensor mapped to pixels of an axis of `size` (MIL resample /
    /// affine coordinates_mode, align_corners as torch grid_sample), then folded into the image
    /// for border / reflection / symmetric padding and rounded to the nearest pixel (half to
    /// even, as torch grid_sample's nearest) when `nearest`.
    static func toPixels(_ c: MILOpContext, _ g: String, size n: Int, mode: String, alignCorners: Bool,
                         padding: SamplePadding = .constant, nearest: Bool = false, _ tag: String) throws -> String {
        let a: Float, b: Float
        switch (mode, alignCorners) {
        case ("unnormalized", _): (a, b) = (1, 0)
        case ("normalized_minus_one_to_one", true): (a, b) = (Float(n - 1) / 2, Float(n - 1) / 2)
        case ("normalized_minus_one_to_one", false): (a, b) = (Float(n) / 2, Float(n) / 2 - 0.5)
        case ("normalized_zero_to_one", true): (a, b) = (Float(n - 1), 0)
        case ("normalized_zero_to_one", false): (a, b) = (Float(n), -0.5)
        default: throw LayerImportFailure("has coordinates_mode '\(mode)'; expected unnormalized, normalized_minus_one_to_one or normalized_zero_to_one")
        }
        var t = g
        if a != 1 || b != 0 { t = try c.helper(tag + "_pixels", .activation(.linear(alpha: a, beta: b)), [g]) }
        // Reflection folds a coordinate into [lo, hi] with period 2·(hi − lo): u = mod(g − lo, 2L),
        // g′ = lo + L − |u − L|. Mirroring the padded pixels is mirroring the coordinate, as the
        // padded image is symmetric about lo and hi (about 0 and n − 1 for reflection, −½ and
        // n − ½ for symmetric, where the edge pixel repeats).
        func fold(lo: Float, hi: Float) throws {
            let span = hi - lo
            guard span > 0 else { return }
            let shifted = try c.helper(tag + "_shifted", .activation(.linear(alpha: 1, beta: -lo)), [t])
            let u = try c.helper(tag + "_period", .binary(.mod), [shifted], weights: ["y": ConstantTensor(shape: [1], floats: [2 * span])])
            let d = try c.helper(tag + "_from_middle", .activation(.linear(alpha: 1, beta: -span)), [u])
            let m = try c.helper(tag + "_mirror", .unary(UnaryAttributes(.abs)), [d])
            t = try c.helper(tag + "_folded", .activation(.linear(alpha: -1, beta: lo + span)), [m])
        }
        switch padding {
        case .constant, .border: break
        case .reflection: try fold(lo: 0, hi: Float(n - 1))
        case .symmetric: try fold(lo: -0.5, hi: Float(n) - 0.5)
        }
        if padding != .constant { t = try c.helper(tag + "_border", .clip(alpha: 0, beta: Float(n - 1)), [t]) }
        if nearest { t = try c.helper(tag + "_nearest", .unary(UnaryAttributes(.round)), [t]) }
        return t
    }

    /// sampling_mode, padding_mode and padding_value of resample / affine. `full`: nearest
    /// sampling and every padding mode (resample); else bilinear with constant padding (affine).
    static func samplingOptions(_ c: MILOpContext, full: Bool) throws -> (padding: SamplePadding, nearest: Bool, padValue: Float) {
        let sampling = try c.string("sampling_mode", default: "bilinear")
        guard sampling == "bilinear" || (full && sampling == "nearest") else {
            throw LayerImportFailure("has sampling_mode '\(sampling)'; mlconv imports \(full ? "bilinear and nearest" : "bilinear") sampling")
        }
        let name = try c.string("padding_mode", default: "constant")
        guard let padding = SamplePadding(rawValue: name), full || padding == .constant else {
            throw LayerImportFailure("has padding_mode '\(name)'; mlconv imports \(full ? "constant, border, reflection and symmetric" : "constant") padding")
        }
        let v = padding == .constant ? try c.float("padding_value", default: 0) : 0
        guard v.isFinite else { throw LayerImportFailure("has padding_value \(v)") }
        return (padding, sampling == "nearest", v)
    }

    /// MIL resample: x [B, C, H, W] sampled at coordinates [B, H2, W2, 2] (x then y).
    static func resample(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x")
        var coords = try c.tensor("coordinates")
        let xs = c.shape(x), cs = c.shape(coords)
        guard xs.count == 4, xs.allSatisfy({ $0 > 0 }), cs.count == 4, cs[0] == xs[0], cs[3] == 2, cs.allSatisfy({ $0 > 0 }) else {
            throw LayerImportFailure("has x \(xs) and coordinates \(cs); expected [B, C, H, W] and [B, H2, W2, 2]")
        }
        guard c.type(x)?.elementType == .float32 else { throw LayerImportFailure("samples a tensor that is not float") }
        if c.type(coords)?.elementType != .float32 { coords = try c.helper("coordinates_float", .cast(to: .float32), [coords]) }
        let (padding, nearest, padValue) = try samplingOptions(c, full: true)
        let mode = try c.string("coordinates_mode", default: "normalized_minus_one_to_one")
        let align = try c.bool("align_corners", default: false)
        let p = try Checked.product([cs[1], cs[2]], "resample points")
        let flat = try c.helper("points", .reshapeND(shape: [cs[0], p, 2]), [coords])
        func column(_ i: Int, _ tag: String) throws -> String {
            try c.helper(tag, .sliceByIndex(SliceByIndexAttributes(begin: [0, 0, i], end: [0, 0, i + 1], stride: [1, 1, 1],
                                                                   beginMask: [true, true, false], endMask: [true, true, false])), [flat])
        }
        let gx = try toPixels(c, try column(0, "x_coordinate"), size: xs[3], mode: mode, alignCorners: align, padding: padding, nearest: nearest, "x")
        let gy = try toPixels(c, try column(1, "y_coordinate"), size: xs[2], mode: mode, alignCorners: align, padding: padding, nearest: nearest, "y")
        let out = try sampleBilinear(c, x, gx: gx, gy: gy, points: p, padValue: padValue)
        return [try c.emit(.reshapeND(shape: [xs[0], xs[1], cs[1], cs[2]]), [out])]
    }

    /// MIL affine: output pixel (x, y), in normalized [−1, 1] coordinates of the output grid
    /// (corners aligned), samples the input at x′ = a0·x + a1·y + a2, y′ = b0·x + b1·y + b2
    /// (normalized input coordinates), bilinearly with constant padding.
    static func affine(_ c: MILOpContext) throws -> [MILValue] {
        let x = try c.tensor("x"), m = try c.tensor("transform_matrix")
        let xs = c.shape(x), ms = c.shape(m)
        guard xs.count == 4, xs.allSatisfy({ $0 > 0 }), ms.count == 2, ms[1] == 6, ms[0] == 1 || ms[0] == xs[0] else {
            throw LayerImportFailure("has x \(xs) and transform_matrix \(ms); expected [B, C, H, W] and [B or 1, 6]")
        }
        guard c.type(x)?.elementType == .float32, c.type(m)?.elementType == .float32 else { throw LayerImportFailure("transforms a tensor that is not float") }
        let oh = try c.int("output_height"), ow = try c.int("output_width")
        guard (1...Node.maxCountAttribute).contains(oh), (1...Node.maxCountAttribute).contains(ow) else {
            throw LayerImportFailure("has output size \(oh)×\(ow); expected positive sizes")
        }
        let (_, _, padValue) = try samplingOptions(c, full: false)
        let mode = try c.string("coordinates_mode", default: "normalized_minus_one_to_one")
        guard mode == "normalized_minus_one_to_one" else { throw LayerImportFailure("has coordinates_mode '\(mode)'; MIL affine takes normalized_minus_one_to_one") }
        guard try c.bool("align_corners", default: true) else { throw LayerImportFailure("has align_corners false, which MIL affine does not define") }
        let p = try Checked.product([oh, ow], "affine points")
        guard try Checked.product([3, p], "affine grid") <= maxConstantElements else {
            throw LayerImportFailure("has an output grid of \(oh)×\(ow) points, more than mlconv builds at import (\(maxConstantElements / 3))")
        }
        // The output grid as rows (x, y, 1) of a [3, P] matrix.
        func norm(_ i: Int, _ n: Int) -> Float { n == 1 ? 0 : -1 + 2 * Float(i) / Float(n - 1) }
        var grid = [Float](repeating: 1, count: 3 * p)
        for i in 0..<oh { for j in 0..<ow { grid[i * ow + j] = norm(j, ow); grid[p + i * ow + j] = norm(i, oh) } }
        let gridT = try c.b.emit(c.b.freshNodeName(c.name + "__grid"), .constant, [], weights: ["value": ConstantTensor(shape: [3, p], floats: grid)])
        func coordinate(_ first: Int, _ tag: String) throws -> String {
            let coef = try c.helper(tag + "_coefficients", .sliceByIndex(SliceByIndexAttributes(begin: [0, first], end: [0, first + 3], stride: [1, 1],
                                                                                                 beginMask: [true, false], endMask: [true, false])), [m])
            let g = try c.helper(tag + "_normalized", .matmul(MatMulAttributes()), [coef, gridT])  // [D, P]
            return try c.helper(tag + "_column", .reshapeND(shape: [ms[0], p, 1]), [g])
        }
        let gx = try toPixels(c, try coordinate(0, "x"), size: xs[3], mode: mode, alignCorners: true, "x")
        let gy = try toPixels(c, try coordinate(3, "y"), size: xs[2], mode: mode, alignCorners: true, "y")
        let out = try sampleBilinear(c, x, gx: gx, gy: gy, points: p, padValue: padValue)
        return [try c.emit(.reshapeND(shape: [xs[0], xs[1], oh, ow]), [out])]
    }

    static var mappers: [String: MILOpMapper] {
        var m: [String: MILOpMapper] = [:]
        m["gru"] = { c in try recurrent(c, kind: .gru) }
        m["rnn"] = { c in try recurrent(c, kind: .simpleRNN) }
        m["l2_pool"] = l2Pool
        m["resize"] = resize
        m["resize_bilinear"] = resizeBilinear
        m["classify"] = classify
        m["crop_resize"] = cropResize
        m["resample"] = resample
        m["affine"] = affine
        return m
    }
}

/// The classifier outputs of a program with a `classify` op.
struct MILClassifier {
    /// The label output (a string or int64 feature; not an IR tensor).
    var labelOutput: String
    /// The probability dictionary output: in the IR the tensor [1, classes].
    var probabilitiesOutput: String
    var labels: [String]
    var int64Labels: Bool
}

extension MILImporter {
    /// The classes of an ML program's `classify` op (in the default function's main block),
    /// without importing the program: (labels, int64) — int64 classes as decimal strings — or nil
    /// when the model is not an ML program classifier or its classes cannot be read.
    public static func classifierLabels(of model: Spec.Model) -> (labels: [String], int64: Bool)? {
        guard model.kind == .mlProgram, let program = ((try? model.mlProgram()) ?? nil) else { return nil }
        let name = model.description?.defaultFunctionName ?? ""
        guard let function = program.functions[name.isEmpty ? "main" : name], let block = function.blockSpecializations[function.opset],
              let op = block.operations.first(where: { $0.type == "classify" }) else { return nil }
        let importer = MILGraphImporter(fileName: "<model>", modelPath: nil, options: MILImportOptions())
        guard let r = try? MILMoreAOps.classes(MILOpContext(op: op, importer: importer)) else { return nil }
        return (r.labels, r.int64)
    }
}
