/// Spatial padding of a window op (convolution, pooling).
public enum PaddingMode: Codable, Hashable, Sendable {
    /// No padding (Keras `padding='valid'`).
    case valid
    /// TensorFlow/Keras `padding='same'`: output = ceil(input/stride); total padding
    /// max((out−1)·stride + effectiveKernel − input, 0), the odd pixel going bottom/right
    /// (Core ML `SamePadding` BOTTOM_RIGHT_HEAVY).
    case same
    /// Explicit pixels: top, bottom, left, right.
    case explicit(top: Int, bottom: Int, left: Int, right: Int)

    /// Resolves to explicit (top, bottom, left, right) for an input of `inH`×`inW`.
    public func resolve(inH: Int, inW: Int, kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int))
        -> (top: Int, bottom: Int, left: Int, right: Int)
    {
        switch self {
        case .valid: return (0, 0, 0, 0)
        case let .explicit(t, b, l, r): return (t, b, l, r)
        case .same:
            func pads(_ n: Int, _ k: Int, _ s: Int, _ d: Int) -> (Int, Int) {
                let ek = (k - 1) * d + 1
                let out = (n + s - 1) / s
                let total = Swift.max((out - 1) * s + ek - n, 0)
                return (total / 2, total - total / 2)
            }
            let (t, b) = pads(inH, kernel.0, stride.0, dilation.0)
            let (l, r) = pads(inW, kernel.1, stride.1, dilation.1)
            return (t, b, l, r)
        }
    }
}

/// `Op.conv2d`. Input x [N, H, W, Cin] (NHWC).
/// Weights: "weight" [Cout, Cin/groups, kH, kW] (per Core ML NeuralNetwork.proto,
/// ConvolutionLayerParams.weights; Keras HWIO kernels are transposed (3,2,0,1) by the frontend),
/// optional "bias" [Cout]. Output [N, Ho, Wo, Cout].
public struct Conv2DAttributes: Codable, Hashable, Sendable {
    public var kernel: [Int]        // [kH, kW]
    public var strides: [Int]       // [sH, sW]
    public var dilations: [Int]     // [dH, dW]
    public var padding: PaddingMode
    public var groups: Int
    public var outputChannels: Int
    public var activation: Activation?

    public init(kernel: [Int], strides: [Int] = [1, 1], dilations: [Int] = [1, 1], padding: PaddingMode,
                groups: Int = 1, outputChannels: Int, activation: Activation? = nil) {
        self.kernel = kernel; self.strides = strides; self.dilations = dilations; self.padding = padding
        self.groups = groups; self.outputChannels = outputChannels; self.activation = activation
    }
}

/// `Op.deconv2d` (transposed convolution, Keras `Conv2DTranspose`). Input x [N, H, W, Cin].
/// Weights: "weight" [Cin, Cout/groups, kH, kW] (per Core ML NeuralNetwork.proto, deconvolution
/// weights; Keras kernels (kH, kW, Cout, Cin) are transposed (3,2,0,1)), optional "bias" [Cout].
/// Output size per spatial axis: full = (in−1)·stride + (k−1)·dilation + 1 + outputPadding;
/// `.valid` keeps `full`; `.same` gives in·stride + outputPadding, cropping total = full − that,
/// top/left = total/2 (TF conv2d_transpose); `.explicit` crops the given pixels from `full`.
public struct Deconv2DAttributes: Codable, Hashable, Sendable {
    public var kernel: [Int]
    public var strides: [Int]
    public var dilations: [Int]
    public var padding: PaddingMode
    public var outputPadding: [Int]  // [h, w], 0 unless Keras output_padding is set
    public var groups: Int
    public var outputChannels: Int
    public var activation: Activation?

    public init(kernel: [Int], strides: [Int], dilations: [Int] = [1, 1], padding: PaddingMode,
                outputPadding: [Int] = [0, 0], groups: Int = 1, outputChannels: Int, activation: Activation? = nil) {
        self.kernel = kernel; self.strides = strides; self.dilations = dilations; self.padding = padding
        self.outputPadding = outputPadding; self.groups = groups; self.outputChannels = outputChannels
        self.activation = activation
    }
}

/// `Op.dense`. Input x [..., Cin] (any rank ≥ 2, applied to the last axis as Keras Dense).
/// Weights: "weight" [Cout, Cin] (Core ML InnerProductLayerParams; Keras kernel transposed),
/// optional "bias" [Cout]. Output [..., Cout].
public struct DenseAttributes: Codable, Hashable, Sendable {
    public var outputChannels: Int
    public var activation: Activation?
    public init(outputChannels: Int, activation: Activation? = nil) {
        self.outputChannels = outputChannels; self.activation = activation
    }
}

/// `Op.batchNorm` (inference): y = gamma·(x − mean)/sqrt(variance + epsilon) + beta along `axis`.
/// Weights "mean", "variance" [C]; optional "gamma" (absent = 1, Keras scale=False) and
/// "beta" (absent = 0, center=False), all [C] with C = shape[axis].
public struct BatchNormAttributes: Codable, Hashable, Sendable {
    /// Non-negative axis index into the input shape (batch is axis 0).
    public var axis: Int
    public var epsilon: Float
    public init(axis: Int, epsilon: Float) { self.axis = axis; self.epsilon = epsilon }
}

public enum PoolKind: String, Codable, Hashable, Sendable { case max, average }

/// `Op.pool2d`. Input [N, H, W, C] → [N, Ho, Wo, C]. Average pooling excludes padded pixels
/// (Keras/TF; Core ML avgPoolExcludePadding = true).
public struct Pool2DAttributes: Codable, Hashable, Sendable {
    public var kind: PoolKind
    public var kernel: [Int]
    public var strides: [Int]
    public var padding: PaddingMode
    public init(kind: PoolKind, kernel: [Int], strides: [Int], padding: PaddingMode) {
        self.kind = kind; self.kernel = kernel; self.strides = strides; self.padding = padding
    }
}

public enum PadMode: String, Codable, Hashable, Sendable {
    /// Fill with `PadAttributes.value`.
    case constant
    /// Mirror without repeating the edge (TF/NumPy `reflect`): [a b c] → b | a b c | b.
    case reflect
    /// Repeat the edge value (NumPy `edge`, Core ML `replication`).
    case edge
}

/// `Op.pad`: pads each axis by `pads[axis] = [before, after]` (rank entries, batch first).
public struct PadAttributes: Codable, Hashable, Sendable {
    public var mode: PadMode
    public var pads: [[Int]]
    public var value: Float
    public init(mode: PadMode, pads: [[Int]], value: Float = 0) { self.mode = mode; self.pads = pads; self.value = value }
}

public enum UpsampleMode: String, Codable, Hashable, Sendable {
    case nearest
    /// Bilinear with half-pixel centres (TF2 `tf.image.resize`, Keras UpSampling2D).
    case bilinearHalfPixel
    /// Bilinear with align_corners = true.
    case bilinearAlignCorners
    /// Bilinear with src = dst/scale (TF1 `resize_bilinear` default, Core ML upsample BILINEAR default).
    case bilinearAsymmetric
}

/// `Op.upsample2d`: [N, H, W, C] → [N, H·sH, W·sW, C].
public struct Upsample2DAttributes: Codable, Hashable, Sendable {
    public var scale: [Int]  // [sH, sW]
    public var mode: UpsampleMode
    public init(scale: [Int], mode: UpsampleMode) { self.scale = scale; self.mode = mode }
}

public enum ElementwiseKind: String, Codable, Hashable, Sendable {
    case add, subtract, multiply, average, maximum, minimum
}

/// A value of a custom layer parameter (Core ML `CustomLayerParams.CustomLayerParamValue`).
public enum CustomParameterValue: Codable, Hashable, Sendable {
    case double(Double), string(String), int(Int32), long(Int64), bool(Bool)
}

/// `Op.custom`: a layer implemented outside the built-in op set (Core ML `CustomLayerParams`).
/// Weights are attached to the node as "w0", "w1", … in order. The output shapes are fixed at
/// conversion time by the hook that produced the layer.
public struct CustomLayerAttributes: Codable, Hashable, Sendable {
    public var className: String
    public var description: String
    public var parameters: [String: CustomParameterValue]
    public var outputShapes: [[Int]]
    public init(className: String, description: String = "", parameters: [String: CustomParameterValue] = [:],
                outputShapes: [[Int]]) {
        self.className = className; self.description = description; self.parameters = parameters
        self.outputShapes = outputShapes
    }
}

public enum RecurrentKind: String, Codable, Hashable, Sendable {
    /// Keras SimpleRNN: h_t = activation(W·x_t + R·h_{t−1} + b). Gates: 1.
    case simpleRNN
    /// Keras LSTM, gate order i, f, c (candidate), o (Keras' own order). Gates: 4.
    case lstm
    /// Keras GRU, gate order z (update), r (reset), h (candidate). Gates: 3. `resetAfter` as Keras.
    case gru

    /// Number of gate blocks in the weight matrices.
    public var gateCount: Int { self == .lstm ? 4 : self == .gru ? 3 : 1 }
    /// Number of state tensors per direction (LSTM has h and c).
    public var stateCount: Int { self == .lstm ? 2 : 1 }
}

/// How a bidirectional layer combines its two directions (Keras `Bidirectional.merge_mode`).
public enum BidirectionalMerge: String, Codable, Hashable, Sendable { case concat, sum, mul, ave }

/// `Op.recurrent`: a Keras recurrent layer (SimpleRNN / LSTM / GRU, optionally Bidirectional).
///
/// Inputs, in order: x [N, T, D]; then, when `initialStates`, the initial states per direction
/// (forward then backward; LSTM: h then c), each [N, units]; then, when `hasMask`, a mask
/// [N, T] (1 = use the step, 0 = skip it: states carried over and the output repeats the previous
/// step's (zeros before the first used step) — Keras masking; inside a Bidirectional layer with
/// `returnSequences` Keras zeroes masked outputs instead). A non-GRU `recurrentBias` is added
/// outside any gate nonlinearity (as ONNX).
/// Outputs: y — [N, T, U] when `returnSequences`, else [N, U] (U = units, or 2·units for
/// `.concat`) — then, when `returnState`, the final states per direction (forward then backward;
/// LSTM: h then c), each [N, units].
/// Weights per direction (backward ones suffixed "_backward"): "kernel" [gates·units, D],
/// "recurrentKernel" [gates·units, units], optional "bias" [gates·units] and, for GRU with
/// `resetAfter`, "recurrentBias" [gates·units]; gate blocks stacked in `RecurrentKind`'s order
/// (Keras' order, rows = output units: Keras kernels transposed).
public struct RecurrentAttributes: Codable, Hashable, Sendable {
    public var kind: RecurrentKind
    public var units: Int
    /// Output/candidate activation (Keras `activation`, default tanh).
    public var activation: Activation
    /// Gate activation (Keras `recurrent_activation`: sigmoid, or hard_sigmoid in Keras ≤ 2.2).
    public var recurrentActivation: Activation
    public var returnSequences: Bool
    public var returnState: Bool
    /// Process the sequence from the end (Keras `go_backwards`; the output sequence stays reversed).
    public var goBackwards: Bool
    /// GRU only: apply the reset gate after the recurrent matmul (Keras `reset_after`, TF2 default).
    public var resetAfter: Bool
    /// nil for a single direction; the merge mode for Keras `Bidirectional`.
    public var bidirectional: BidirectionalMerge?
    public var initialStates: Bool
    public var hasMask: Bool

    public init(kind: RecurrentKind, units: Int, activation: Activation = .tanh, recurrentActivation: Activation = .sigmoid,
                returnSequences: Bool = false, returnState: Bool = false, goBackwards: Bool = false, resetAfter: Bool = false,
                bidirectional: BidirectionalMerge? = nil, initialStates: Bool = false, hasMask: Bool = false) {
        self.kind = kind; self.units = units; self.activation = activation; self.recurrentActivation = recurrentActivation
        self.returnSequences = returnSequences; self.returnState = returnState; self.goBackwards = goBackwards
        self.resetAfter = resetAfter; self.bidirectional = bidirectional; self.initialStates = initialStates; self.hasMask = hasMask
    }

    /// Number of directions (1 or 2).
    public var directions: Int { bidirectional == nil ? 1 : 2 }
}

/// One operation of the graph IR. Each case documents its inputs, weights (by name in
/// `Node.weights`), attributes and output. Activations are channels-last with batch first.
public enum Op: Codable, Hashable, Sendable {
    case conv2d(Conv2DAttributes)
    case deconv2d(Deconv2DAttributes)
    case dense(DenseAttributes)
    case batchNorm(BatchNormAttributes)
    /// Elementwise activation; one input, same shape out.
    case activation(Activation)
    /// Softmax along `axis` (non-negative); one input, same shape out.
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
    /// Concatenation along `axis` (non-negative, batch is 0).
    case concat(axis: Int)
    /// Keras RepeatVector: [N, D] → [N, n, D].
    case repeatVector(n: Int)
    /// Output = input (Dropout and noise layers at inference; kept only where a name must survive).
    case identity
    case custom(CustomLayerAttributes)
    /// Recurrent layer (see `RecurrentAttributes`).
    case recurrent(RecurrentAttributes)
    /// Keras Embedding: indices x [N, L] (float values holding integers 0…vocab−1) → [N, L, D].
    /// Weight "weight" [D, vocab] (Core ML EmbeddingLayerParams layout: [outputChannels,
    /// inputDim]); an index outside 0…vocab−1 gives zeros (documented divergence from TF, which errors).
    case embedding(outputChannels: Int)
    /// Keras masking: x [N, T, …] → mask [N, T], 1 where any element of step t differs from
    /// `value`, else 0 (Keras `Masking(mask_value)`; Embedding `mask_zero` uses value 0 on [N, T]).
    case sequenceMask(value: Float)
    /// Multiplies each step of x [N, T, …] (input 0) by mask [N, T] (input 1): Keras `Masking`'s
    /// own output (masked steps become 0).
    case applyMask

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
        }
    }
}
