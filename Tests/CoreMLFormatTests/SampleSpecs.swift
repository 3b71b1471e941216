// Small specs built in Swift for repo-only tests (no ../shared needed).
@testable import CoreMLFormat

enum SampleSpecs {
    static func w(_ values: [Float]) -> Spec.WeightParams { Spec.WeightParams(values) }

    /// One layer of every typed case of `NeuralNetworkLayer.Layer` (except .none/.unsupported),
    /// with non-default parameters so every field is exercised.
    static var everyLayer: [Spec.NeuralNetworkLayer.Layer] {
        let act = Spec.ActivationParams(.sigmoid)
        let lstmWeights: Spec.LSTMWeightParams = {
            var p = Spec.LSTMWeightParams()
            let all: [WritableKeyPath<Spec.LSTMWeightParams, Spec.WeightParams?>] = [
                \.inputGateWeightMatrix, \.forgetGateWeightMatrix, \.blockInputWeightMatrix, \.outputGateWeightMatrix,
                \.inputGateRecursionMatrix, \.forgetGateRecursionMatrix, \.blockInputRecursionMatrix,
                \.outputGateRecursionMatrix, \.inputGateBiasVector, \.forgetGateBiasVector, \.blockInputBiasVector,
                \.outputGateBiasVector, \.inputGatePeepholeVector, \.forgetGatePeepholeVector, \.outputGatePeepholeVector,
            ]
            for (i, kp) in all.enumerated() { p[keyPath: kp] = w([Float(i), 0.5]) }
            return p
        }()
        var layers: [Spec.NeuralNetworkLayer.Layer] = [
            .convolution(.init(outputChannels: 2, kernelChannels: 1, nGroups: 1, kernelSize: [1, 1], stride: [2, 2],
                               dilationFactor: [1, 1], padding: .same(.init(asymmetryMode: .topLeftHeavy)), isDeconvolution: false,
                               hasBias: true, weights: w([1, 2]), bias: w([0.5, -0.5]))),
            .convolution(.init(outputChannels: 1, kernelChannels: 1, kernelSize: [3, 3],
                               padding: .valid(.init(paddingAmounts: .init([.init(startEdgeSize: 1, endEdgeSize: 2),
                                                                             .init(startEdgeSize: 3, endEdgeSize: 4)]))),
                               isDeconvolution: true, weights: w(Array(repeating: 0.25, count: 9)), outputShape: [7, 7])),
            .pooling(.init(type: .average, kernelSize: [2, 2], stride: [2, 2], padding: .includeLastPixel(.init(paddingAmounts: [1, 0])),
                           avgPoolExcludePadding: true, globalPooling: false)),
            .pooling(.init(type: .l2, kernelSize: [3, 3], stride: [1, 1], padding: .valid(.init()), globalPooling: true)),
            .innerProduct(.init(inputChannels: 2, outputChannels: 1, hasBias: true,
                                weights: .init(float16Value: Spec.encodeFloat16([1, -2])), bias: .init(float16Value: Spec.encodeFloat16([0.5])),
                                int8DynamicQuantize: false)),
            .embedding(.init(inputDim: 3, outputChannels: 1, hasBias: false, weights: w([1, 2, 3]))),
            .batchnorm(.init(channels: 2, computeMeanVar: true, instanceNormalization: true, epsilon: 1e-3,
                             gamma: w([1, 1]), beta: w([0, 0]), mean: w([0, 1]), variance: w([1, 2]))),
            .mvn(.init(acrossChannels: true, normalizeVariance: true, epsilon: 1e-5)),
            .l2normalize(epsilon: 1e-6),
            .softmax,
            .lrn(.init(alpha: 1e-4, beta: 0.75, localSize: 5, k: 2)),
            .crop(.init(cropAmounts: .init([.init(startEdgeSize: 1, endEdgeSize: 1)]), offset: [0, 2])),
            .padding(.init(paddingAmounts: .init([.init(startEdgeSize: 2, endEdgeSize: 2)]), paddingType: .constant(.init(value: 1.5)))),
            .padding(.init(paddingAmounts: nil, paddingType: .reflection(.init()))),
            .padding(.init(paddingAmounts: .init(), paddingType: .replication(.init()))),
            .upsample(.init(scalingFactor: [2, 3], fractionalScalingFactor: [1.5, 2.5], mode: .bilinear,
                            linearUpsampleMode: .alignCornersTrue)),
            .resizeBilinear(.init(targetSize: [10, 20], mode: .init(samplingMethod: .alignEndpointsMode))),
            .resizeBilinear(.init(targetSize: [5, 5], mode: nil)),
            .unary(.init(type: .power, alpha: 2, epsilon: 1e-6, shift: 1, scale: 3)),
            .add(alpha: 1), .multiply(alpha: 2), .average,
            .scale(.init(shapeScale: [2], scale: w([1, 2]), hasBias: true, shapeBias: [2], bias: w([3, 4]))),
            .bias(.init(shape: [1], bias: w([7]))),
            .max, .min, .dot(cosineSimilarity: true),
            .reduce(.init(mode: .argmax, epsilon: 1e-6, axis: .hw)),
            .loadConstant(.init(shape: [1, 1, 2], data: w([1, 2]))),
            .reshape(.init(targetShape: [1, 2, 3, 4], mode: .channelLast)),
            .flatten(mode: .channelLast),
            .permute(axis: [0, 3, 1, 2]),
            .concat(sequenceConcat: true),
            .split(nOutputs: 3),
            .sequenceRepeat(nRepetitions: 4),
            .reorganizeData(.init(mode: .pixelShuffle, blockSize: 2)),
            .slice(.init(startIndex: 1, endIndex: -1, stride: 2, axis: .widthAxis)),
            .simpleRecurrent(.init(inputVectorSize: 2, outputVectorSize: 1, activation: Spec.ActivationParams(.tanh),
                                   sequenceOutput: true, hasBiasVector: true, weightMatrix: w([1, 2]),
                                   recursionMatrix: w([3]), biasVector: w([4]), reverseInput: true)),
            .gru(.init(inputVectorSize: 1, outputVectorSize: 1, activations: [act, Spec.ActivationParams(.tanh)],
                       sequenceOutput: true, hasBiasVectors: true, updateGateWeightMatrix: w([1]),
                       resetGateWeightMatrix: w([2]), outputGateWeightMatrix: w([3]), updateGateRecursionMatrix: w([4]),
                       resetGateRecursionMatrix: w([5]), outputGateRecursionMatrix: w([6]), updateGateBiasVector: w([7]),
                       resetGateBiasVector: w([8]), outputGateBiasVector: w([9]), reverseInput: true)),
            .uniDirectionalLSTM(.init(inputVectorSize: 2, outputVectorSize: 1,
                                      activations: [act, Spec.ActivationParams(.tanh), Spec.ActivationParams(.tanh)],
                                      params: .init(sequenceOutput: true, hasBiasVectors: true, forgetBias: true,
                                                    hasPeepholeVectors: true, coupledInputAndForgetGate: true,
                                                    cellClipThreshold: 50),
                                      weightParams: lstmWeights, reverseInput: true)),
            .biDirectionalLSTM(.init(inputVectorSize: 2, outputVectorSize: 1, activationsForwardLSTM: [act],
                                     activationsBackwardLSTM: [Spec.ActivationParams(.relu)],
                                     params: .init(sequenceOutput: true), weightParams: [lstmWeights, lstmWeights])),
            .custom(.init(className: "Swish", weights: [w([1]), .init(rawValue: [1, 2, 3])],
                          parameters: [.init(key: "d", paramValue: .double(0.5)), .init(key: "s", paramValue: .string("x")),
                                       .init(key: "i", paramValue: .int(-3)), .init(key: "l", paramValue: .long(1 << 40)),
                                       .init(key: "b", paramValue: .bool(true)), .init(key: "z", paramValue: .double(0))],
                          description: "a custom layer")),
            .clip(minVal: -1, maxVal: 6),
            .gelu(mode: .tanhApproximation),
            .tile(reps: [1, 2]), .stack(axis: -1), .gather(axis: 1), .softmaxND(axis: -1),
            .splitND(.init(axis: 1, numSplits: 2, splitSizes: [1, 3])),
            .concatND(axis: -3, interleave: true),
            .transpose(axes: [0, 2, 1]),
            .sliceStatic(.init(beginIds: [0, 1], beginMasks: [true, false], endIds: [-1, 2], endMasks: [false, true],
                               strides: [1, 2], squeezeMasks: [false, true])),
            .argMax(axis: 2, removeDim: true),
            .embeddingND(.init(vocabSize: 4, embeddingSize: 2, hasBias: true, weights: w(Array(repeating: 1, count: 8)),
                               bias: w([0, 1]))),
            .batchedMatmul(.init(transposeA: true, transposeB: true, weightMatrixFirstDimension: 2,
                                 weightMatrixSecondDimension: 1, hasBias: true, weights: w([1, 2]), bias: w([3]),
                                 int8DynamicQuantize: true)),
            .loadConstantND(.init(shape: [2], data: w([5, 6]))),
            .squeeze(axes: [0, -1], squeezeAll: true),
            .expandDims(axes: [1]),
            .flattenTo2D(axis: 1),
            .reshapeStatic(targetShape: [1, -1]),
            .constantPad(.init(value: 2, padAmounts: [1, 1, 0, 2], padToGivenOutputSizeMode: true)),
            .layerNormalization(.init(normalizedShape: [2], eps: 1e-5, gamma: w([1, 1]), beta: w([0, 0]))),
            .clampedReLU(alpha: 0.1, beta: 6),
        ]
        let nonlinearities: [Spec.ActivationParams.Nonlinearity] = [
            .linear(alpha: 2, beta: 1), .relu, .leakyReLU(alpha: 0.3), .thresholdedReLU(alpha: 1),
            .preLU(alpha: w([0.1, 0.2])), .tanh, .scaledTanh(alpha: 1.7, beta: 0.6), .sigmoid,
            .sigmoidHard(alpha: 0.2, beta: 0.5), .elu(alpha: 1), .softsign, .softplus,
            .parametricSoftplus(alpha: w([1]), beta: w([2])),
        ]
        layers += nonlinearities.map { .activation(Spec.ActivationParams($0)) }
        layers += Spec.SimpleLayerKind.all.sorted().map { .simple(Spec.SimpleLayerKind(rawValue: $0)) }
        layers += Spec.ReduceNDOperation.all.sorted().map {
            .reduceND(Spec.ReduceNDOperation(rawValue: $0), .init(axes: [1, -1], keepDims: true, reduceAll: false))
        }
        return layers
    }

    static func network(_ layers: [Spec.NeuralNetworkLayer.Layer]) -> Spec.NeuralNetwork {
        var blob = "input"
        let nnLayers = layers.enumerated().map { i, l -> Spec.NeuralNetworkLayer in
            let out = "blob\(i)"
            defer { blob = out }
            return Spec.NeuralNetworkLayer(name: "layer\(i)_\(l.typeName)", input: [blob], output: [out], layer: l,
                                           inputTensor: i == 0 ? [Spec.Tensor(rank: 3, dimValue: [3, 8, 8])] : [],
                                           outputTensor: [], isUpdatable: i == 1)
        }
        return Spec.NeuralNetwork(
            layers: nnLayers,
            preprocessing: [Spec.NeuralNetworkPreprocessing(
                featureName: "input",
                preprocessor: .scaler(Spec.ImageScaler(channelScale: 1 / 127.5, blueBias: -1, greenBias: -1,
                                                       redBias: -1, grayBias: 0)))],
            arrayInputShapeMapping: .exact, imageInputShapeMapping: .rank4)
    }

    /// A classifier using most description features.
    static var classifier: Spec.Model {
        let image = Spec.FeatureType(.image(Spec.ImageFeatureType(
            width: 8, height: 8, colorSpace: .bgr,
            sizeFlexibility: .enumeratedSizes([.init(width: 8, height: 8), .init(width: 16, height: 16)]))))
        let array = Spec.FeatureType(.multiArray(Spec.ArrayFeatureType(
            shape: [1, 3], dataType: .float32,
            shapeFlexibility: .shapeRange([.init(lowerBound: 1, upperBound: -1), .init(lowerBound: 3, upperBound: 3)]),
            defaultValue: .float(0.5))), isOptional: true)
        let description = Spec.ModelDescription(
            input: [Spec.FeatureDescription(name: "input", shortDescription: "an image", type: image),
                    Spec.FeatureDescription(name: "extra", type: array)],
            output: [Spec.FeatureDescription(name: "probs", type: Spec.FeatureType(.dictionary(.init(keyType: .string)))),
                     Spec.FeatureDescription(name: "label", type: Spec.FeatureType(.string)),
                     Spec.FeatureDescription(name: "tokens", type: Spec.FeatureType(.sequence(.init(
                         elementType: .int64, sizeRange: .init(lowerBound: 0, upperBound: -1)))))],
            predictedFeatureName: "label", predictedProbabilitiesName: "probs",
            trainingInput: [Spec.FeatureDescription(name: "target", type: Spec.FeatureType(.int64))],
            metadata: Spec.Metadata(shortDescription: "test model", versionString: "1.0", author: "mlconv",
                                    license: "MIT", userDefined: [.init(key: "b", value: "2"), .init(key: "a", value: "1")]))
        let nn = Spec.NeuralNetworkClassifier(network: network(everyLayer), classLabels: .strings(["cat", "dog"]),
                                              labelProbabilityLayerName: "blob3")
        return Spec.Model(specificationVersion: 4, description: description, isUpdatable: false,
                          type: .neuralNetworkClassifier(nn))
    }

    /// A pipeline with nested and opaque stages.
    static var pipeline: Spec.Model {
        let inner = Spec.Model(specificationVersion: 1, type: .neuralNetworkRegressor(.init(network: network([.softmax]))))
        // GLMRegressor content as Apple defines it: weights = [DoubleArray [1.0]], offset = [2.0].
        let opaque = Spec.Model(specificationVersion: 3, type: .other(kind: .glmRegressor, content: [
            Spec.UnknownField(fieldNumber: 1, wireType: .lengthDelimited,
                              data: [10, 0x0a, 0x08, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]),
            Spec.UnknownField(fieldNumber: 2, wireType: .lengthDelimited, data: [8, 0, 0, 0, 0, 0, 0, 0, 0x40]),
        ]))
        return Spec.Model(specificationVersion: 3,
                          description: Spec.ModelDescription(input: [.init(name: "x", type: .init(.double))],
                                                             output: [.init(name: "y", type: .init(.double))]),
                          type: .pipelineRegressor(.init(pipeline: .init(models: [inner, opaque], names: ["nn", "glm"]))))
    }
}
