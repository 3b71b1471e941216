// Core ML neural networks (`neuralNetwork`, `neuralNetworkClassifier`, `neuralNetworkRegressor`)
// as feature models: the existing importer (CoreMLImporter, Spec.Model → Graph) and runtime
// (MLRuntime.Model) behind Core ML's feature values, so a network can be a pipeline stage.
import CoreMLFormat
import Foundation
import ImageIO
import MLGraph
import MLRuntime

/// A Core ML neural network run by `MLRuntime.Model`, seen through feature values.
///
/// Conversions (the importer's conventions, see `CoreMLImporter`):
/// - a multiArray input of Core ML shape `[C]` or `[C, H, W]` (channel-first, as Core ML) is given
///   to the graph as `[1, C]` / `[1, C, H, W]` (the graph transposes to NHWC itself); any shape
///   holding as many values as the graph's input is reshaped to it; other shapes go to the
///   runtime with a leading 1, which accepts those the input's flexible shape allows
///   (`shapeRange` / `enumeratedShapes`, see docs/FLEXIBLE_SHAPES.md);
/// - an image input (`FeatureValue.image`, 8-bit interleaved) must have the described width and
///   height, or a size the input's flexible shape allows (`imageSizeRange` / `enumeratedSizes`); it is converted to the input's colour space (RGB ↔ BGR swap, RGB → gray by ITU-R 601
///   luma as `ImageIO.Image.converted(to:)`) and given as raw 0–255 values `[1, H, W, C]` — the
///   graph applies the model's image preprocessing (scale and biases);
/// - a multiArray output gets its Core ML shape back (`[C]` for vectors, `[C, H, W]`), in the
///   described data type; an image output becomes a `FeatureImage` (values clamped to 0–255,
///   rounded half to even);
/// - a classifier's probabilities output (a `[1, classes]` tensor in the graph) becomes the
///   label → probability dictionary, and the class-label output the label of the largest
///   probability (Core ML's `NeuralNetworkClassifier`).
public struct NeuralNetworkFeatureModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    /// The runtime model (its graph is the imported network).
    public let runtime: MLRuntime.Model
    let name: String
    let signature: FeatureSignature
    let classLabels: ClassLabels?
    let probabilitiesTensor: String?
    /// ML programs: outputs keep the graph's shape (no leading batch of 1 is dropped).
    let exactShapes: Bool

    /// Imports and compiles `spec` (a neural network model, or an ML program read from
    /// `context.modelPath`).
    /// - Throws: `CoreMLImportError` naming `context.name` when the network cannot be imported
    ///   (unsupported layers, inconsistent model), `RuntimeError` when it cannot be compiled,
    ///   `FeatureError.unsupportedModel` for other model kinds.
    public init(spec: Spec.Model, context: ModelLoadContext) throws {
        let graph: Graph
        switch spec.type {
        case .neuralNetwork, .neuralNetworkRegressor, .neuralNetworkClassifier:
            graph = try CoreMLImporter.graph(from: spec, fileName: context.name)
            exactShapes = false
        case .other(kind: .mlProgram, _):
            graph = try MILImporter.importModel(spec, fileName: context.name, modelPath: context.modelPath,
                                                options: context.programOptions).graph
            // A stateful program (iOS 18 read_state / write_state) keeps state between predictions:
            // that is MLRuntime.StatefulModel's job, not a feature model's.
            let states = MILStates.states(of: graph)
            if !states.isEmpty {
                throw FeatureError.unsupportedModel(model: context.name, kind: "mlProgram with state",
                    hint: "the program keeps state (\(states.map(\.input).joined(separator: ", "))) across predictions; run it with `mlconv predict`, which keeps the state of one loaded model")
            }
            exactShapes = true  // ML program features have their exact shapes, no added batch
        default:
            throw FeatureError.unsupportedModel(model: context.name, kind: spec.kind?.name ?? "none",
                                                hint: "NeuralNetworkFeatureModel runs neuralNetwork, neuralNetworkClassifier, neuralNetworkRegressor and mlProgram models")
        }
        runtime = try MLRuntime.Model(graph: graph, configuration: .init(threadCount: max(1, context.threadCount)))
        name = context.name
        modelDescription = spec.description ?? Spec.ModelDescription()
        signature = FeatureSignature(modelName: context.name, description: spec.description)
        if case let .neuralNetworkClassifier(c) = spec.type {
            switch c.classLabels {
            case let .strings(s)?: classLabels = .strings(s)
            case let .int64s(v)?: classLabels = .int64s(v)
            case nil:
                throw FeatureError.invalidModel(model: context.name, reason: "the neural network classifier has no class labels")
            }
            probabilitiesTensor = graph.description.probabilitiesOutput
        } else if case .other(kind: .mlProgram, _) = spec.type, let labels = graph.description.classLabels,
                  let p = graph.description.probabilitiesOutput {
            // MARK: milopsa — an ML program's classify op (MILImporter: labels in the description).
            if graph.description.metadata.userDefined["mlconv.classLabelType"] == "int64" {
                classLabels = .int64s(try labels.map { s in
                    guard let v = Int64(s) else { throw FeatureError.invalidModel(model: context.name, reason: "class label '\(s)' is not an int64") }
                    return v
                })
            } else {
                classLabels = .strings(labels)
            }
            probabilitiesTensor = p
        } else {
            classLabels = nil
            probabilitiesTensor = nil
        }
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        var arrays: [String: NDArray] = [:]
        for f in runtime.modelDescription.inputs {
            guard let value = inputs[f.name] else {
                // Optional inputs the importer kept (none today) would be required by the runtime.
                _ = try signature.value(f.name, in: inputs)
                continue
            }
            arrays[f.name] = try ndarray(value, for: f)
        }
        let out = try runtime.prediction(from: arrays)
        var result: FeatureProvider = [:]
        if let labels = classLabels, let p = probabilitiesTensor, let a = out[p] {
            result = try signature.classifierOutputs(labels: labels, scores: a.scalars.map(Double.init))
        }
        for f in modelDescription.output {
            guard let kind = f.type?.kind else { continue }
            switch kind {
            case let .multiArray(t):
                guard let a = out[f.name] else { continue }
                result[f.name] = .multiArray(try multiArray(a, declared: t))
            case let .image(img):
                guard let a = out[f.name] else { continue }
                let c = img.colorSpace == .grayscale ? 1 : 3
                guard a.shape.count == 4, a.shape[3] == c, a.shape[0] == 1 else {
                    throw FeatureError.invalidModel(model: name, reason: "image output '\(f.name)' has shape \(a.shape), expected [1, H, W, \(c)]")
                }
                let image = Image(floatHWC: a.scalars, width: a.shape[2], height: a.shape[1], channels: c)
                let cs: FeatureImage.ColorSpace = img.colorSpace == .bgr ? .bgr : img.colorSpace == .rgb ? .rgb : .grayscale
                result[f.name] = .image(try FeatureImage(width: image.width, height: image.height, colorSpace: cs, pixels: image.pixels))
            default:
                continue
            }
        }
        return result
    }

    private func ndarray(_ value: FeatureValue, for f: MLRuntime.Model.Feature) throws -> NDArray {
        let graphCount = f.shape.allSatisfy { $0 > 0 } ? f.shape.reduce(1, *) : nil
        switch value {
        case let .multiArray(a):
            if f.image != nil {
                throw FeatureError.typeMismatch(model: name, feature: f.name, expected: "an Image", found: "MultiArray")
            }
            let shape = graphCount == a.count ? f.shape : [1] + a.shape
            return try NDArray(shape: shape, scalars: a.values.map { Float($0) })
        case let .image(img):
            guard let want = f.image else {
                throw FeatureError.typeMismatch(model: name, feature: f.name, expected: "a MultiArray", found: "Image")
            }
            let channels = want.colorSpace == .grayscale ? 1 : 3
            let allowed = f.shapeFlexibility?.allows([1, img.height, img.width, channels]) ?? false
            guard (img.width == want.width && img.height == want.height) || allowed else {
                let flexible = f.shapeFlexibility.map { " or a size its flexible shape \($0) (N, H, W, C) allows" } ?? ""
                throw FeatureError.invalidValue(model: name, feature: f.name,
                    reason: "the image is \(img.width)×\(img.height) pixels, the model takes \(want.width)×\(want.height)\(flexible); resize it first")
            }
            var image = Image(width: img.width, height: img.height, channels: img.channels, pixels: img.pixels)
            // Bring the pixels to RGB (or gray) first, then to the model's order.
            if img.colorSpace == .bgr { image = image.converted(to: .bgr) }  // BGR → RGB (swap)
            let target: ImageIO.ImageColorSpace
            switch want.colorSpace {
            case .rgb: target = .rgb
            case .bgr: target = .bgr
            case .grayscale: target = .grayscale
            }
            image = image.converted(to: target)
            return try NDArray(shape: [1, image.height, image.width, image.channels], scalars: image.floatHWC())
        case let .double(d):
            return try NDArray(shape: graphCount == 1 ? f.shape : [1, 1], scalars: [Float(d)])
        case let .int64(i):
            return try NDArray(shape: graphCount == 1 ? f.shape : [1, 1], scalars: [Float(i)])
        case let other:
            throw FeatureError.typeMismatch(model: name, feature: f.name, expected: "a MultiArray or an Image", found: other.typeName)
        }
    }

    private func multiArray(_ a: NDArray, declared t: Spec.ArrayFeatureType) throws -> MultiArray {
        let dt = MultiArray.DataType(t.dataType) ?? .float32
        let values = a.scalars.map(Double.init)
        var shape = a.shape
        // The graph adds a leading batch dimension of 1 to Core ML's [C] and [C, H, W] shapes.
        if !exactShapes, shape.first == 1, shape.count == 2 || shape.count == 4, t.shape.count != shape.count {
            shape.removeFirst()
        }
        return try MultiArray(shape: shape, dataType: dt, values: values)
    }
}

extension CoreMLModelLoader {
    /// Rows for `neuralNetwork`, `neuralNetworkClassifier`, `neuralNetworkRegressor`
    /// and `mlProgram` (`NeuralNetworkFeatureModel`; stateful programs are refused).
    static func registerNeuralNetworks(_ t: inout [Spec.ModelKind: Loader]) {
        let load: Loader = { spec, context in try NeuralNetworkFeatureModel(spec: spec, context: context) }
        t[.mlProgram] = load
        t[.neuralNetwork] = load
        t[.neuralNetworkClassifier] = load
        t[.neuralNetworkRegressor] = load
    }
}
