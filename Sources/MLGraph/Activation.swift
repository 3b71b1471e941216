/// An elementwise activation function, usable as a standalone `Op.activation` node or fused into
/// convolution / dense nodes (`Conv2DAttributes.activation`, `DenseAttributes.activation`).
///
/// Semantics follow Keras' definitions (tf.keras 2.x and Keras 3) and Core ML `ActivationParams`
/// (NeuralNetwork.proto) where both exist; each case documents its formula.
public enum Activation: Codable, Hashable, Sendable {
    /// y = alpha·x + beta. `linear(alpha: 1, beta: 0)` is the identity (Keras `linear`);
    /// Keras `Rescaling(scale, offset)` and the seed's `rescale_output` ((x+1)·127.5) lower to it.
    case linear(alpha: Float, beta: Float)
    /// y = max(x, 0).
    case relu
    /// Keras `ReLU` layer: y = maxValue if x ≥ maxValue; x if threshold ≤ x < maxValue;
    /// negativeSlope·(x − threshold) otherwise. `relu6` = clippedReLU(6, 0, 0).
    case clippedReLU(maxValue: Float?, negativeSlope: Float, threshold: Float)
    /// y = x if x ≥ 0 else alpha·x (Keras `LeakyReLU`, Core ML `leakyReLU`).
    case leakyReLU(alpha: Float)
    /// y = x if x > 0 else alpha·(eˣ − 1).
    case elu(alpha: Float)
    /// y = 1.0507009873554805·(x if x > 0 else 1.6732632423543772·(eˣ − 1)).
    case selu
    /// y = 1/(1 + e⁻ˣ).
    case sigmoid
    /// y = clip(alpha·x + beta, 0, 1). Keras 2: alpha 0.2, beta 0.5. Keras 3: alpha 1/6, beta 0.5
    /// (relu6(x+3)/6). Core ML `sigmoidHard` has the same (alpha, beta) form.
    case hardSigmoid(alpha: Float, beta: Float)
    /// y = tanh(x).
    case tanh
    /// y = log(1 + eˣ).
    case softplus
    /// y = x/(1 + |x|).
    case softsign
    /// y = x·sigmoid(x) (Keras `swish` / `silu`).
    case swish
    /// Exact: y = x·Φ(x) = 0.5x(1 + erf(x/√2)); approximate: 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))).
    case gelu(approximate: Bool)
    /// y = eˣ.
    case exponential
    /// y = x if x > theta else 0 (Keras `ThresholdedReLU`).
    case thresholdedReLU(theta: Float)
    // MARK: elementwise math ops (activations added with issue 9)
    /// y = x·tanh(softplus(x)) (Keras `mish`, MIL has none: ONNX `Mish`).
    case mish
    /// y = x·relu6(x + 3)/6 (Keras 3 `hard_silu` / `hard_swish`, ONNX `HardSwish`).
    case hardSwish
    /// y = alpha·log(1 + e^(beta·x)) (Core ML `ActivationParametricSoftplus`, MIL
    /// `softplus_parametric`). Scalar alpha and beta: Core ML's per-channel vectors import as this
    /// activation when uniform, else as softplus between per-channel scales.
    case parametricSoftplus(alpha: Float, beta: Float)
    /// y = alpha·tanh(beta·x) (Core ML `ActivationScaledTanh`, MIL `scaled_tanh`).
    case scaledTanh(alpha: Float, beta: Float)
    /// y = x·sigmoid(1.702·x) (MIL `gelu` mode SIGMOID_APPROXIMATION, Core ML `gelu` likewise).
    case geluSigmoid
    /// y = log(sigmoid(x)) = −softplus(−x) (Keras 3 `log_sigmoid`).
    case logSigmoid

    /// The identity, `linear(alpha: 1, beta: 0)`.
    public static let identity = Activation.linear(alpha: 1, beta: 0)

    public var isIdentity: Bool { self == .identity }

    /// Applies the activation to one value: the scalar definition that reference kernels use.
    @inlinable
    public func apply(_ x: Float) -> Float {
        switch self {
        case let .linear(alpha, beta): return alpha * x + beta
        case .relu: return x < 0 ? 0 : x  // NaN stays NaN, as tf.nn.relu
        case let .clippedReLU(maxValue, negativeSlope, threshold):
            if let m = maxValue, x >= m { return m }
            if x >= threshold { return x }
            return negativeSlope * (x - threshold)
        case let .leakyReLU(alpha): return x < 0 ? alpha * x : x  // NaN stays NaN
        case let .elu(alpha): return x > 0 ? x : alpha * (expf(x) - 1)
        case .selu:
            let scale: Float = 1.0507009873554805, alpha: Float = 1.6732632423543772
            return scale * (x > 0 ? x : alpha * (expf(x) - 1))
        case .sigmoid: return 1 / (1 + expf(-x))
        case let .hardSigmoid(alpha, beta): return Swift.min(1, Swift.max(0, alpha * x + beta))
        case .tanh: return tanhf(x)
        case .softplus:
            // log1p(exp(x)) without overflow for large x.
            return x > 20 ? x : log1pf(expf(x))
        case .softsign: return x / (1 + abs(x))
        case .swish: return x / (1 + expf(-x))
        case let .gelu(approximate):
            if approximate {
                let c: Float = 0.7978845608028654  // sqrt(2/pi)
                return 0.5 * x * (1 + tanhf(c * (x + 0.044715 * x * x * x)))
            }
            return 0.5 * x * (1 + erff(x / 1.4142135623730951))
        case .exponential: return expf(x)
        case let .thresholdedReLU(theta): return x > theta ? x : 0
        case .mish: return x * tanhf(Activation.softplusValue(x))
        case .hardSwish: return x * Swift.min(6, Swift.max(0, x + 3)) / 6
        case let .parametricSoftplus(alpha, beta): return alpha * Activation.softplusValue(beta * x)
        case let .scaledTanh(alpha, beta): return alpha * tanhf(beta * x)
        case .geluSigmoid: return x / (1 + expf(-1.702 * x))
        case .logSigmoid: return -Activation.softplusValue(-x)
        }
    }

    /// log(1 + eˣ) without overflow for large x.
    @inlinable
    static func softplusValue(_ x: Float) -> Float {
        x > 20 ? x : log1pf(expf(x))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
