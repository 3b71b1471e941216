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
        }
    }
}
