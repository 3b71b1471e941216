import Diagnostics
import HDF5
import MLGraph

/// A layer the converter could not convert, as listed by `KerasConversionError.unsupportedLayers`.
public struct KerasUnsupportedLayer: Hashable, Sendable, CustomStringConvertible {
    /// The Keras layer name (for layers inside a nested model: "outer/inner").
    public var name: String
    /// The Keras class name (`Lambda`, `TensorFlowOpLayer`, a custom class …).
    public var className: String
    /// What is cheaply known about it: the Lambda function name and source file, the class's
    /// module, the reason it is not supported.
    public var detail: String
    /// Input shapes with the batch dimension (nil for an unknown dimension such as Keras'
    /// None batch; an empty shape when unknown altogether, e.g. downstream of another
    /// unsupported layer in a file that records no shapes).
    public var inputShapes: [[Int?]]
    /// Output shapes when known: recorded in the file (Keras 3 keras tensors, tf.keras
    /// `build_config`), or inferred from a merge layer (Add, …) that combines the output with a
    /// tensor of known shape; else empty.
    public var outputShapes: [[Int?]]
    /// Hooks that would convert the layer, best first: the exact `--lower` / `--custom-layer`
    /// flags and hooks-file entries (see `KerasHookSuggestion`). Empty for layers that have a
    /// built-in converter but an unsupported configuration.
    public var suggestions: [KerasHookSuggestion] = []

    /// Makes an entry.
    public init(name: String, className: String, detail: String, inputShapes: [[Int?]] = [], outputShapes: [[Int?]] = []) {
        self.name = name; self.className = className; self.detail = detail
        self.inputShapes = inputShapes; self.outputShapes = outputShapes
    }

    /// One line: "'res_crop_0' (Lambda): function res_crop …; input (1, 80, 80, 64) → output ?".
    public var description: String {
        func fmt(_ s: [Int?]) -> String { s.isEmpty ? "?" : "(" + s.map { $0.map(String.init) ?? "None" }.joined(separator: ", ") + ")" }
        let ins = inputShapes.isEmpty ? "?" : inputShapes.map(fmt).joined(separator: ", ")
        let outs = outputShapes.isEmpty ? "?" : outputShapes.map(fmt).joined(separator: ", ")
        return "'\(name)' (\(className))" + (detail.isEmpty ? "" : ": \(detail)") + "; input \(ins) → output \(outs)"
    }
}

/// Everything that can go wrong converting a Keras model. Every message names the file, the
/// layer and its Keras class when there is one, what was expected and what was found, and what
/// to do about it.
public enum KerasConversionError: Error, CustomStringConvertible, Sendable {
    /// The HDF5 file has neither a `model_config` attribute, nor Keras weights (`layer_names`,
    /// Keras 3 `layers/…/vars`): e.g. a Caffe HDF5 weights file. `found` lists what it holds.
    case notKerasFile(file: String, found: String)
    /// A weights-only file (`model.save_weights`) was given without its architecture JSON.
    case weightsOnlyWithoutArchitecture(file: String, layerNames: [String])
    /// The architecture (the `model_config` attribute or the JSON sidecar) is not valid JSON or
    /// not a Keras model config. `cause`: the underlying error when there is one (the
    /// `KerasJSONError` of a syntax error, the Foundation error of an unreadable sidecar).
    case invalidArchitecture(file: String, message: String, cause: DiagnosticCause? = nil)
    /// Layers no built-in converter nor hook handles: all of them, collected before failing.
    case unsupportedLayers(file: String, layers: [KerasUnsupportedLayer])
    /// A supported layer uses an option the converter cannot represent (channels_first, an
    /// unknown activation name, bicubic up-sampling, …).
    case unsupportedConfiguration(file: String, layer: String, className: String, message: String, hint: String)
    /// A config value is missing or has the wrong type.
    case invalidLayerConfig(file: String, layer: String, className: String, key: String, expected: String, found: String)
    /// A layer's weight is not in the file.
    case missingWeight(file: String, layer: String, className: String, expected: String, found: String)
    /// A stored weight's shape differs from what the architecture implies.
    case weightShapeMismatch(file: String, layer: String, className: String, weight: String, expected: [Int], found: [Int], hint: String)
    /// Weights-only file: the layers with weights in the architecture and in the file differ in
    /// number (Keras matches them by order).
    case weightLayerCountMismatch(file: String, architectureLayers: [String], fileLayers: [String])
    /// A model input has an unknown (None) dimension other than the batch.
    case unknownInputShape(file: String, input: String, shape: [Int?])
    /// A layer reads a tensor that no layer produces (a dangling reference in the config).
    case danglingInput(file: String, layer: String, className: String, missing: String)
    /// A call of a layer reads fewer tensors than its converter needs (an inbound node listing
    /// no tensors, e.g. `[[]]`).
    case missingInputs(file: String, layer: String, className: String, expected: Int, found: Int)
    /// A `[layer, node, tensor]` reference in the config is out of range for the layer it names
    /// (a call index the layer does not have, a negative or absurd output index).
    case invalidTensorReference(file: String, layer: String, reference: String, expected: String, found: String)
    /// A hook returned nodes that do not produce the layer's output tensor(s). `cause`: the
    /// error of the hook's shape function, when that is what failed.
    case invalidHookResult(file: String, layer: String, className: String, message: String, cause: DiagnosticCause? = nil)
    /// The IR rejected a node (shape inference or verification), wrapped with the Keras layer.
    /// `cause`: the IR's `GraphError`, when there is one (`message` then says what was being
    /// checked, or is empty).
    case invalidGraph(file: String, layer: String?, className: String?, message: String, cause: DiagnosticCause? = nil)
    /// libhdf5 failed, or the file is not HDF5: `cause` is the `HDF5Error` (its kind, object,
    /// libhdf5 error stack and hint).
    case hdf5(file: String, cause: HDF5Error)
    /// A Keras 3 `.keras` archive that cannot be read: not a ZIP file, a missing member
    /// (`config.json`, `model.weights.h5`), a member over the size limits (ZIP bomb), an
    /// absolute or `..` member name, an encrypted or damaged member.
    /// `cause`: the underlying error (the `HDF5Error` of unreadable weights), when there is one.
    case invalidArchive(file: String, member: String?, problem: String, hint: String, cause: DiagnosticCause? = nil)
    /// Hooks (by their MATCH text) that select no layer of the model: most likely a typo.
    case unmatchedHooks(file: String, matches: [String], layerNames: [String])

    /// The file the error concerns.
    public var file: String {
        switch self {
        case let .notKerasFile(f, _), let .weightsOnlyWithoutArchitecture(f, _), let .invalidArchitecture(f, _, _),
             let .unsupportedLayers(f, _), let .unsupportedConfiguration(f, _, _, _, _),
             let .invalidLayerConfig(f, _, _, _, _, _), let .missingWeight(f, _, _, _, _),
             let .weightShapeMismatch(f, _, _, _, _, _, _), let .weightLayerCountMismatch(f, _, _),
             let .unknownInputShape(f, _, _), let .danglingInput(f, _, _, _), let .invalidHookResult(f, _, _, _, _),
             let .missingInputs(f, _, _, _, _), let .invalidTensorReference(f, _, _, _, _),
             let .invalidGraph(f, _, _, _, _), let .hdf5(f, _), let .unmatchedHooks(f, _, _),
             let .invalidArchive(f, _, _, _, _):
            return f
        }
    }

    /// The underlying error, when the case keeps one (`hdf5`'s `HDF5Error`, the `cause` of the
    /// other cases).
    public var cause: (any Error)? {
        switch self {
        case let .hdf5(_, e): return e
        case let .invalidArchitecture(_, _, c), let .invalidHookResult(_, _, _, _, c), let .invalidGraph(_, _, _, _, c),
             let .invalidArchive(_, _, _, _, c):
            return c?.error
        default: return nil
        }
    }

    /// The full message: file, layer and class, expected vs found, what to do, and the text of
    /// the underlying error.
    public var description: String { text(includingCause: true) }

    /// The message; the underlying error's text only when `includingCause` (the renderer prints
    /// the cause on a "caused by:" line of its own).
    func text(includingCause: Bool) -> String {
        func suffix(_ c: DiagnosticCause?) -> String { includingCause ? c.suffix : "" }
        switch self {
        case let .invalidArchive(file, member, problem, hint, cause):
            return """
                \(file): not a readable Keras 3 `.keras` archive\(member.map { " (member '\($0)')" } ?? ""): \(problem)\(suffix(cause)).
                  What to do: \(hint).
                """
        case let .notKerasFile(file, found):
            return """
                \(file): not a Keras model file: it has no 'model_config' attribute (full model), no \
                'layer_names' attribute (Keras 2 weights) and no 'layers/…/vars' groups (Keras 3 weights). \
                Found: \(found).
                  What to do: convert a file written by Keras `model.save('model.h5')`, or \
                `model.save_weights('w.h5')` together with `--config arch.json` (`model.to_json()`).
                """
        case let .weightsOnlyWithoutArchitecture(file, names):
            let shown = names.prefix(8).joined(separator: ", ") + (names.count > 8 ? ", … (\(names.count) layers)" : "")
            return """
                \(file): this is a weights-only Keras file (written by `model.save_weights`; layers: \(shown)); \
                it holds no architecture.
                  What to do: pass the architecture JSON (`model.to_json()`, or the config.json of the model's \
                `.keras` archive) with `--config arch.json` (API: `convert(modelAt:architectureJSON:)`), or re-save \
                the full model with `model.save('model.keras')` or `model.save('model.h5')`.
                """
        case let .invalidArchitecture(file, message, cause):
            return """
                \(file): invalid Keras architecture: \(message)\(suffix(cause))
                  What to do: pass the JSON written by `model.to_json()`, or re-save the model with `model.save('model.h5')`.
                """
        case let .unmatchedHooks(file, matches, names):
            let shown = names.prefix(30).joined(separator: ", ") + (names.count > 30 ? ", …" : "")
            return """
                \(file): \(matches.count == 1 ? "hook" : "hooks") \(matches.map { "'\($0)'" }.joined(separator: ", ")) \
                \(matches.count == 1 ? "matches" : "match") no layer (by name, glob, Lambda function name or class name).
                  The model's layers are: \(shown)
                  What to do: correct the MATCH (see `mlconv inspect` for layer names and classes), or drop the hook.
                """
        case let .unsupportedLayers(file, layers):
            let lines = layers.map { l in
                "  - " + l.description + (l.suggestions.isEmpty ? "" : "\n      fix: " + l.suggestions.map(\.flag).joined(separator: "   or   "))
            }.joined(separator: "\n")
            return """
                \(file): \(layers.count) layer\(layers.count == 1 ? " is" : "s are") not supported by the Keras converter:
                \(lines)
                  What to do: supply a conversion for each of them — a custom layer (`--custom-layer MATCH=CLASS`) \
                or a lowering to built-in ops (`--lower MATCH=OP[:ARGS]`) on the command line, a `--hooks` JSON file \
                (docs/HOOKS.md), or a `LayerHook` in `KerasConversionOptions.hooks` (MATCH: layer name, glob, Lambda \
                function name or class name) — or replace them with built-in Keras layers and re-save the model.
                """ + KerasHookSuggestion.summary(layers)
        case let .unsupportedConfiguration(file, layer, cls, message, hint):
            return "\(file): layer '\(layer)' (\(cls)): \(message)\n  What to do: \(hint)"
        case let .invalidLayerConfig(file, layer, cls, key, expected, found):
            return """
                \(file): layer '\(layer)' (\(cls)): config value '\(key)' should be \(expected), found \(found).
                  What to do: check that the file was written by Keras (`model.save` / `model.to_json()`); \
                hand-edited or foreign configs may need fixing.
                """
        case let .missingWeight(file, layer, cls, expected, found):
            return """
                \(file): layer '\(layer)' (\(cls)): missing weight: expected \(expected), found \(found).
                  What to do: make sure the weights file belongs to this architecture (re-save both from \
                the same Keras model), or save the full model with `model.save('model.h5')`.
                """
        case let .weightShapeMismatch(file, layer, cls, weight, expected, found, hint):
            return """
                \(file): layer '\(layer)' (\(cls)): weight '\(weight)' should have shape \(formatShape(expected)) \
                for this architecture, found \(formatShape(found)) in the file.
                  What to do: \(hint)
                """
        case let .weightLayerCountMismatch(file, arch, fileLayers):
            return """
                \(file): the architecture has \(arch.count) layers with weights but the weights file has \(fileLayers.count) \
                (Keras matches weights-only files to layers by order).
                  architecture: \(arch.joined(separator: ", "))
                  weights file: \(fileLayers.joined(separator: ", "))
                  What to do: pass the architecture JSON that belongs to these weights (`model.to_json()` of the \
                model that called `save_weights`).
                """
        case let .unknownInputShape(file, input, shape):
            let s = "(" + shape.map { $0.map(String.init) ?? "None" }.joined(separator: ", ") + ")"
            return """
                \(file): input '\(input)' has shape \(s) with an unknown dimension besides the batch; the converter \
                needs fixed sizes.
                  What to do: give the size with `--input-shape \(input)=…` (API: \
                `KerasConversionOptions.inputShapes["\(input)"]`, shape without the batch dimension).
                """
        case let .danglingInput(file, layer, cls, missing):
            return """
                \(file): layer '\(layer)' (\(cls)) reads \(missing), which no layer of the model produces.
                  What to do: the model config is inconsistent; re-save the model with Keras.
                """
        case let .missingInputs(file, layer, cls, expected, found):
            return """
                \(file): layer '\(layer)' (\(cls)) is called with \(found) input tensor\(found == 1 ? "" : "s"); its converter \
                needs at least \(expected).
                  What to do: the model config is inconsistent (an inbound node of the layer lists no tensors); \
                re-save the model with Keras (`model.save`), or fix the layer's inbound_nodes.
                """
        case let .invalidTensorReference(file, layer, reference, expected, found):
            return """
                \(file): layer '\(layer)' reads \(reference): expected \(expected), found \(found).
                  What to do: the model config is inconsistent (a [layer, node, tensor] entry of inbound_nodes or \
                output_layers is out of range); re-save the model with Keras (`model.save`).
                """
        case let .invalidHookResult(file, layer, cls, message, cause):
            return "\(file): layer '\(layer)' (\(cls)): the conversion hook's result is invalid: \(message)\(suffix(cause))\n  What to do: fix the hook."
        case let .invalidGraph(file, layer, cls, message, cause):
            let where_ = layer.map { "layer '\($0)'" + (cls.map { " (\($0))" } ?? "") + ": " } ?? ""
            let detail = [message, includingCause ? cause?.text : nil].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
            return """
                \(file): \(where_)the converted graph is invalid\(detail.isEmpty ? "" : ": " + detail)
                  What to do: this is a converter bug or an inconsistent model; please report it with the file.
                """
        case let .hdf5(file, cause):
            return includingCause ? "\(file): cannot read the HDF5 file:\n\(cause.description)" : "\(file): cannot read the HDF5 file"
        }
    }
}
