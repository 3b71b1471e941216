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
        // MARK: shape and data movement ops (issue 9)
        case .matmul:
            return [(node(.matmul(MatMulAttributes()), 2), [TensorType([2, 1, 3, 4]), TensorType([5, 4, 2])]),
                    (node(.matmul(MatMulAttributes(transposeX: true, transposeY: true)), 1, weights: ["y": randomConstant([3, 5])]),
                     [TensorType([2, 5, 4])])]
        case .constant:
            return [(node(.constant, 0, weights: ["value": randomConstant([2, 3, 4])]), [])]
        case .squeeze:
            return [(node(.squeeze(axes: [-2])), [TensorType([2, 3, 1, 4])]), (node(.squeeze(axes: [])), [TensorType([1, 3, 1, 4])])]
        case .expandDims:
            return [(node(.expandDims(axes: [0, -1])), [TensorType([2, 3])])]
        case .stack:
            return [(node(.stack(axis: -1), 3), [TensorType([2, 3]), TensorType([2, 3]), TensorType([2, 3])])]
        case .split:
            return [(node(.split(SplitAttributes(axis: 1, numSplits: 2)), outputs: 2), [TensorType([2, 4, 3])]),
                    (node(.split(SplitAttributes(axis: -1, splitSizes: [1, 2])), outputs: 2), [TensorType([2, 4, 3])])]
        case .sliceByIndex:
            return [(node(.sliceByIndex(SliceByIndexAttributes(begin: [0, -1, 1], end: [2, 0, 0], stride: [1, -2, 1],
                                                               endMask: [false, false, true], squeezeMask: [false, false, false]))),
                     [TensorType([2, 5, 4])]),
                    (node(.sliceByIndex(SliceByIndexAttributes(begin: [1, 0, 0], end: [2, 5, 4], stride: [1, 1, 2],
                                                               beginMask: [false, true, false], squeezeMask: [true, false, false]))),
                     [TensorType([2, 5, 4])])]
        case .sliceBySize:
            return [(node(.sliceBySize(begin: [0, -3, 1], size: [2, -1, 2])), [TensorType([2, 5, 4])])]
        case .tile:
            return [(node(.tile(reps: [1, 2, 3])), [TensorType([2, 3, 2])])]
        case .spaceToDepth:
            return [(node(.spaceToDepth(blockSize: 2)), [TensorType([1, 4, 6, 3])])]
        case .depthToSpace:
            return [(node(.depthToSpace(blockSize: 2)), [TensorType([1, 2, 3, 8])])]
        case .resize:
            return [(node(.resize(ResizeAttributes(method: .bilinear, samplingMode: .halfPixel, size: [7, 3]))), [nhwc]),
                    (node(.resize(ResizeAttributes(method: .nearest, samplingMode: .asymmetric, scale: [1.5, 0.5]))), [nhwc])]
        case .bandPart:
            return [(node(.bandPart(lower: 1, upper: -1)), [TensorType([2, 4, 5])])]
        case .cumsum:
            return [(node(.cumsum(CumsumAttributes(axis: -2, exclusive: true, reverse: true))), [TensorType([2, 4, 5])])]
        // MARK: reductions and normalisation ops
        case .reduce:
            return [(node(.reduce(ReduceAttributes(function: .sum, axes: [1, -2], keepDims: true))), [nhwc]),
                    (node(.reduce(ReduceAttributes(function: .logSumExp, axes: [-1]))), [nhwc]),
                    (node(.reduce(ReduceAttributes(function: .max, axes: []))), [nhwc])]
        case .logSoftmax:
            return [(node(.logSoftmax(axis: -1)), [TensorType([2, 5, 3])])]
        case .layerNorm:
            return [(node(.layerNorm(LayerNormAttributes(axes: [-2, -1], epsilon: 1e-5)),
                          weights: ["gamma": randomConstant([6, 4]), "beta": randomConstant([6, 4], seed: 3)]), [nhwc]),
                    (node(.layerNorm(LayerNormAttributes(axes: [1]))), [TensorType([2, 5, 3])])]
        case .instanceNorm:
            return [(node(.instanceNorm(epsilon: 1e-3), weights: ["gamma": randomConstant([4]), "beta": randomConstant([4], seed: 4)]), [nhwc])]
        case .l2Norm:
            return [(node(.l2Norm(L2NormAttributes(axes: [-3, -2, -1]))), [nhwc])]
        case .localResponseNorm:
            return [(node(.localResponseNorm(LocalResponseNormAttributes(size: 3, alpha: 1e-2, beta: 0.75, k: 2))), [nhwc])]
        // MARK: typed ops
        case .cast:
            return [(node(.cast(to: .int32)), [TensorType([2, 3, 4])]), (node(.cast(to: .float32)), [TensorType([2, 3], .int64)]),
                    (node(.cast(to: .bool)), [TensorType([2, 3])]), (node(.cast(to: .float16)), [TensorType([2, 3], .int32)]),
                    (node(.cast(to: .int64)), [TensorType([2, 3], .bool)])]
        case .argmax:
            return [(node(.argmax(ArgReduceAttributes(axis: -1))), [TensorType([2, 3, 4])]),
                    (node(.argmax(ArgReduceAttributes(axis: 1, keepDims: true))), [TensorType([2, 3, 4], .int32)])]
        case .argmin:
            return [(node(.argmin(ArgReduceAttributes(axis: 0))), [TensorType([2, 3, 4])])]
        case .compare:
            return CompareFunction.allCases.map { (node(.compare($0), 2), [nhwc, TensorType([1, 1, 1, 4])]) }
                + [(node(.compare(.less), 2), [TensorType([2, 3], .int32), TensorType([3], .int32)])]
        case .logical:
            return [LogicalFunction.and, .or, .xor].map { (node(.logical($0), 2), [TensorType([2, 3], .bool), TensorType([3], .bool)]) }
                + [(node(.logical(.not)), [TensorType([2, 3], .bool)])]
        case .select:
            return [(node(.select, 3), [TensorType([2, 1, 4], .bool), TensorType([2, 3, 4]), TensorType([4])])]
        case .gather:
            return [(node(.gather(axis: 1), 2), [TensorType([2, 5, 3]), TensorType([4], .int32)]),
                    (node(.gather(axis: -1), 2), [TensorType([2, 3], .int32), TensorType([2, 2], .int64)])]
        case .gatherND:
            return [(node(.gatherND, 2), [TensorType([3, 4, 5]), TensorType([2, 2], .int32)])]
        case .gatherAlongAxis:
            return [(node(.gatherAlongAxis(axis: 1), 2), [TensorType([2, 4, 3]), TensorType([2, 2, 3], .int64)])]
        case .oneHot:
            return [(node(.oneHot(OneHotAttributes(depth: 4))), [TensorType([2, 3], .int32)]),
                    (node(.oneHot(OneHotAttributes(depth: 3, axis: 0, onValue: 2, offValue: -1))), [TensorType([2, 3], .int64)])]
        case .range1d:
            return [(node(.range1d(RangeAttributes(start: 0, end: 5, step: 1, elementType: .int32)), 0), []),
                    (node(.range1d(RangeAttributes(start: 1, end: -1, step: -0.25)), 0), [])]
        case .fill:
            return [(node(.fill(FillAttributes(shape: [2, 3], value: 1.5)), 0), []),
                    (node(.fill(FillAttributes(shape: [4], value: 7, elementType: .int64)), 0), [])]
        case .topk:
            return [(node(.topk(TopKAttributes(k: 2)), outputs: 2), [TensorType([2, 5])]),
                    (node(.topk(TopKAttributes(k: 3, axis: 0, ascending: true)), outputs: 2), [TensorType([4, 2], .int32)])]
        // MARK: elementwise math ops
        case .unary:
            return UnaryFunction.allCases.map {
                // scale and shift keep x' = 0.5x + 1.5 positive for inputs in [−1, 1] (finite sqrt, log, acosh, …);
                // asin, acos and atanh take x' = 0.5x in (−1, 1).
                let inUnitInterval: Set<UnaryFunction> = [.asin, .acos, .atanh]
                let shift: Float = inUnitInterval.contains($0) ? 0 : 1.5
                return (node(.unary(UnaryAttributes($0, alpha: $0 == .power ? 3 : 0.25, epsilon: $0.milDefaultEpsilon, scale: 0.5, shift: shift))), [nhwc])
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
        // MARK: scatter, reverse, sort, einsum, windows, NMS ops
        case .scatter:
            return ScatterMode.allCases.map { m in
                (node(.scatter(ScatterAttributes(axis: 1, mode: m)), 3), [TensorType([2, 4, 3]), TensorType([5], .int32), TensorType([2, 5, 3])])
            } + [(node(.scatter(ScatterAttributes(axis: -1, mode: .max)), 3), [TensorType([3, 4], .int32), TensorType([2, 2], .int64), TensorType([3, 2, 2], .int32)])]
        case .scatterND:
            return [(node(.scatterND(mode: .add), 3), [TensorType([3, 4, 5]), TensorType([2, 2], .int32), TensorType([2, 5])]),
                    (node(.scatterND(mode: .update), 3), [TensorType([3, 4], .int64), TensorType([3, 2], .int64), TensorType([3], .int64)])]
        case .scatterAlongAxis:
            return [(node(.scatterAlongAxis(ScatterAttributes(axis: 1, mode: .mul)), 3), [TensorType([2, 4, 3]), TensorType([2, 2, 3], .int64), TensorType([2, 2, 3])]),
                    (node(.scatterAlongAxis(ScatterAttributes(axis: 0, mode: .update)), 3), [TensorType([3, 2], .int32), TensorType([4, 2], .int32), TensorType([4, 2], .int32)])]
        case .reverse:
            return [(node(.reverse(axes: [1, -1])), [nhwc]), (node(.reverse(axes: [])), [TensorType([3, 2], .int64)])]
        case .reverseSequence:
            return [(node(.reverseSequence(seqAxis: 1, batchAxis: 0), 2), [TensorType([2, 5, 3]), TensorType([2], .int32)]),
                    (node(.reverseSequence(seqAxis: 0, batchAxis: -1), 2), [TensorType([4, 3], .int32), TensorType([3], .int64)])]
        case .argsort:
            return [(node(.argsort(axis: -1, ascending: false)), [TensorType([2, 5])]),
                    (node(.argsort(axis: 0, ascending: true)), [TensorType([4, 2], .int32)])]
        case .einsum:
            return [(node(.einsum(equation: "bij,bjk->bik"), 2), [TensorType([2, 3, 4]), TensorType([2, 4, 5])]),
                    (node(.einsum(equation: "ii->i")), [TensorType([4, 4])]),
                    (node(.einsum(equation: "ij,kj"), 2), [TensorType([2, 3]), TensorType([4, 3])])]
        case .slidingWindows:
            return [(node(.slidingWindows(SlidingWindowsAttributes(axis: 1, size: 3, stride: 2))), [TensorType([2, 7, 3])]),
                    (node(.slidingWindows(SlidingWindowsAttributes(axis: -1, size: 2))), [TensorType([3, 4], .int32)])]
        case .nonMaximumSuppression:
            return [(node(.nonMaximumSuppression(NonMaximumSuppressionAttributes(iouThreshold: 0.5, scoreThreshold: 0.1, maxBoxes: 3)), 2, outputs: 4),
                     [TensorType([2, 6, 4]), TensorType([2, 6, 3])]),
                    (node(.nonMaximumSuppression(NonMaximumSuppressionAttributes(iouThreshold: 0.3, scoreThreshold: -.infinity, maxBoxes: 8,
                                                                                  perClassSuppression: true)), 2, outputs: 4),
                     [TensorType([1, 5, 4]), TensorType([1, 5, 2])])]
        // MARK: control flow and dynamic shapes
        case .cond:
            // then: relu(x); else: tanh(x). Predicate bool, or a number (non-zero is true).
            let then = Block(inputs: ["x"], nodes: [Node(name: "then_relu", op: .activation(.relu), inputs: ["x"], outputs: ["y"])], outputs: ["y"])
            let otherwise = Block(inputs: ["x"], nodes: [Node(name: "else_tanh", op: .activation(.tanh), inputs: ["x"], outputs: ["y"])], outputs: ["y"])
            var n = node(.cond, 2)
            n.blocks = [then, otherwise]
            return [(n, [TensorType([1], .bool), TensorType([2, 3])]), (n, [TensorType([1]), TensorType([2, 3])])]
        case .whileLoop:
            // while i < 3 { i += 1; acc = 0.5·acc + 1 }
            let c = Block(inputs: ["i", "acc"], nodes: [
                Node(name: "three", op: .fill(FillAttributes(shape: [1], value: 3)), inputs: [], outputs: ["three"]),
                Node(name: "less", op: .compare(.less), inputs: ["i", "three"], outputs: ["p"]),
            ], outputs: ["p"])
            let body = Block(inputs: ["i", "acc"], nodes: [
                Node(name: "next_i", op: .binary(.add), inputs: ["i"], outputs: ["i1"], weights: ["y": ConstantTensor(shape: [1], floats: [1])]),
                Node(name: "next_acc", op: .activation(.linear(alpha: 0.5, beta: 1)), inputs: ["acc"], outputs: ["acc1"]),
            ], outputs: ["i1", "acc1"])
            var n = node(.whileLoop, 2, outputs: 2)
            n.blocks = [c, body]
            return [(n, [TensorType([1]), TensorType([2, 3])])]
        case .makeList:
            return [(node(.makeList(MakeListAttributes(elementShape: [2, 3], length: 2, dynamicLength: false)), 0), []),
                    (node(.makeList(MakeListAttributes(elementShape: [4, 5], elementType: .int32)), 1), [TensorType([1], .int32)])]
        case .listRead:
            return [(node(.listRead, 2), [.list(elementShape: [2, 3]), TensorType([1], .int32)])]
        case .listWrite:
            return [(node(.listWrite, 3), [.list(elementShape: [2, 3]), TensorType([1], .int32), TensorType([2, 3])])]
        case .listGather:
            return [(node(.listGather, 2), [.list(elementShape: [2, 3]), TensorType([2], .int32)])]
        case .listScatter:
            return [(node(.listScatter, 3), [.list(elementShape: [2, 3]), TensorType([2], .int32), TensorType([2, 2, 3])])]
        case .listLength:
            return [(node(.listLength), [.list(elementShape: [2, 3])])]
        case .shape:
            return [(node(.shape), [nhwc]), (node(.shape), [TensorType([3], .int64)])]
        // MARK: convolution and pooling in 1-D and 3-D
        case .conv1d:
            return [(node(.conv1d(ConvNDAttributes(kernel: [3], strides: [2], dilations: [1], padding: .explicit(before: [2], after: [1]),
                                                   groups: 2, outputChannels: 6, activation: .relu)),
                          weights: ["weight": randomConstant([6, 2, 3]), "bias": randomConstant([6], seed: 2)]), [TensorType([2, 9, 4])]),
                    (node(.conv1d(ConvNDAttributes(kernel: [2], dilations: [3], padding: .same, outputChannels: 3)),
                          weights: ["weight": randomConstant([3, 4, 2])]), [TensorType([1, 7, 4])])]
        case .conv3d:
            return [(node(.conv3d(ConvNDAttributes(kernel: [2, 3, 1], strides: [1, 2, 1], dilations: [2, 1, 1],
                                                   padding: .explicit(before: [1, 0, 1], after: [0, 2, 0]), groups: 2, outputChannels: 4,
                                                   activation: .tanh)),
                          weights: ["weight": randomConstant([4, 2, 2, 3, 1]), "bias": randomConstant([4], seed: 3)]), [TensorType([1, 4, 5, 3, 4])]),
                    (node(.conv3d(ConvNDAttributes(kernel: [1, 2, 2], padding: .same, outputChannels: 2)),
                          weights: ["weight": randomConstant([2, 4, 1, 2, 2])]), [TensorType([2, 3, 4, 4, 4])])]
        case .pool1d:
            return [(node(.pool1d(PoolNDAttributes(kind: .max, kernel: [3], strides: [2], padding: .same))), [TensorType([2, 7, 3])]),
                    (node(.pool1d(PoolNDAttributes(kind: .average, kernel: [2], strides: [1], padding: .explicit(before: [1], after: [1])))),
                     [TensorType([1, 5, 4])])]
        case .pool3d:
            return [(node(.pool3d(PoolNDAttributes(kind: .average, kernel: [2, 2, 2], strides: [2, 2, 2], padding: .same))),
                     [TensorType([1, 3, 4, 5, 2])]),
                    (node(.pool3d(PoolNDAttributes(kind: .max, kernel: [1, 3, 2], strides: [1, 1, 2], padding: .valid))),
                     [TensorType([2, 2, 4, 4, 3])])]
        case .deconv1d:
            return [(node(.deconv1d(DeconvNDAttributes(kernel: [3], strides: [2], padding: .same, outputPadding: [1],
                                                       outputChannels: 4, activation: .relu)),
                          weights: ["weight": randomConstant([6, 4, 3]), "bias": randomConstant([4])]), [TensorType([1, 5, 6])]),
                    (node(.deconv1d(DeconvNDAttributes(kernel: [2], strides: [1], padding: .valid, groups: 2, outputChannels: 4)),
                          weights: ["weight": randomConstant([6, 2, 2])]), [TensorType([1, 5, 6])])]
        case .reshapeND:
            return [(node(.reshapeND(shape: [2, -1])), [TensorType([1, 2, 3, 2])]), (node(.reshapeND(shape: [])), [TensorType([1, 1])])]
        case .deconv3d:
            return [(node(.deconv3d(DeconvNDAttributes(kernel: [2, 3, 3], strides: [2, 1, 2], padding: .same, outputPadding: [1, 0, 0],
                                                       groups: 2, outputChannels: 4, activation: .relu)),
                          weights: ["weight": randomConstant([4, 2, 2, 3, 3]), "bias": randomConstant([4], seed: 4)]), [TensorType([1, 3, 4, 3, 4])]),
                    (node(.deconv3d(DeconvNDAttributes(kernel: [1, 2, 2], strides: [1, 2, 2], dilations: [1, 1, 2],
                                                       padding: .explicit(before: [0, 1, 0], after: [0, 0, 1]), outputChannels: 2)),
                          weights: ["weight": randomConstant([3, 2, 1, 2, 2])]), [TensorType([2, 2, 3, 3, 3])])]
        // MARK: random ops
        case .random:
            return [(node(.random(RandomAttributes(.normal(mean: 0.5, stdDev: 2), seed: 7))), [nhwc]),
                    (node(.random(RandomAttributes(.uniform(low: -1, high: 3), seed: -1))), [TensorType([3, 5])]),
                    (node(.random(RandomAttributes(.bernoulli(probability: 0.25), seed: 42))), [TensorType([4, 2], .int32)])]
        }
    }
}

extension OpSamples {
    /// A graph holding every sample of `kind`, each node reading its own graph inputs and every
    /// output a graph output; shapes inferred.
    public static func graph(for kind: OpKind) throws -> Graph {
        var inputs: [ValueInfo] = [], nodes: [Node] = [], outputs: [String] = []
        for (i, (sample, types)) in samples(for: kind).enumerated() {
            var node = sample
            node.name = "\(kind.rawValue)_\(i)"
            node.inputs = types.indices.map { "\(node.name)_in\($0)" }
            node.outputs = sample.outputs.indices.map { "\(node.name)_out\($0)" }
            inputs += zip(node.inputs, types).map { ValueInfo(name: $0, type: $1) }
            outputs += node.outputs
            nodes.append(node)
        }
        var g = Graph(inputs: inputs, outputs: outputs, nodes: nodes)
        try g.inferShapes()
        return g
    }
}
