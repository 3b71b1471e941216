import MLGraph

/// One valid sample node per op kind, with its input types: the fixtures of the tests that iterate
/// `OpKind.allCases` (shape rule, reference kernel, bundle round-trip, Core ML mapping). The switch
/// is exhaustive, so a new op kind does not compile the tests until it has a sample.
public enum OpSamples {
    /// Samples for `kind` (at least one; several where attributes change the encoding).
    public static func samples(for kind: OpKind) -> [(node: Node, inputs: [TensorType])] {
        func node(_ op: Op, _ inputs: Int = 1, outputs: Int = 1, weights: [String: ConstantTensor] = [:]) -> Node {
            Node(name: "sample_\(kind.rawValue)", op: op, inputs: (0..<inputs).map { "in\($0)" },
                 outputs: (0..<outputs).map { "out\($0)" }, weights: weights)
        }
        let nhwc = TensorType([1, 5, 6, 4])
        switch kind {
        case .conv2d:
            return [(node(.conv2d(Conv2DAttributes(kernel: [3, 2], strides: [2, 1], dilations: [1, 2], padding: .explicit(top: 1, bottom: 0, left: 2, right: 1),
                                                   groups: 2, outputChannels: 6, activation: .leakyReLU(alpha: 0.1))),
                          weights: ["weight": randomConstant([6, 2, 3, 2]), "bias": randomConstant([6], seed: 2)]), [nhwc]),
                    (node(.conv2d(Conv2DAttributes(kernel: [1, 1], padding: .same, outputChannels: 3)),
                          weights: ["weight": randomConstant([3, 4, 1, 1])]), [nhwc])]
        case .deconv2d:
            return [(node(.deconv2d(Deconv2DAttributes(kernel: [3, 3], strides: [2, 2], padding: .same, outputPadding: [1, 0],
                                                       outputChannels: 2, activation: .relu)),
                          weights: ["weight": randomConstant([4, 2, 3, 3]), "bias": randomConstant([2])]), [nhwc])]
        case .dense:
            return [(node(.dense(DenseAttributes(outputChannels: 3, activation: .gelu(approximate: false))),
                          weights: ["weight": randomConstant([3, 4]), "bias": randomConstant([3])]), [TensorType([2, 4])])]
        case .batchNorm:
            return [(node(.batchNorm(BatchNormAttributes(axis: 3, epsilon: 1e-3)),
                          weights: ["mean": randomConstant([4]), "variance": randomConstant([4], in: 0.5 ... 2),
                                    "gamma": randomConstant([4]), "beta": randomConstant([4])]), [nhwc])]
        case .activation:
            let all: [Activation] = [.linear(alpha: 2, beta: -1), .relu, .clippedReLU(maxValue: 6, negativeSlope: 0.1, threshold: 0.5),
                                     .clippedReLU(maxValue: nil, negativeSlope: 0, threshold: 0), .leakyReLU(alpha: 0.3), .elu(alpha: 1.5),
                                     .selu, .sigmoid, .hardSigmoid(alpha: 0.2, beta: 0.5), .tanh, .softplus, .softsign, .swish,
                                     .gelu(approximate: true), .gelu(approximate: false), .exponential, .thresholdedReLU(theta: 0.4),
                                     // MARK: elementwise math ops
                                     .mish, .hardSwish, .parametricSoftplus(alpha: 1.5, beta: 0.5), .scaledTanh(alpha: 1.7159, beta: 0.6667),
                                     .geluSigmoid, .logSigmoid]
            return all.map { (node(.activation($0)), [TensorType([2, 3, 4])]) }
        case .softmax:
            return [(node(.softmax(axis: 1)), [TensorType([2, 5, 3])])]
        case .prelu:
            return [(node(.prelu, weights: ["alpha": randomConstant([1, 1, 4])]), [nhwc])]
        case .pool2d:
            return [(node(.pool2d(Pool2DAttributes(kind: .max, kernel: [2, 2], strides: [2, 2], padding: .same))), [nhwc]),
                    (node(.pool2d(Pool2DAttributes(kind: .average, kernel: [3, 3], strides: [1, 1], padding: .valid))), [nhwc])]
        case .globalPool2d:
            return [(node(.globalPool2d(kind: .average, keepDims: true)), [nhwc]), (node(.globalPool2d(kind: .max, keepDims: false)), [nhwc])]
        case .pad:
            return [(node(.pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 2], [0, 1], [0, 0]], value: 0.5))), [nhwc]),
                    (node(.pad(PadAttributes(mode: .reflect, pads: [[0, 0], [2, 2], [1, 1], [0, 0]]))), [nhwc]),
                    (node(.pad(PadAttributes(mode: .edge, pads: [[0, 0], [1, 1], [1, 3], [0, 0]]))), [nhwc])]
        case .crop:
            return [(node(.crop(crops: [[0, 0], [1, 2], [0, 1], [0, 0]])), [nhwc])]
        case .upsample2d:
            return [UpsampleMode.nearest, .bilinearHalfPixel, .bilinearAlignCorners, .bilinearAsymmetric].map {
                (node(.upsample2d(Upsample2DAttributes(scale: [2, 3], mode: $0))), [nhwc])
            }
        case .reshape:
            return [(node(.reshape(targetShape: [-1, 8])), [nhwc])]
        case .transpose:
            return [(node(.transpose(perm: [0, 3, 1, 2])), [nhwc])]
        case .elementwise:
            return [ElementwiseKind.add, .subtract, .multiply, .average, .maximum, .minimum].map {
                (node(.elementwise($0), 2), [nhwc, TensorType([1, 1, 1, 4])])
            }
        case .concat:
            return [(node(.concat(axis: 3), 2), [nhwc, TensorType([1, 5, 6, 2])])]
        case .repeatVector:
            return [(node(.repeatVector(n: 3)), [TensorType([2, 4])])]
        case .identity:
            return [(node(.identity), [nhwc])]
        case .custom:
            return [(node(.custom(CustomLayerAttributes(className: "ResCropBlockLambda", description: "crop 2",
                                                        parameters: ["a": .double(1.5), "b": .string("x"), "c": .int(3), "d": .long(1 << 40), "e": .bool(true)],
                                                        outputShapes: [[1, 1, 2, 4]]))), [nhwc])]
        case .recurrent:
            return [(node(.recurrent(RecurrentAttributes(kind: .lstm, units: 3, returnSequences: true, bidirectional: .concat)),
                          weights: ["kernel": randomConstant([12, 4]), "recurrentKernel": randomConstant([12, 3]), "bias": randomConstant([12]),
                                    "kernel_backward": randomConstant([12, 4]), "recurrentKernel_backward": randomConstant([12, 3])]),
                     [TensorType([1, 5, 4])]),
                    (node(.recurrent(RecurrentAttributes(kind: .gru, units: 2, recurrentActivation: .hardSigmoid(alpha: 0.2, beta: 0.5),
                                                         returnState: true, goBackwards: true, resetAfter: true, hasMask: true)), 2, outputs: 2,
                          weights: ["kernel": randomConstant([6, 4]), "recurrentKernel": randomConstant([6, 2]),
                                    "bias": randomConstant([6]), "recurrentBias": randomConstant([6])]),
                     [TensorType([1, 5, 4]), TensorType([1, 5])])]
        case .embedding:
            return [(node(.embedding(outputChannels: 3), weights: ["weight": randomConstant([3, 10])]), [TensorType([2, 4])])]
        case .sequenceMask:
            return [(node(.sequenceMask(value: 0)), [TensorType([1, 5, 4])])]
        case .applyMask:
            return [(node(.applyMask, 2), [TensorType([1, 5, 4]), TensorType([1, 5])])]
        // MARK: elementwise math ops
        case .unary:
            return UnaryFunction.allCases.map {
                // scale and shift keep x' = 0.5x + 1.5 positive for inputs in [−1, 1] (finite sqrt, log, …).
                (node(.unary(UnaryAttributes($0, alpha: $0 == .power ? 3 : 0.25, epsilon: $0.milDefaultEpsilon, scale: 0.5, shift: 1.5))), [nhwc])
            }
        case .binary:
            // Two inputs where any values are fine; a constant y in [0.5, 2] (integers for pow) for the others.
            return BinaryFunction.allCases.map { f in
                switch f {
                case .add, .sub, .mul, .maximum, .minimum: return (node(.binary(f), 2), [nhwc, TensorType([1, 1, 1, 4])])
                case .pow: return (node(.binary(f), weights: ["y": ConstantTensor(shape: [4], floats: [2, 3, 1, 0])]), [nhwc])
                case .realDiv, .floorDiv, .mod: return (node(.binary(f), weights: ["y": randomConstant([6, 1], in: 0.5 ... 2)]), [nhwc])
                }
            } + [(node(.binary(.sub), 2), [TensorType([4]), TensorType([2, 3, 1])])]
        case .clip:
            return [(node(.clip(alpha: -1, beta: 2)), [nhwc]), (node(.clip(alpha: -.infinity, beta: 0.5)), [nhwc])]
        }
    }
}
