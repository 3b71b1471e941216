import Foundation
import MLGraph

/// Converts Keras HDF5 models to the `MLGraph` IR.
///
/// Accepts full models written by `model.save('model.h5')` (Keras 1.x, 2.x, tf.keras, Keras 3
/// legacy HDF5) and weights-only files (`model.save_weights`, Keras 1/2 `.h5` and Keras 3
/// `.weights.h5`) together with the architecture JSON from `model.to_json()`. Keras 1 configs and
/// weights are read as Keras 2 read them (`Keras1/`: argument names, per-gate recurrent weights,
/// `Merge`, `dim_ordering='th'`); kernels of files whose `backend` is "theano" are flipped as
/// Keras 2's loader did (Theano convolves).
///
/// ```swift
/// let graph = try KerasConverter().convert(modelAt: URL(fileURLWithPath: "model.h5"))
/// ```
///
/// The graph has one input per Keras input layer, named after it, of shape [1] + the Keras shape
/// (batch fixed to 1), and one output per model output, named as `model.output_names` (the
/// output layers' names); activations are NHWC as in Keras. Its shapes are inferred and it is
/// verified. Nested models are inlined, shared layers give one node per call (`<layer>` for the
/// first call, `<layer>_<k>` for later ones, sharing their ConstantTensors). Layers no converter
/// handles are all listed in one `KerasConversionError.unsupportedLayers`.
public struct KerasConverter {
    /// Hooks and input-shape overrides.
    public var options: KerasConversionOptions

    /// Makes a converter.
    public init(options: KerasConversionOptions = .init()) { self.options = options }

    /// Converts the Keras model at `url`.
    /// - Parameters:
    ///   - url: a Keras `.h5` file (full model, or weights only).
    ///   - architectureJSON: the `model.to_json()` sidecar; required for weights-only files, and
    ///     when given for a full model it replaces the file's own architecture (weights are then
    ///     matched by layer name, or by order if the names differ).
    /// - Returns: a verified graph.
    /// - Throws: `KerasConversionError`.
    public func convert(modelAt url: URL, architectureJSON: URL? = nil) throws -> Graph {
        let source = try KerasModelSource.load(url: url, architectureJSON: architectureJSON)
        return try KerasConversionSession(source: source, options: options).run()
    }

    /// Converts an already opened file (tests use `InMemoryKerasFile`).
    func convert(file: KerasWeightFile, architectureJSON: String? = nil) throws -> Graph {
        let source = try KerasModelSource.load(file: file, architectureJSON: architectureJSON, architecturePath: nil)
        return try KerasConversionSession(source: source, options: options).run()
    }
}
