import Diagnostics
import Foundation
import MLGraph

/// What `mlconv inspect model.h5` shows about a Keras file, read without running it.
public struct KerasModelSummary: Sendable, CustomStringConvertible {
    /// One layer of the architecture (nested models' layers included, with their `scope`).
    public struct Layer: Hashable, Sendable {
        /// The layer name.
        public var name: String
        /// The Keras class name (`?` when only a weights file without architecture is known).
        public var className: String
        /// Names of the enclosing nested models, outermost first.
        public var scope: [String]
        /// Stored parameters of the layer (top-level layers: their whole weight group, nested
        /// models included); nil when not known.
        public var parameterCount: Int?
        /// Whether the converter (built-in table) supports the class (false when the class is
        /// unknown because the file has no architecture).
        public var isSupported: Bool
    }

    /// A model input or output.
    public struct Tensor: Hashable, Sendable {
        /// The name (input layer name; output layer name as `model.output_names`).
        public var name: String
        /// Shape with batch; nil entries are unknown (None) dimensions.
        public var shape: [Int?]
    }

    /// The file inspected.
    public var file: String
    /// `keras_version` (the file's, or the architecture JSON's), "" when not recorded.
    public var kerasVersion: String
    /// `backend` ("tensorflow", "theano", …), nil when not recorded.
    public var backend: String?
    /// "Sequential", "Functional", "Model" ("" when there is no architecture).
    public var modelClass: String
    /// The model's name.
    public var modelName: String
    /// Whether the file holds only weights (`save_weights`).
    public var isWeightsOnly: Bool
    /// Whether an architecture was available (the file's own, or the JSON sidecar).
    public var hasArchitecture: Bool
    /// Every layer, depth first.
    public var layers: [Layer]
    /// Layer count per Keras class (nested models and their layers included).
    public var classCounts: [String: Int]
    /// Total stored parameters (weight values).
    public var parameterCount: Int
    /// Model inputs.
    public var inputs: [Tensor]
    /// Model outputs (shapes from a trial conversion when it succeeds, else unknown).
    public var outputs: [Tensor]
    /// Layers whose class no built-in converter handles (they need a hook).
    public var unsupportedLayers: [KerasUnsupportedLayer]
    /// Why `mlconv keras` would fail on a model whose layers are all supported (a damaged
    /// config or weights), or nil when it converts (or has unsupported layers, listed above).
    public var conversionError: String? = nil
    /// Whether the file is a Keras 3 `.keras` archive (format "keras-archive"; its weights and
    /// config.json together are a full model).
    public var isKerasArchive = false
    /// The Lambda layers and the Python expression recovered from each one's bytecode.
    public var lambdas: [LambdaLayer] = []

    /// A Lambda layer as `inspect` shows it.
    public struct LambdaLayer: Hashable, Sendable {
        /// The layer's name ("outer/inner" when nested).
        public var name: String
        /// The recovered function ("lambda x: (x + 1) * 127.5"), nil when not recovered.
        public var expression: String?
        /// Why the expression was not recovered, or why it is not lowered automatically.
        public var note: String?
        /// Whether the conversion lowers it automatically (before shapes are checked).
        public var autoLowered: Bool
    }

    /// The summary as a JSON-ready dictionary (for `mlconv inspect --json`): "format"
    /// ("keras-hdf5"), "file", "kerasVersion", "backend", "modelClass", "modelName",
    /// "weightsOnly", "hasArchitecture", "inputs"/"outputs" ([{"name", "shape", "type"}], shapes
    /// with batch 1 and −1 for unknown dimensions), "parameterCount", "layerCounts",
    /// "layerCount", "layers" ([{"name", "type", "scope", "parameterCount", "supported"}]) and
    /// "unsupportedLayers" ([{"name", "className", "detail"}]) and, when conversion would fail for
    /// another reason, "conversionError".
    public var jsonObject: [String: Any] {
        func shape(_ s: [Int?]) -> [Int] {
            s.enumerated().map { $0.offset == 0 && $0.element == nil ? 1 : ($0.element ?? -1) }
        }
        func feature(_ t: Tensor) -> [String: Any] { ["name": t.name, "shape": shape(t.shape), "type": "float32"] }
        var r: [String: Any] = [
            "format": isKerasArchive ? "keras-archive" : "keras-hdf5",
            "file": file,
            "kerasVersion": kerasVersion,
            "modelClass": modelClass,
            "modelName": modelName,
            "weightsOnly": isWeightsOnly,
            "hasArchitecture": hasArchitecture,
            "inputs": inputs.map(feature),
            "outputs": outputs.map(feature),
            "parameterCount": parameterCount,
            "layerCounts": classCounts,
            "layerCount": layers.count,
            "layers": layers.map { l -> [String: Any] in
                var d: [String: Any] = ["name": l.name, "type": l.className, "scope": l.scope, "supported": l.isSupported]
                if let p = l.parameterCount { d["parameterCount"] = p }
                return d
            },
            "unsupportedLayers": unsupportedLayers.map { ["name": $0.name, "className": $0.className, "detail": $0.detail] },
        ]
        if !lambdas.isEmpty {
            r["lambdas"] = lambdas.map { l -> [String: Any] in
                var d: [String: Any] = ["name": l.name, "autoLowered": l.autoLowered]
                if let e = l.expression { d["expression"] = e }
                if let n = l.note { d["note"] = n }
                return d
            }
        }
        if let backend { r["backend"] = backend }
        if let conversionError { r["conversionError"] = conversionError }
        return r
    }

    /// A multi-line human-readable report.
    public var description: String {
        func fmt(_ s: [Int?]) -> String { "(" + s.map { $0.map(String.init) ?? "None" }.joined(separator: ", ") + ")" }
        var lines: [String] = []
        lines.append("Keras model: \(file)")
        lines.append("  Keras \(kerasVersion.isEmpty ? "version not recorded" : kerasVersion)" + (backend.map { ", backend \($0)" } ?? ""))
        if hasArchitecture {
            lines.append("  \(modelClass) '\(modelName)'" + (isWeightsOnly ? " (weights-only file + architecture JSON)" : ""))
        } else {
            lines.append("  weights only (no architecture: pass the model.to_json() sidecar with --config)")
        }
        lines.append("  parameters: \(parameterCount)")
        for i in inputs { lines.append("  input  \(i.name) \(fmt(i.shape))") }
        for o in outputs { lines.append("  output \(o.name) \(fmt(o.shape))") }
        lines.append("  layers (\(layers.count)): " + classCounts.sorted { ($0.value, $1.key) > ($1.value, $0.key) }
            .map { "\($0.key)×\($0.value)" }.joined(separator: ", "))
        for l in layers {
            let indent = String(repeating: "  ", count: l.scope.count)
            lines.append("    \(indent)\(l.name) (\(l.className))" + (l.parameterCount.map { $0 > 0 ? " \($0) params" : "" } ?? "")
                         + (l.isSupported || !hasArchitecture ? "" : "  [unsupported]"))
        }
        if !unsupportedLayers.isEmpty {
            lines.append("  unsupported layers (\(unsupportedLayers.count)): need a hook (--custom-layer / --lower):")
            for u in unsupportedLayers { lines.append("    - \(u)") }
        }
        if !lambdas.isEmpty {
            lines.append("  Lambda layers (\(lambdas.count)):")
            for l in lambdas {
                lines.append("    \(l.name): " + (l.expression ?? "expression not recovered")
                             + (l.autoLowered ? "  [lowered to IR]" : "") + (l.note.map { "  (\($0))" } ?? ""))
            }
        }
        if let conversionError { lines.append("  does not convert: \(conversionError)") }
        return lines.joined(separator: "\n")
    }
}

/// Reads a `KerasModelSummary` from a Keras file.
public enum KerasInspector {
    /// Inspects a Keras `.h5` file (and its architecture JSON for weights-only files).
    /// A weights-only file without JSON is summarized from its layer names and weights.
    /// - Throws: `KerasConversionError` (not HDF5, not a Keras file, invalid architecture).
    /// Keras 3 `.keras` archives are read too (architecture from their config.json).
    /// - Parameter options: the conversion options the report assumes (`autoLowerLambdas`).
    public static func inspect(_ url: URL, architectureJSON: URL? = nil, options: KerasConversionOptions = .init()) throws -> KerasModelSummary {
        let opened = try KerasOpenedFile.open(url)
        var text: String? = opened.archiveConfig
        var textPath: String? = opened.archiveConfig == nil ? nil : url.path + ":" + KerasArchive.configMember
        if let a = architectureJSON {
            do { text = try String(contentsOf: a, encoding: .utf8) } catch {
                throw KerasConversionError.invalidArchitecture(file: a.path, message: "cannot read the file", cause: DiagnosticCause(error))
            }
            textPath = a.path
        }
        var summary = try inspect(file: opened.file, architectureJSON: text, architecturePath: textPath,
                                  versionHint: opened.archiveVersion, options: options)
        if opened.archiveConfig != nil {
            summary.isKerasArchive = true
            summary.file = url.path
            if architectureJSON == nil { summary.isWeightsOnly = false }
        }
        return summary
    }

    static func inspect(file: KerasWeightFile, architectureJSON: String?, architecturePath: String?,
                        versionHint: String? = nil, options: KerasConversionOptions = .init()) throws -> KerasModelSummary {
        let source: KerasModelSource
        do {
            source = try KerasModelSource.load(file: file, architectureJSON: architectureJSON, architecturePath: architecturePath,
                                               versionHint: versionHint)
        } catch let KerasConversionError.weightsOnlyWithoutArchitecture(_, names) {
            let layout = try KerasModelSource.detectLayout(file) ?? .legacyWeightsOnly
            let store = try KerasWeightStore(file: file, layout: layout)
            func attr(_ n: String) -> String? {
                (try? file.stringAttribute(n, of: "/")) ?? nil ?? ((try? file.stringAttribute(n, of: "/model_weights")) ?? nil)
            }
            return KerasModelSummary(
                file: file.path, kerasVersion: attr("keras_version") ?? "", backend: attr("backend"), modelClass: "", modelName: "",
                isWeightsOnly: true, hasArchitecture: false,
                layers: names.map { KerasModelSummary.Layer(name: $0, className: "?", scope: [], parameterCount: nil, isSupported: false) },
                classCounts: [:], parameterCount: (try? store.parameterCount()) ?? 0, inputs: [], outputs: [], unsupportedLayers: [])
        }
        let store = try KerasWeightStore(file: file, layout: source.layout)
        let model = source.model
        let session = try KerasConversionSession(source: source, options: KerasConversionOptions(autoLowerLambdas: options.autoLowerLambdas))
        try? store.bind(model: model, weightedLayers: model.layers.filter(session.hasWeights).map { ($0.name, $0.className) })

        var layers: [KerasModelSummary.Layer] = []
        var counts: [String: Int] = [:]
        var unsupported: [KerasUnsupportedLayer] = []
        var lambdas: [KerasModelSummary.LambdaLayer] = []
        for (scope, l) in model.allLayers() {
            counts[l.className, default: 0] += 1
            var supported = l.nestedModel != nil || KerasLayerRegistry.converter(for: l.className) != nil
                || KerasOperationConverter.operation(for: l) != nil
            if l.className == "Lambda" {
                let qualified = (scope + [l.name]).joined(separator: "/")
                do {
                    let e = try KerasLambdaExpression(layer: l, kerasVersion: source.version.string)
                    supported = options.autoLowerLambdas
                    lambdas.append(.init(name: qualified, expression: e.text, note: options.autoLowerLambdas ? nil : "--no-auto-lambda",
                                         autoLowered: options.autoLowerLambdas))
                } catch {
                    lambdas.append(.init(name: qualified, expression: nil, note: error.reason, autoLowered: false))
                }
            }
            var params: Int? = nil
            if scope.isEmpty, let g = store.group(ofTopLevelLayer: l.name) {
                params = try? (source.layout == .keras3WeightsOnly ? store.keras3Entries(group: g) : store.legacyEntries(group: g))
                    .reduce(0) { $0 + $1.shape.reduce(1, *) }
            } else if scope.isEmpty {
                params = 0
            }
            layers.append(.init(name: l.name, className: l.className, scope: scope, parameterCount: params, isSupported: supported))
            if !supported {
                unsupported.append(KerasUnsupportedLayer(name: (scope + [l.name]).joined(separator: "/"), className: l.className,
                                                         detail: KerasConversionSession.detail(l)))
            }
        }
        let inputs = model.inputs.map { r in
            KerasModelSummary.Tensor(name: r.layer, shape: model.layer(named: r.layer)?.batchInputShape ?? [nil])
        }
        var outputs = model.outputs.map { KerasModelSummary.Tensor(name: $0.layer, shape: []) }
        var conversionError: String? = nil
        if unsupported.isEmpty {
            do {
                let g = try session.run()
                outputs = g.outputs.map { KerasModelSummary.Tensor(name: $0, shape: [nil] + (g.tensorTypes[$0]?.shape.dropFirst().map { Optional($0) } ?? [])) }
            } catch {
                conversionError = "\(error)"
            }
        }
        var summary = KerasModelSummary(
            file: file.path, kerasVersion: source.version.string, backend: source.backend, modelClass: model.className,
            modelName: model.name, isWeightsOnly: source.isWeightsOnly, hasArchitecture: true, layers: layers,
            classCounts: counts, parameterCount: (try? store.parameterCount()) ?? 0, inputs: inputs, outputs: outputs,
            unsupportedLayers: unsupported)
        summary.conversionError = conversionError
        summary.lambdas = lambdas
        return summary
    }
}
