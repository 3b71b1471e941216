/// One operation of the graph IR. Each case documents its inputs, weights (by name in
/// `Node.weights`), attributes and output. Activations are channels-last with batch first.
public enum Op: Codable, Hashable, Sendable {
    case conv2d(Conv2DAttributes)
    case deconv2d(Deconv2DAttributes)
    case dense(DenseAttributes)
    case batchNorm(BatchNormAttributes)
    /// Elementwise activation; one input, same shape out.
    case activation(Activation)
    /// Softmax along `axis` (negative counts from the end: −1 is the last axis, MIL's default);
    /// one input, same shape out.
    case softmax(axis: Int)
    /// Keras PReLU: y = x if x ≥ 0 else alpha·x. Weight "alpha" has the input's shape without the
    /// batch dimension, with 1 on shared axes (broadcast).
    case prelu
    case pool2d(Pool2DAttributes)
    /// [N, H, W, C] → [N, C], or [N, 1, 1, C] when `keepDims`.
    case globalPool2d(kind: PoolKind, keepDims: Bool)
    case pad(PadAttributes)
    /// Removes `crops[axis] = [before, after]` elements on each axis (rank entries).
    case crop(crops: [[Int]])
    case upsample2d(Upsample2DAttributes)
    /// Output [N] + `targetShape` (Keras Reshape/Flatten; row-major, so channels-last order).
    case reshape(targetShape: [Int])
    /// Output axis i = input axis perm[i] (rank entries, batch first).
    case transpose(perm: [Int])
    /// n inputs (subtract: exactly 2) of the same shape or NumPy-broadcastable shapes.
    case elementwise(ElementwiseKind)
    /// Concatenation along `axis` (batch is 0; negative counts from the end, as MIL `concat`).
    case concat(axis: Int)
    /// Keras RepeatVector: [N, D] → [N, n, D].
    case repeatVector(n: Int)
    /// Output = input (Dropout and noise layers at inference; kept only where a name must survive).
    case identity
    case custom(CustomLayerAttributes)
    /// Recurrent layer (see `RecurrentAttributes`).
    case recurrent(RecurrentAttributes)
    /// Keras Embedding: indices x [N, L] (int32, int64, or float32 values holding integers
    /// 0…vocab−1) → float32 [N, L, D].
    /// Weight "weight" [D, vocab] (Core ML EmbeddingLayerParams layout: [outputChannels,
    /// inputDim]); an index outside 0…vocab−1 gives zeros (documented divergence from TF, which errors).
    case embedding(outputChannels: Int)
    /// Keras masking: x [N, T, …] → mask [N, T], 1 where any element of step t differs from
    /// `value`, else 0 (Keras `Masking(mask_value)`; Embedding `mask_zero` uses value 0 on [N, T]).
    case sequenceMask(value: Float)
    /// Multiplies each step of x [N, T, …] (input 0) by mask [N, T] (input 1): Keras `Masking`'s
    /// own output (masked steps become 0).
    case applyMask
    // MARK: elementwise math ops
    /// y = f(scale·x + shift) elementwise (`UnaryAttributes`, `UnaryFunction`); one input, same
    /// shape out, any layout. MIL `abs`, `sqrt`, `rsqrt`, `inverse`, `exp`, `log`, `round`, …;
    /// ONNX `Abs`, `Neg`, `Sqrt`, `Reciprocal`, …; Core ML `unary`.
    case unary(UnaryAttributes)
    /// f(x, y) with NumPy broadcasting (output: the broadcast shape). Inputs: x, y — or x alone
    /// when the node has weight "y" (a constant second operand of any broadcastable shape).
    /// MIL `add`, `sub`, `mul`, `real_div`, `floor_div`, `mod`, `pow`, `maximum`, `minimum`.
    case binary(BinaryFunction)
    /// y = min(max(x, alpha), beta); one input, same shape out. MIL `clip`, ONNX `Clip`.
    case clip(alpha: Float, beta: Float)
    // MARK: convolution and pooling in 1-D and 3-D (Ops/ConvPoolND.swift)
    /// 1-D convolution: x [N, W, Cin] (NWC) → [N, W', Cout]; weight "weight" [Cout, Cin/groups, kW],
    /// optional "bias" [Cout] (`ConvNDAttributes`). MIL `conv`, ONNX `Conv`.
    case conv1d(ConvNDAttributes)
    /// 3-D convolution: x [N, D, H, W, Cin] (NDHWC) → [N, D', H', W', Cout]; weight "weight"
    /// [Cout, Cin/groups, kD, kH, kW], optional "bias" [Cout]. MIL `conv`, ONNX `Conv`.
    case conv3d(ConvNDAttributes)
    /// 1-D max / average pooling (average excludes padding): [N, W, C] → [N, W', C]. MIL
    /// `max_pool` / `avg_pool`, ONNX `MaxPool` / `AveragePool`.
    case pool1d(PoolNDAttributes)
    /// 3-D max / average pooling (average excludes padding): [N, D, H, W, C] → [N, D', H', W', C].
    case pool3d(PoolNDAttributes)
    /// Transposed 3-D convolution: x [N, D, H, W, Cin] (NDHWC) → [N, D', H', W', Cout]; weight
    /// "weight" [Cin, Cout/groups, kD, kH, kW], optional "bias" [Cout] (`DeconvNDAttributes`).
    /// MIL `conv_transpose`, ONNX `ConvTranspose`.
    case deconv3d(DeconvNDAttributes)
    /// MIL `reshape` (ONNX `Reshape` without 0-copy): the row-major data of x with the full
    /// output shape `shape` (batch axis included, unlike `reshape`); one entry may be −1, inferred
    /// from the element count. Any element type.
    case reshapeND(shape: [Int])
    /// Transposed 1-D convolution: x [N, W, Cin] (NWC) → [N, W', Cout]; weight [Cin, Cout/groups, k],
    /// optional bias [Cout]; output size per `DeconvNDAttributes.outputSize`. MIL `conv_transpose`
    /// (rank 3), ONNX `ConvTranspose`, Keras `Conv1DTranspose`.
    case deconv1d(DeconvNDAttributes)

    // MARK: shape and data movement ops (issue 9)
    /// MIL `matmul` (ONNX `MatMul`): y = x·w, batched over all axes but the last two with NumPy
    /// broadcasting of the batch axes; `transposeX`/`transposeY` swap the last two axes of an
    /// operand first. Inputs: x, and w (input 1), or the constant weight "y" when the node has
    /// one input. A rank-1 x is promoted to [1, K] and a rank-1 w to [K, 1], the inserted axis
    /// removed from the output (as NumPy); rank-1 × rank-1 gives a rank-0 tensor (the dot product).
    case matmul(MatMulAttributes)
    /// No input; one output: the weight "value" (any shape), so a constant can feed any op input.
    /// MIL `const`, ONNX `Constant`.
    case constant
    /// Removes the size-1 axes `axes` (negative allowed), or every size-1 axis when empty. MIL
    /// `squeeze`; squeezing every axis gives a rank-0 tensor.
    case squeeze(axes: [Int])
    /// Inserts size-1 axes at `axes`, positions in the output (negative counts from the output's
    /// end, as MIL `expand_dims`).
    case expandDims(axes: [Int])
    /// n inputs of one shape stacked along a new axis `axis` of the output (negative allowed:
    /// −1 is the new last axis). MIL `stack`.
    case stack(axis: Int)
    /// Splits along `axis` into `numSplits` equal parts or parts of `splitSizes`; one output per
    /// part. MIL `split`.
    case split(SplitAttributes)
    /// NumPy basic slicing per axis (MIL `slice_by_index`, see `SliceByIndexAttributes`).
    case sliceByIndex(SliceByIndexAttributes)
    /// y = x[begin[d] ..< begin[d] + size[d]] per axis; size −1 = to the end; negative begin
    /// counts from the end. MIL `slice_by_size`.
    case sliceBySize(begin: [Int], size: [Int])
    /// Repeats the input `reps[d]` times along each axis (NumPy `tile`: a shorter `reps` is
    /// padded with leading 1s, a longer one promotes x with leading size-1 axes). MIL `tile`.
    case tile(reps: [Int])
    /// [N, H, W, C] → [N, H/b, W/b, C·b²], TensorFlow's DCR order: output channel
    /// (i·b + j)·C + c holds x[n, h·b + i, w·b + j, c]. MIL `space_to_depth` (NCHW there).
    case spaceToDepth(blockSize: Int)
    /// Inverse of `spaceToDepth`: [N, H, W, C] → [N, H·b, W·b, C/b²], DCR order (TF
    /// `depth_to_space`). MIL `depth_to_space`.
    case depthToSpace(blockSize: Int)
    /// Resizes H and W of [N, H, W, C] (see `ResizeAttributes`). MIL `resize_nearest_neighbor`,
    /// `resize_bilinear`, `upsample_nearest_neighbor`, `upsample_bilinear`.
    case resize(ResizeAttributes)
    /// Keeps x[..., m, n] when (lower < 0 or m − n ≤ lower) and (upper < 0 or n − m ≤ upper),
    /// else 0, on the last two axes. MIL `band_part`.
    case bandPart(lower: Int, upper: Int)
    /// Cumulative sum along an axis (see `CumsumAttributes`). MIL `cumsum`.
    case cumsum(CumsumAttributes)
    // MARK: reductions and normalisation ops
    /// Reduction of one input over a set of axes (see `ReduceAttributes`): MIL `reduce_sum`,
    /// `reduce_mean`, `reduce_prod`, `reduce_max`, `reduce_min`, `reduce_l1_norm`,
    /// `reduce_l2_norm`, `reduce_log_sum_exp`, `reduce_sum_square`; ONNX `Reduce*`.
    /// Output: the input shape with the reduced axes set to 1 (`keepDims`) or removed; removing
    /// every axis gives a rank-0 tensor (shape []), as MIL.
    case reduce(ReduceAttributes)
    /// log(softmax(x)) along `axis` (negative counts from the end): y = x − m − log Σ exp(x − m),
    /// m = max along the axis. One input, same shape out. ONNX `LogSoftmax`; MIL expresses it as
    /// `softmax` + `log` (or `reduce_log_sum_exp` + `sub`).
    case logSoftmax(axis: Int)
    /// MIL `layer_norm` (see `LayerNormAttributes`): one input, same shape out; optional weights
    /// "gamma" and "beta" shaped like the normalised axes.
    case layerNorm(LayerNormAttributes)
    /// MIL `instance_norm` in the channels-last layout: x [N, spatial…, C] (rank ≥ 3) normalised
    /// over the spatial axes for each (n, c), y = gamma[c]·(x − mean)/sqrt(var + epsilon) + beta[c];
    /// optional weights "gamma", "beta" [C]. One input, same shape out.
    case instanceNorm(epsilon: Float)
    /// MIL `l2_norm` (see `L2NormAttributes`): y = x / sqrt(Σ x² + epsilon) over `axes`.
    case l2Norm(L2NormAttributes)
    /// MIL `local_response_norm` / Core ML `lrn` across the channel axis, which is the last axis
    /// in the IR (see `LocalResponseNormAttributes`). One input, same shape out.
    case localResponseNorm(LocalResponseNormAttributes)
    // MARK: typed ops (integer / bool-valued; Sources/MLGraph/Ops/Typed*.swift)
    /// MIL `cast`: x (any element type) → the same values in `to` (ONNX `Cast`). Float → integer
    /// truncates toward zero (saturating, NaN → 0); integer → bool is x ≠ 0.
    case cast(to: ElementType)
    /// MIL `reduce_argmax`: index (int32) of the largest value along `axis`; ties → first index,
    /// NaN counts as the largest (NumPy). ONNX `ArgMax` (select_last_index 0).
    case argmax(ArgReduceAttributes)
    /// MIL `reduce_argmin`: index (int32) of the smallest value along `axis` (ties → first, NaN
    /// counts as the smallest). ONNX `ArgMin`.
    case argmin(ArgReduceAttributes)
    /// MIL `equal`, `not_equal`, `less`, `less_equal`, `greater`, `greater_equal`: x, y of one
    /// element type, NumPy broadcasting → bool (IEEE: any comparison with NaN is false except
    /// not_equal). ONNX `Equal`, `Less`, `LessOrEqual`, `Greater`, `GreaterOrEqual`.
    case compare(CompareFunction)
    /// MIL `logical_and`, `logical_or`, `logical_xor` (two bool inputs, broadcasting) and
    /// `logical_not` (one bool input) → bool. ONNX `And`, `Or`, `Xor`, `Not`.
    case logical(LogicalFunction)
    /// MIL `select`: cond (bool), a, b (one element type), broadcasting → cond ? a : b (ONNX `Where`).
    case select
    /// MIL `gather` (batch_dims 0): x, indices (int32/int64; negative wrap once) → x with axis
    /// `axis` replaced by the indices' shape; an out-of-range index gives zeros. ONNX `Gather`.
    case gather(axis: Int)
    /// MIL `gather_nd` (batch_dims 0): x, indices [..., K] (int32/int64) → indices[:-1] + x[K:].
    /// Negative indices wrap; out of range gives zeros. ONNX `GatherND`.
    case gatherND
    /// MIL `gather_along_axis`: x, indices of x's rank (equal to x's shape except on `axis`) →
    /// out[i] = x[i with axis index indices[i]] (NumPy `take_along_axis`). ONNX `GatherElements`.
    case gatherAlongAxis(axis: Int)
    /// MIL `one_hot`: indices (int32/int64) → float32 with a new axis of size `depth` at `axis`:
    /// `onValue` where the index equals the position, else `offValue` (out-of-range: all off).
    /// ONNX `OneHot`.
    case oneHot(OneHotAttributes)
    /// MIL `range_1d` with constant start, end, step: no input → [ceil((end−start)/step)] values
    /// start + i·step (NumPy `arange`). ONNX `Range`.
    case range1d(RangeAttributes)
    /// MIL `fill`, ONNX `ConstantOfShape`: no input → `shape` filled with `value`; or input
    /// shape (int32 / int64 / float32 [r], read at prediction time, attribute `shape` empty) →
    /// r unknown dimensions filled with `value` (runs in `Model`'s dynamic executor).
    case fill(FillAttributes)
    /// MIL `topk`: x → (values, int32 indices) of the `k` largest (or smallest, `ascending`)
    /// along `axis`, sorted; ties → lower index first. ONNX `TopK`.
    case topk(TopKAttributes)
    // MARK: scatter, reverse, sort, einsum, windows, NMS ops (Ops/Scatter.swift, Ops/IndexingOps.swift)
    /// MIL `scatter`: data, indices (int32/int64, any rank), updates of shape
    /// data[..<axis] + indices.shape + data[(axis+1)...] → data with each slice
    /// out[…, wrap(indices[j]), …] combined with updates[…, j, …] by `mode`, applied in index order
    /// (duplicates accumulate; `update`: the last wins). Out-of-range indices are skipped. ONNX
    /// `ScatterElements` (rank-1 indices) / TF `tensor_scatter_*`.
    case scatter(ScatterAttributes)
    /// MIL `scatter_nd`: data, indices [..., K] (int32/int64), updates of shape indices[:-1] +
    /// data[K:] → data with the slice at each index tuple combined with its update by `mode`.
    /// ONNX `ScatterND`.
    case scatterND(mode: ScatterMode)
    /// MIL `scatter_along_axis`: data, indices and updates of one shape, equal to data's except on
    /// `axis` → out[i with the axis coordinate wrap(indices[i])] combined with updates[i] by `mode`
    /// (NumPy `put_along_axis` / `ufunc.at`). ONNX `ScatterElements`.
    case scatterAlongAxis(ScatterAttributes)
    /// MIL `reverse`: x reversed along each axis of `axes` (negative allowed; empty = every axis,
    /// MIL's default). Same shape and element type out. ONNX has no single op (Slice with step −1).
    case reverse(axes: [Int])
    /// MIL `reverse_sequence`: x, lengths (int32/int64 [x.shape[batchAxis]]) → for each batch b,
    /// the first lengths[b] elements along `seqAxis` reversed, the rest copied (lengths clamped to
    /// 0…size). ONNX `ReverseSequence`.
    case reverseSequence(seqAxis: Int, batchAxis: Int)
    /// MIL `argsort`: int32 positions that sort x along `axis` (descending unless `ascending`);
    /// stable (ties keep the lower index first); NaN ranks above +∞. Same shape out.
    case argsort(axis: Int, ascending: Bool)
    /// MIL `einsum` (general form here): one or two float32 operands, an equation such as
    /// "bij,bjk->bik" (letters a–z, A–Z; no ellipsis; implicit output = letters used once, sorted).
    /// Repeated letters in one operand take diagonals; letters absent from the output are summed.
    /// ONNX `Einsum`.
    case einsum(equation: String)
    /// MIL `sliding_windows`: x → windows of `size` elements every `stride` along `axis`: the axis
    /// of size n becomes (n − size)/stride + 1 windows followed by a new axis of size `size`.
    case slidingWindows(SlidingWindowsAttributes)
    /// MIL `non_maximum_suppression` (iOS15): boxes [B, N, 4] (center x, center y, width, height),
    /// scores [B, N, K] (float32) → selected boxes [B, M, 4], their scores [B, M, K], indices [B, M]
    /// (int32) and counts [B] (int32), M = `maxBoxes`; rows past the count are padded with zeros
    /// (boxes, scores) and −1 (indices). See `NonMaximumSuppressionAttributes`. ONNX
    /// `NonMaxSuppression` (another output layout).
    case nonMaximumSuppression(NonMaximumSuppressionAttributes)
    // MARK: control flow and dynamic shapes
    /// MIL `cond`, ONNX `If`, Core ML `branch`: inputs pred (one element: bool, or a number,
    /// true when non-zero), operands…; `Node.blocks` = [then, else], each binding the operands
    /// and yielding the outputs (same count; element type, rank and list-ness must agree, a
    /// dimension that differs is unknown). Runs in `Model`'s dynamic executor.
    case cond
    /// MIL `while_loop`, ONNX `Loop`, Core ML `loop`: inputs = the initial loop variables;
    /// `Node.blocks` = [cond, body], both binding the loop variables: cond yields one predicate,
    /// body the next loop variables (same element type, rank and list-ness; a dimension that
    /// changes is unknown). Outputs = the loop variables when cond yields false. At most
    /// `Model.Configuration.maximumLoopIterations` body runs (`RuntimeError.iterationLimitExceeded`).
    case whileLoop
    /// MIL `make_list`: optional input length (one element) → a tensor list (`TensorType.isList`).
    case makeList(MakeListAttributes)
    /// MIL `list_read`: (list, index (1)) → the element (negative index counts from the end).
    case listRead
    /// MIL `list_write`: (list, index (1), value) → the list with element index set to value.
    case listWrite
    /// MIL `list_gather`: (list, indices [k]) → [k] + element shape (TF `TensorListStack` with
    /// indices 0..<length).
    case listGather
    /// MIL `list_scatter`: (list, indices [k], values [k, element…]) → the list with the elements set.
    case listScatter
    /// MIL `list_length`: list → int32 (1).
    case listLength
    /// MIL `shape`, ONNX `Shape`: x → int32 [rank(x)], the run-time dimensions.
    case shape
    // MARK: random ops (Ops/Random.swift)
    /// Seeded pseudo-random samples (`RandomAttributes`: normal, uniform or Bernoulli; mlconv's
    /// documented generator): x (any element type, only its shape is read) → float32 of x's
    /// shape. MIL `random_normal` / `random_uniform` / `random_bernoulli` with shape = shape(x);
    /// Core ML `random*Like` (`random*Static` / `random*Dynamic`: `fill` then this op).
    case random(RandomAttributes)

    /// A short name for messages and `inspect` (e.g. "conv2d").
    public var name: String {
        switch self {
        case .conv2d: return "conv2d"
        case .deconv2d: return "deconv2d"
        case .dense: return "dense"
        case .batchNorm: return "batchNorm"
        case .activation: return "activation"
        case .softmax: return "softmax"
        case .prelu: return "prelu"
        case .pool2d: return "pool2d"
        case .globalPool2d: return "globalPool2d"
        case .pad: return "pad"
        case .crop: return "crop"
        case .upsample2d: return "upsample2d"
        case .reshape: return "reshape"
        case .transpose: return "transpose"
        case .elementwise: return "elementwise"
        case .concat: return "concat"
        case .repeatVector: return "repeatVector"
        case .identity: return "identity"
        case let .custom(a): return "custom(\(a.className))"
        case let .recurrent(a): return a.bidirectional == nil ? a.kind.rawValue : "bidirectional-" + a.kind.rawValue
        case .embedding: return "embedding"
        case .sequenceMask: return "sequenceMask"
        case .applyMask: return "applyMask"
        // MARK: shape and data movement ops (issue 9)
        case .matmul: return "matmul"
        case .constant: return "constant"
        case .squeeze: return "squeeze"
        case .expandDims: return "expandDims"
        case .stack: return "stack"
        case .split: return "split"
        case .sliceByIndex: return "sliceByIndex"
        case .sliceBySize: return "sliceBySize"
        case .tile: return "tile"
        case .spaceToDepth: return "spaceToDepth"
        case .depthToSpace: return "depthToSpace"
        case .resize: return "resize"
        case .bandPart: return "bandPart"
        case .cumsum: return "cumsum"
        // MARK: reductions and normalisation ops
        case let .reduce(a): return "reduce(\(a.function.rawValue))"
        case .logSoftmax: return "logSoftmax"
        case .layerNorm: return "layerNorm"
        case .instanceNorm: return "instanceNorm"
        case .l2Norm: return "l2Norm"
        case .localResponseNorm: return "localResponseNorm"
        // MARK: typed ops
        case .cast: return "cast"
        case .argmax: return "argmax"
        case .argmin: return "argmin"
        case let .compare(f): return f.rawValue
        case let .logical(f): return f.rawValue
        case .select: return "select"
        case .gather: return "gather"
        case .gatherND: return "gatherND"
        case .gatherAlongAxis: return "gatherAlongAxis"
        case .oneHot: return "oneHot"
        case .range1d: return "range1d"
        case .fill: return "fill"
        case .topk: return "topk"
        // MARK: control flow and dynamic shapes
        case .cond: return "cond"
        case .whileLoop: return "whileLoop"
        case .makeList: return "makeList"
        case .listRead: return "listRead"
        case .listWrite: return "listWrite"
        case .listGather: return "listGather"
        case .listScatter: return "listScatter"
        case .listLength: return "listLength"
        case .shape: return "shape"
        // MARK: random ops
        case .random: return "random"
        // MARK: elementwise math ops
        case .unary: return "unary"
        case .binary: return "binary"
        case .clip: return "clip"
        // MARK: scatter, reverse, sort, einsum, windows, NMS ops
        case let .scatter(a): return "scatter(\(a.mode.rawValue))"
        case let .scatterND(mode): return "scatterND(\(mode.rawValue))"
        case let .scatterAlongAxis(a): return "scatterAlongAxis(\(a.mode.rawValue))"
        case .reverse: return "reverse"
        case .reverseSequence: return "reverseSequence"
        case .argsort: return "argsort"
        case .einsum: return "einsum"
        case .slidingWindows: return "slidingWindows"
        case .nonMaximumSuppression: return "nonMaximumSuppression"
        // MARK: convolution and pooling in 1-D and 3-D
        case .conv1d: return "conv1d"
        case .conv3d: return "conv3d"
        case .pool1d: return "pool1d"
        case .pool3d: return "pool3d"
        case .deconv3d: return "deconv3d"
        case .reshapeND: return "reshapeND"
        case .deconv1d: return "deconv1d"
        }
    }
}

/// The kinds of op of the IR, without their attributes: the key of every op registry (reference
/// and fast kernels, converters, Core ML import and export, the bundle codec). The raw value is
/// the op's stable name in files, messages and `mlconv ops`.
public enum OpKind: String, CaseIterable, Codable, Hashable, Sendable, Comparable {
    case conv2d, deconv2d, dense, batchNorm, activation, softmax, prelu, pool2d, globalPool2d
    case pad, crop, upsample2d, reshape, transpose, elementwise, concat, repeatVector, identity
    case custom, recurrent, embedding, sequenceMask, applyMask
    // MARK: shape and data movement ops (issue 9)
    case matmul, constant, squeeze, expandDims, stack, split, sliceByIndex, sliceBySize, tile
    case spaceToDepth, depthToSpace, resize, bandPart, cumsum
    // MARK: reductions and normalisation ops
    case reduce, logSoftmax, layerNorm, instanceNorm, l2Norm, localResponseNorm
    // MARK: typed ops
    case cast, argmax, argmin, compare, logical, select, gather, gatherND, gatherAlongAxis, oneHot, range1d, fill, topk
    // MARK: elementwise math ops
    case unary, binary, clip
    // MARK: scatter, reverse, sort, einsum, windows, NMS ops
    case scatter, scatterND, scatterAlongAxis, reverse, reverseSequence, argsort, einsum, slidingWindows, nonMaximumSuppression
    // MARK: control flow and dynamic shapes
    case cond, whileLoop, makeList, listRead, listWrite, listGather, listScatter, listLength, shape
    // MARK: convolution and pooling in 1-D and 3-D
    case conv1d, conv3d, pool1d, pool3d, deconv3d
    case reshapeND, deconv1d
    // MARK: random ops
    case random

    /// The op's definition (Sources/MLGraph/Ops/): summary, correspondences, shape inference,
    /// attribute validation and weight roles. The switch is exhaustive: a new kind without a
    /// definition does not compile.
    public var definition: any OpDefinition.Type {
        switch self {
        case .conv2d: return Conv2DDefinition.self
        case .deconv2d: return Deconv2DDefinition.self
        case .dense: return DenseDefinition.self
        case .batchNorm: return BatchNormDefinition.self
        case .activation: return ActivationDefinition.self
        case .softmax: return SoftmaxDefinition.self
        case .prelu: return PReLUDefinition.self
        case .pool2d: return Pool2DDefinition.self
        case .globalPool2d: return GlobalPool2DDefinition.self
        case .pad: return PadDefinition.self
        case .crop: return CropDefinition.self
        case .upsample2d: return Upsample2DDefinition.self
        case .reshape: return ReshapeDefinition.self
        case .transpose: return TransposeDefinition.self
        case .elementwise: return ElementwiseDefinition.self
        case .concat: return ConcatDefinition.self
        case .repeatVector: return RepeatVectorDefinition.self
        case .identity: return IdentityDefinition.self
        case .custom: return CustomDefinition.self
        case .recurrent: return RecurrentDefinition.self
        case .embedding: return EmbeddingDefinition.self
        case .sequenceMask: return SequenceMaskDefinition.self
        case .applyMask: return ApplyMaskDefinition.self
        // MARK: shape and data movement ops (issue 9)
        case .matmul: return MatMulDefinition.self
        case .constant: return ConstantDefinition.self
        case .squeeze: return SqueezeDefinition.self
        case .expandDims: return ExpandDimsDefinition.self
        case .stack: return StackDefinition.self
        case .split: return SplitDefinition.self
        case .sliceByIndex: return SliceByIndexDefinition.self
        case .sliceBySize: return SliceBySizeDefinition.self
        case .tile: return TileDefinition.self
        case .spaceToDepth: return SpaceToDepthDefinition.self
        case .depthToSpace: return DepthToSpaceDefinition.self
        case .resize: return ResizeDefinition.self
        case .bandPart: return BandPartDefinition.self
        case .cumsum: return CumsumDefinition.self
        // MARK: reductions and normalisation ops
        case .reduce: return ReduceDefinition.self
        case .logSoftmax: return LogSoftmaxDefinition.self
        case .layerNorm: return LayerNormDefinition.self
        case .instanceNorm: return InstanceNormDefinition.self
        case .l2Norm: return L2NormDefinition.self
        case .localResponseNorm: return LocalResponseNormDefinition.self
        // MARK: typed ops
        case .cast: return CastDefinition.self
        case .argmax: return ArgmaxDefinition.self
        case .argmin: return ArgminDefinition.self
        case .compare: return CompareDefinition.self
        case .logical: return LogicalDefinition.self
        case .select: return SelectDefinition.self
        case .gather: return GatherDefinition.self
        case .gatherND: return GatherNDDefinition.self
        case .gatherAlongAxis: return GatherAlongAxisDefinition.self
        case .oneHot: return OneHotDefinition.self
        case .range1d: return Range1DDefinition.self
        case .fill: return FillDefinition.self
        case .topk: return TopKDefinition.self
        // MARK: elementwise math ops
        case .unary: return UnaryDefinition.self
        case .binary: return BinaryDefinition.self
        case .clip: return ClipDefinition.self
        // MARK: scatter, reverse, sort, einsum, windows, NMS ops
        case .scatter: return ScatterDefinition.self
        case .scatterND: return ScatterNDDefinition.self
        case .scatterAlongAxis: return ScatterAlongAxisDefinition.self
        case .reverse: return ReverseDefinition.self
        case .reverseSequence: return ReverseSequenceDefinition.self
        case .argsort: return ArgsortDefinition.self
        case .einsum: return EinsumDefinition.self
        case .slidingWindows: return SlidingWindowsDefinition.self
        case .nonMaximumSuppression: return NonMaximumSuppressionDefinition.self
        // MARK: control flow and dynamic shapes
        case .cond: return CondDefinition.self
        case .whileLoop: return WhileLoopDefinition.self
        case .makeList: return MakeListDefinition.self
        case .listRead: return ListReadDefinition.self
        case .listWrite: return ListWriteDefinition.self
        case .listGather: return ListGatherDefinition.self
        case .listScatter: return ListScatterDefinition.self
        case .listLength: return ListLengthDefinition.self
        case .shape: return ShapeDefinition.self
        // MARK: convolution and pooling in 1-D and 3-D
        case .conv1d: return Conv1DDefinition.self
        case .conv3d: return Conv3DDefinition.self
        case .pool1d: return Pool1DDefinition.self
        case .pool3d: return Pool3DDefinition.self
        case .deconv3d: return Deconv3DDefinition.self
        case .reshapeND: return ReshapeNDDefinition.self
        case .deconv1d: return Deconv1DDefinition.self
        // MARK: random ops
        case .random: return RandomDefinition.self
        }
    }

    public static func < (a: OpKind, b: OpKind) -> Bool { a.rawValue < b.rawValue }
}

extension Op {
    /// The op's kind (its case without attributes).
    public var kind: OpKind {
        switch self {
        case .conv2d: return .conv2d
        case .deconv2d: return .deconv2d
        case .dense: return .dense
        case .batchNorm: return .batchNorm
        case .activation: return .activation
        case .softmax: return .softmax
        case .prelu: return .prelu
        case .pool2d: return .pool2d
        case .globalPool2d: return .globalPool2d
        case .pad: return .pad
        case .crop: return .crop
        case .upsample2d: return .upsample2d
        case .reshape: return .reshape
        case .transpose: return .transpose
        case .elementwise: return .elementwise
        case .concat: return .concat
        case .repeatVector: return .repeatVector
        case .identity: return .identity
        case .custom: return .custom
        case .recurrent: return .recurrent
        case .embedding: return .embedding
        case .sequenceMask: return .sequenceMask
        case .applyMask: return .applyMask
        // MARK: shape and data movement ops (issue 9)
        case .matmul: return .matmul
        case .constant: return .constant
        case .squeeze: return .squeeze
        case .expandDims: return .expandDims
        case .stack: return .stack
        case .split: return .split
        case .sliceByIndex: return .sliceByIndex
        case .sliceBySize: return .sliceBySize
        case .tile: return .tile
        case .spaceToDepth: return .spaceToDepth
        case .depthToSpace: return .depthToSpace
        case .resize: return .resize
        case .bandPart: return .bandPart
        case .cumsum: return .cumsum
        // MARK: reductions and normalisation ops
        case .reduce: return .reduce
        case .logSoftmax: return .logSoftmax
        case .layerNorm: return .layerNorm
        case .instanceNorm: return .instanceNorm
        case .l2Norm: return .l2Norm
        case .localResponseNorm: return .localResponseNorm
        // MARK: typed ops
        case .cast: return .cast
        case .argmax: return .argmax
        case .argmin: return .argmin
        case .compare: return .compare
        case .logical: return .logical
        case .select: return .select
        case .gather: return .gather
        case .gatherND: return .gatherND
        case .gatherAlongAxis: return .gatherAlongAxis
        case .oneHot: return .oneHot
        case .range1d: return .range1d
        case .fill: return .fill
        case .topk: return .topk
        // MARK: elementwise math ops
        case .unary: return .unary
        case .binary: return .binary
        case .clip: return .clip
        // MARK: scatter, reverse, sort, einsum, windows, NMS ops
        case .scatter: return .scatter
        case .scatterND: return .scatterND
        case .scatterAlongAxis: return .scatterAlongAxis
        case .reverse: return .reverse
        case .reverseSequence: return .reverseSequence
        case .argsort: return .argsort
        case .einsum: return .einsum
        case .slidingWindows: return .slidingWindows
        case .nonMaximumSuppression: return .nonMaximumSuppression
        // MARK: control flow and dynamic shapes
        case .cond: return .cond
        case .whileLoop: return .whileLoop
        case .makeList: return .makeList
        case .listRead: return .listRead
        case .listWrite: return .listWrite
        case .listGather: return .listGather
        case .listScatter: return .listScatter
        case .listLength: return .listLength
        case .shape: return .shape
        // MARK: convolution and pooling in 1-D and 3-D
        case .conv1d: return .conv1d
        case .conv3d: return .conv3d
        case .pool1d: return .pool1d
        case .pool3d: return .pool3d
        case .deconv3d: return .deconv3d
        case .reshapeND: return .reshapeND
        case .deconv1d: return .deconv1d
        // MARK: random ops
        case .random: return .random
        }
    }

    /// The op's definition (`kind.definition`).
    public var definition: any OpDefinition.Type { kind.definition }
}

extension Op {
    /// The weight roles this op defines (`OpDefinition.weightRoles`).
    public var weightRoles: [WeightRole] { definition.weightRoles }
}
