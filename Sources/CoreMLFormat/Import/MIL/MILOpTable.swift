// The MIL op table: op name → mapper (MILOps*.swift), the ops refused with a reason, and the
// op names of coremltools' iOS15–iOS18 opsets for `mlconv ops --mil`.
import MLGraph

public enum MILOpTable {
    /// Op name → mapper, merged from the per-family tables.
    static let mappers: [String: MILOpMapper] = {
        var m: [String: MILOpMapper] = [:]
        for family in [MILElementwiseOps.mappers, MILConvNormOps.mappers, MILShapeOps.mappers, MILRecurrentOps.mappers,
                       MILConstexprOps.mappers, MILControlFlowOps.mappers, MILMoreOps.mappers,
                       MILStateOps.mappers,
                       // MARK: milopsc
                       MILMoreCOps.mappers] {
            m.merge(family) { a, _ in a }
        }
        // MARK: milopsb
        m.merge(MILMoreOpsB.mappers) { a, _ in a }
        // MARK: milopsa
        m.merge(MILMoreAOps.mappers) { _, new in new }  // MILOpsMoreA.swift (its resize_bilinear takes every rank and OFFSET_CORNERS)
        return m
    }()

    /// Ops mlconv knows and refuses, with the reason.
    static let refusals: [String: String] = [:]

    /// The ops of coremltools' iOS15–iOS18 opsets (coremltools/converters/mil/mil/ops/defs/).
    public static let opsetOps: [String] = [
        // activation
        "clamped_relu", "elu", "gelu", "leaky_relu", "linear_activation", "prelu", "relu", "relu6", "scaled_tanh", "sigmoid",
        "sigmoid_hard", "silu", "softplus", "softplus_parametric", "softmax", "softsign", "thresholded_relu",
        // classify, control flow
        "classify", "cond", "const", "select", "while_loop", "make_list", "list_length", "list_write", "list_read", "list_gather",
        "list_scatter",
        // conv, linear, normalization, pool
        "conv", "conv_transpose", "linear", "matmul", "einsum", "batch_norm", "instance_norm", "l2_norm", "layer_norm",
        "local_response_norm", "avg_pool", "l2_pool", "max_pool",
        // elementwise binary / unary
        "add", "equal", "floor_div", "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
        "logical_xor", "maximum", "minimum", "mod", "mul", "not_equal", "pow", "real_div", "sub", "abs", "acos", "asin",
        "atan", "atanh", "ceil", "clip", "cos", "cosh", "erf", "exp", "exp2", "floor", "inverse", "log", "logical_not",
        "round", "rsqrt", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh", "threshold", "cast",
        // image resizing
        "affine", "crop", "crop_resize", "resample", "resize", "resize_bilinear", "resize_nearest_neighbor",
        "upsample_bilinear", "upsample_nearest_neighbor",
        // linear algebra, random, recurrent, reductions
        "random_bernoulli", "random_categorical", "random_normal", "random_uniform", "gru", "lstm", "rnn",
        "reduce_argmax", "reduce_argmin", "reduce_l1_norm", "reduce_l2_norm", "reduce_log_sum", "reduce_log_sum_exp",
        "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "reduce_sum_square",
        // scatter / gather, tensor operations, tensor transformation
        "gather", "gather_along_axis", "gather_nd", "scatter", "scatter_along_axis", "scatter_nd", "argsort", "band_part",
        "concat", "cumsum", "fill", "fill_like", "flatten2d", "identity", "non_maximum_suppression", "non_zero", "one_hot",
        "pad", "range_1d", "shape", "split", "stack", "tile", "topk", "batch_to_space", "depth_to_space", "expand_dims",
        "pixel_shuffle", "pixel_unshuffle", "reshape", "reshape_like", "reverse", "reverse_sequence", "slice_by_index",
        "slice_by_size", "sliding_windows", "space_to_batch", "space_to_depth", "squeeze", "transpose",
        // constexpr (compressed weights), states
        "constexpr_affine_dequantize", "constexpr_cast", "constexpr_lut_to_dense", "constexpr_sparse_to_dense",
        "constexpr_blockwise_shift_scale", "constexpr_lut_to_sparse", "constexpr_sparse_blockwise_shift_scale",
        "read_state", "write_state", "coreml_update_state",
        // MARK: milopsc
        "quantize", "dequantize", "scaled_dot_product_attention", "slice_update",
    ]

    /// One status line per op of `opsetOps` (and every other mapped op): "supported" or the refusal.
    public static var status: [(op: String, supported: Bool, note: String)] {
        let all = Set(opsetOps).union(mappers.keys)
        return all.sorted().map { op in
            if mappers[op] != nil { return (op, true, "imported") }
            return (op, false, refusals[op] ?? "not supported")
        }
    }
}
