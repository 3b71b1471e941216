import Diagnostics
/// A Keras version string parsed into numbers ("2.1.6", "2.2.4-tf", "3.14.0"); unknown parts are 0.
public struct KerasVersion: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The version as written in the file ("" when the file records none).
    public var string: String
    /// Major version (2 for tf.keras 2.x, 3 for Keras 3).
    public var major: Int
    /// Minor version.
    public var minor: Int
    /// Patch version.
    public var patch: Int

    /// Parses "X.Y.Z[-suffix]"; nil or unparsable text gives 0.0.0 with `string` kept.
    public init(_ text: String?) {
        string = text ?? ""
        let nums = string.split(whereSeparator: { !$0.isNumber && $0 != "." }).first.map {
            $0.split(separator: ".").map { Int($0) ?? 0 }
        } ?? []
        major = nums.count > 0 ? nums[0] : 0
        minor = nums.count > 1 ? nums[1] : 0
        patch = nums.count > 2 ? nums[2] : 0
    }

    /// Whether the file was written by Keras 3 (different defaults: hard_sigmoid = relu6(x+3)/6, …).
    public var isKeras3: Bool { major >= 3 }
    /// Whether the version is unknown (no `keras_version` recorded).
    public var isUnknown: Bool { major == 0 && minor == 0 && patch == 0 }

    /// Orders by (major, minor, patch).
    public static func < (a: KerasVersion, b: KerasVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }

    /// The version text, or "unknown".
    public var description: String { string.isEmpty ? "unknown" : string }
}

/// One output tensor of one call of a layer: Keras' `[layer_name, node_index, tensor_index]`
/// (Keras 2 inbound-node entries, Keras 3 `keras_history`).
public struct KerasTensorRef: Hashable, Sendable, CustomStringConvertible {
    /// The producing layer's name.
    public var layer: String
    /// Which call of the layer (0 for the first).
    public var node: Int
    /// Which output of that call (0 for single-output layers).
    public var tensor: Int
    /// Makes a reference (call 0, output 0 by default).
    public init(layer: String, node: Int = 0, tensor: Int = 0) { self.layer = layer; self.node = node; self.tensor = tensor }
    /// "output 0 of call 1 of layer 'dense'".
    public var description: String { "output \(tensor) of call \(node) of layer '\(layer)'" }
}

/// One call of a layer: the tensors it reads, in order.
public struct KerasInboundNode: Hashable, Sendable {
    /// Input tensors (Keras 2: the node's entries; Keras 3: the keras tensors in `args`, then
    /// those in `kwargs`).
    public var inputs: [KerasTensorRef]
    /// Input shapes with batch (None → nil) when the config records them (Keras 3), else empty.
    public var inputShapes: [[Int?]]
    /// Per input: the keyword the call passed it with (`"value"`, `"key"`, `"attention_mask"`),
    /// nil for a positional argument. Keyword tensors follow the positional ones, by sorted key.
    public var inputArguments: [String?]
    /// The call's keyword arguments as written (tensors included, as their references):
    /// `use_causal_mask`, `return_attention_scores`, `training`, … ([:] when none).
    public var callArguments: [String: KerasJSON]
    /// Makes a call record (every input positional unless `inputArguments` says otherwise).
    public init(inputs: [KerasTensorRef], inputShapes: [[Int?]] = [], inputArguments: [String?]? = nil,
                callArguments: [String: KerasJSON] = [:]) {
        self.inputs = inputs; self.inputShapes = inputShapes
        self.inputArguments = inputArguments ?? Array(repeating: nil, count: inputs.count)
        self.callArguments = callArguments
    }
    /// The call's record as the config writes it (Keras 1/2: the list of `[layer, node, tensor,
    /// kwargs]` entries; Keras 3: `{"args", "kwargs"}`), for converters that read call arguments
    /// (TFOpLambda, Keras 3 operations); nil for synthesized calls.
    public var call: KerasJSON? = nil
}

/// One layer of a model config, as written by Keras (`{"class_name", "config", "inbound_nodes", …}`).
public struct KerasLayerConfig: Hashable, Sendable {
    /// The layer's name (unique within its model).
    public var name: String
    /// The Keras class name ("Conv2D", "Lambda", "Sequential", …).
    public var className: String
    /// The layer's `config` object (hyper-parameters).
    public var config: KerasJSON
    /// Keras 3 / tf.keras ≥ 2.13 `module` ("keras.layers"), nil when absent.
    public var module: String?
    /// Keras 3 `registered_name` (custom classes: "package>Class"), nil when absent.
    public var registeredName: String?
    /// The calls of the layer in this model (Sequential models get one synthesized call each).
    public var inboundNodes: [KerasInboundNode]
    /// The model config when this layer is itself a model (Sequential/Functional used as a layer).
    public var nestedModel: KerasModelConfig?
    /// Input shapes (batch first, None → nil) recorded by tf.keras ≥ 2.13 / Keras 3 in the
    /// layer's `build_config`, one per input; empty when not recorded.
    public var buildInputShapes: [[Int?]] = []

    /// Makes a layer config (the parser fills `buildInputShapes` separately).
    public init(name: String, className: String, config: KerasJSON, module: String? = nil, registeredName: String? = nil,
                inboundNodes: [KerasInboundNode] = [], nestedModel: KerasModelConfig? = nil) {
        self.name = name; self.className = className; self.config = config; self.module = module
        self.registeredName = registeredName; self.inboundNodes = inboundNodes; self.nestedModel = nestedModel
    }

    /// The input shape with batch of an `InputLayer` (`batch_input_shape` in Keras 2,
    /// `batch_shape` in Keras 3; None → nil), or of any layer that records `batch_input_shape`.
    public var batchInputShape: [Int?]? {
        for key in ["batch_input_shape", "batch_shape"] {
            if let a = config[key]?.array { return a.map(\.int) }
        }
        if let a = config["input_shape"]?.array { return [nil] + a.map(\.int) }
        return nil
    }
}

/// A Keras model architecture: `Sequential` or `Functional` (`Model`), with its layers in config
/// order, its input and output tensors. Sequential models are normalized to the functional form
/// (an `InputLayer` first, one call per layer chained to the previous one).
public struct KerasModelConfig: Hashable, Sendable {
    /// "Sequential", "Functional" or "Model".
    public var className: String
    /// The model's name.
    public var name: String
    /// Layers in config order (for Keras: `model.layers` order).
    public var layers: [KerasLayerConfig]
    /// The model's input tensors (outputs of its InputLayers), in order.
    public var inputs: [KerasTensorRef]
    /// The model's output tensors, in order.
    public var outputs: [KerasTensorRef]
    /// Whether the model was a `Sequential`.
    public var isSequential: Bool { className == "Sequential" }

    /// Makes a model config (already in the normalized functional form).
    public init(className: String, name: String, layers: [KerasLayerConfig], inputs: [KerasTensorRef], outputs: [KerasTensorRef]) {
        self.className = className; self.name = name; self.layers = layers; self.inputs = inputs; self.outputs = outputs
    }

    /// The largest output index (`tensor` of `[layer, node, tensor]`) a reference may name on a
    /// layer that is not a nested model (whose outputs are counted): Keras layers have a handful
    /// of outputs (an RNN with `return_state`: 1 + its states). Bounds what a corrupt config can
    /// make the converter allocate.
    public static let maxOutputsPerCall = 1024

    /// Class names that denote a model used as a layer.
    public static let modelClassNames: Set<String> = ["Sequential", "Functional", "Model"]

    /// The layer named `name`.
    public func layer(named name: String) -> KerasLayerConfig? { layers.first { $0.name == name } }

    /// Every layer of the model and of its nested models, depth first, with its enclosing model
    /// names ("outer" path), nested models included themselves.
    public func allLayers(scope: [String] = []) -> [(scope: [String], layer: KerasLayerConfig)] {
        var out: [(scope: [String], layer: KerasLayerConfig)] = []
        for l in layers {
            out.append((scope, l))
            if let m = l.nestedModel { out += m.allLayers(scope: scope + [l.name]) }
        }
        return out
    }

    /// Parses a model config: the root `{"class_name", "config"}` object (as in `model_config` and
    /// `model.to_json()`); a JSON string holding JSON (double-encoded sidecars) is decoded again.
    /// - Throws: `KerasConversionError.invalidArchitecture` naming `file`.
    public static func parse(_ json: KerasJSON, file: String) throws -> KerasModelConfig {
        var json = json
        if case let .string(s) = json {
            do { json = try KerasJSON.parse(s) } catch {
                throw KerasConversionError.invalidArchitecture(file: file, message: "a JSON string that is not JSON", cause: DiagnosticCause(error))
            }
        }
        // Keras 1 configs are read as Keras 2 read them (Keras1/Keras1Config.swift).
        json = Keras1Config.translate(json)
        var p = ConfigParser(file: file)
        return try p.model(json, path: [])
    }

    /// Parses JSON text (see `parse(_:file:)`).
    public static func parse(text: String, file: String) throws -> KerasModelConfig {
        do { return try parse(try KerasJSON.parse(text), file: file) } catch let e as KerasJSONError {
            throw KerasConversionError.invalidArchitecture(file: file, message: "not JSON", cause: DiagnosticCause(e))
        }
    }
}

/// Parses Keras 1/2/3 model configs.
private struct ConfigParser {
    let file: String

    func fail(_ m: String, _ path: [String]) -> KerasConversionError {
        .invalidArchitecture(file: file, message: (path.isEmpty ? "" : "in model '\(path.joined(separator: "/"))': ") + m)
    }

    mutating func model(_ json: KerasJSON, path: [String]) throws -> KerasModelConfig {
        guard let cls = json["class_name"]?.string else {
            throw fail("expected an object with \"class_name\" and \"config\" (a Keras model config), found \(String(json.description.prefix(120)))", path)
        }
        guard KerasModelConfig.modelClassNames.contains(cls) else {
            throw fail("the top-level class is '\(cls)', not Sequential/Functional/Model (subclassed models cannot be converted from their config)", path)
        }
        let config = json["config"] ?? .null
        if cls == "Sequential" { return try sequential(config, path: path) }
        return try functional(cls, config, path: path)
    }

    mutating func layerEntry(_ entry: KerasJSON, path: [String]) throws -> KerasLayerConfig {
        guard let cls = entry["class_name"]?.string else {
            throw fail("a layer entry without \"class_name\": \(String(entry.description.prefix(120)))", path)
        }
        let cfg = entry["config"] ?? .object([:])
        guard let name = entry["name"]?.string ?? cfg["name"]?.string else {
            throw fail("a \(cls) layer without a name", path)
        }
        var layer = KerasLayerConfig(name: name, className: cls, config: cfg, module: entry["module"]?.string,
                                     registeredName: entry["registered_name"]?.string)
        if let s = entry["build_config"]?["input_shape"]?.array {
            if s.allSatisfy({ $0.array != nil }) {
                layer.buildInputShapes = s.map { $0.array!.map(\.int) }
            } else {
                layer.buildInputShapes = [s.map(\.int)]
            }
        }
        if KerasModelConfig.modelClassNames.contains(cls), cfg["layers"] != nil || cfg.array != nil {
            var nested = entry
            if nested["config"]?["name"] == nil, case var .object(o) = nested, case var .object(c) = cfg {
                c["name"] = .string(name); o["config"] = .object(c); nested = .object(o)
            }
            layer.nestedModel = try model(nested, path: path + [name])
            layer.nestedModel?.name = name
        }
        return layer
    }

    mutating func sequential(_ config: KerasJSON, path: [String]) throws -> KerasModelConfig {
        let name: String
        let entries: [KerasJSON]
        if let a = config.array {
            name = path.last ?? "sequential"; entries = a
        } else if let a = config["layers"]?.array {
            name = config["name"]?.string ?? path.last ?? "sequential"; entries = a
        } else {
            throw fail("Sequential config has no \"layers\" list", path)
        }
        var layers = try entries.map { try layerEntry($0, path: path) }
        guard !layers.isEmpty else { throw fail("Sequential model '\(name)' has no layers", path) }
        if layers[0].className != "InputLayer" {
            // Keras 2: the first layer carries batch_input_shape; Keras names the input "<first>_input".
            var shape = layers[0].batchInputShape.map { KerasJSON.array($0.map { $0.map { .number(Double($0)) } ?? .null }) }
            if shape == nil, let b = config["build_input_shape"], b.array != nil { shape = b }
            if shape == nil, let m = layers[0].nestedModel, let first = m.inputs.first,
               let s = m.layer(named: first.layer)?.batchInputShape {
                shape = .array(s.map { $0.map { .number(Double($0)) } ?? .null })
            }
            let inputName = layers[0].name + "_input"
            var cfg: [String: KerasJSON] = ["name": .string(inputName)]
            if let shape { cfg["batch_input_shape"] = shape }
            layers.insert(KerasLayerConfig(name: inputName, className: "InputLayer", config: .object(cfg)), at: 0)
        }
        var previous = KerasTensorRef(layer: layers[0].name)
        layers[0].inboundNodes = []
        for i in 1..<layers.count {
            if layers[i].className == "InputLayer" {
                throw fail("Sequential model '\(name)' has an InputLayer '\(layers[i].name)' after its first layer", path)
            }
            layers[i].inboundNodes = [KerasInboundNode(inputs: [previous])]
            previous = KerasTensorRef(layer: layers[i].name)
        }
        return KerasModelConfig(className: "Sequential", name: name, layers: layers,
                                inputs: [KerasTensorRef(layer: layers[0].name)], outputs: [previous])
    }

    mutating func functional(_ cls: String, _ config: KerasJSON, path: [String]) throws -> KerasModelConfig {
        guard let entries = config["layers"]?.array else { throw fail("\(cls) config has no \"layers\" list", path) }
        let name = config["name"]?.string ?? path.last ?? "model"
        var layers: [KerasLayerConfig] = []
        for e in entries {
            var l = try layerEntry(e, path: path)
            l.inboundNodes = try inboundNodes(e["inbound_nodes"], layer: l.name, className: l.className, path: path)
            layers.append(l)
        }
        let inputs = try tensorList(config["input_layers"], what: "input_layers", path: path)
        var outputs = try tensorList(config["output_layers"], what: "output_layers", path: path)
        guard !outputs.isEmpty else { throw fail("model '\(name)' has no output_layers", path) }
        // tf.keras 2.x numbers the calls of a nested model from 1 when the model was built with
        // an InputLayer (its node 0 links its own inputs to outputs and is not saved:
        // `_should_skip_first_node`). Renumber such references to index `inbound_nodes`.
        let counts = Dictionary(layers.map { ($0.name, $0.inboundNodes.count) }, uniquingKeysWith: { a, _ in a })
        var refsTo: [String: [Int]] = [:]
        for l in layers { for n in l.inboundNodes { for r in n.inputs { refsTo[r.layer, default: []].append(r.node) } } }
        for r in outputs { refsTo[r.layer, default: []].append(r.node) }
        let shifted = Set(layers.filter { l in
            guard l.nestedModel != nil, let refs = refsTo[l.name], let lo = refs.min(), let hi = refs.max() else { return false }
            return lo >= 1 && hi >= (counts[l.name] ?? 0)
        }.map(\.name))
        // Keras 3 numbers the inbound-node references in `args` among the calls saved in the
        // config, but references in `output_layers` to a nested Functional model keep its built-in
        // first node (`_should_skip_first_node`), hence are one higher.
        let keras3 = entries.contains { e in e["inbound_nodes"]?.array?.contains { $0["args"] != nil } ?? false }
        if keras3 {
            outputs = outputs.map { r in
                guard r.node >= 1, let l = layers.first(where: { $0.name == r.layer }), l.nestedModel != nil,
                      l.className != "Sequential" else { return r }
                return KerasTensorRef(layer: r.layer, node: r.node - 1, tensor: r.tensor)
            }
        }
        if !shifted.isEmpty, !keras3 {
            func fix(_ r: KerasTensorRef) -> KerasTensorRef {
                shifted.contains(r.layer) ? KerasTensorRef(layer: r.layer, node: r.node - 1, tensor: r.tensor) : r
            }
            for i in layers.indices {
                for j in layers[i].inboundNodes.indices { layers[i].inboundNodes[j].inputs = layers[i].inboundNodes[j].inputs.map(fix) }
            }
            outputs = outputs.map(fix)
        }
        try checkReferences(layers: layers, outputs: outputs, model: name, path: path)
        return KerasModelConfig(className: cls, name: name, layers: layers, inputs: inputs, outputs: outputs)
    }

    /// Bounds every `[layer, node, tensor]` read by a call or named as a model output against the
    /// layer it names: node in 0..<(its calls, at least 1), tensor in 0..<(its outputs: a nested
    /// model's count, else `maxOutputsPerCall`). Out-of-range indices once made the converter
    /// allocate or loop per index (2^31 outputs).
    func checkReferences(layers: [KerasLayerConfig], outputs: [KerasTensorRef], model: String, path: [String]) throws {
        var byName: [String: KerasLayerConfig] = [:]
        for l in layers where byName[l.name] == nil { byName[l.name] = l }
        func check(_ r: KerasTensorRef, reader: String) throws {
            let producer = byName[r.layer]
            let calls = max(producer?.inboundNodes.count ?? 1, 1)
            let outs = producer?.nestedModel?.outputs.count ?? KerasModelConfig.maxOutputsPerCall
            let qualified = (path + [reader]).joined(separator: "/")
            if r.node < 0 || (producer != nil && r.node >= calls) {
                throw KerasConversionError.invalidTensorReference(
                    file: file, layer: qualified, reference: r.description,
                    expected: "a call index in 0…\(calls - 1) (layer '\(r.layer)' is called \(calls) time\(calls == 1 ? "" : "s"))",
                    found: "call index \(r.node)")
            }
            if r.tensor < 0 || r.tensor >= outs {
                throw KerasConversionError.invalidTensorReference(
                    file: file, layer: qualified, reference: r.description,
                    expected: "an output index in 0…\(outs - 1)" + (producer?.nestedModel != nil ? " (nested model '\(r.layer)' has \(outs) outputs)" : ""),
                    found: "output index \(r.tensor)")
            }
        }
        for l in layers { for n in l.inboundNodes { for r in n.inputs { try check(r, reader: l.name) } } }
        for r in outputs { try check(r, reader: "(model '\(model)' outputs)") }
    }

    /// `[["name", 0, 0], …]`, or Keras 3's single `["name", 0, 0]`, or a dict of those.
    func tensorList(_ json: KerasJSON?, what: String, path: [String]) throws -> [KerasTensorRef] {
        guard let json, !json.isNull else { return [] }
        if let o = json.object {
            return try o.keys.sorted().flatMap { try tensorList(o[$0], what: what, path: path) }
        }
        guard let a = json.array else { throw fail("\(what) is not a list: \(json)", path) }
        if a.first?.string != nil {
            guard let r = ref(json) else { throw fail("\(what) entry \(json) is not [layer, node, tensor]", path) }
            return [r]
        }
        return try a.map {
            guard let r = ref($0) else { throw fail("\(what) entry \($0) is not [layer, node, tensor]", path) }
            return r
        }
    }

    func ref(_ json: KerasJSON) -> KerasTensorRef? {
        guard let a = json.array, let n = a.first?.string else { return nil }
        return KerasTensorRef(layer: n, node: a.count > 1 ? a[1].int ?? 0 : 0, tensor: a.count > 2 ? a[2].int ?? 0 : 0)
    }

    func inboundNodes(_ json: KerasJSON?, layer: String, className: String = "", path: [String]) throws -> [KerasInboundNode] {
        guard let json, let nodes = json.array else { return [] }
        return try nodes.map { node in
            if node["args"] != nil || node["kwargs"] != nil {
                // Keras 3: {"args": [...], "kwargs": {...}}.
                var refs: [KerasTensorRef] = [], shapes: [[Int?]] = [], names: [String?] = []
                func walk(_ v: KerasJSON, _ argument: String?) {
                    if v["class_name"]?.string == "__keras_tensor__", let h = v["config"]?["keras_history"], let r = ref(h) {
                        refs.append(r)
                        shapes.append(v["config"]?["shape"]?.array?.map(\.int) ?? [])
                        names.append(argument)
                    } else if let a = v.array {
                        a.forEach { walk($0, argument) }
                    } else if let o = v.object, o["class_name"] == nil {
                        o.keys.sorted().forEach { walk(o[$0]!, argument) }
                    }
                }
                walk(node["args"] ?? .null, nil)
                let kwargs = node["kwargs"]?.object ?? [:]
                for k in kwargs.keys.sorted() { walk(kwargs[k]!, k) }
                var n = KerasInboundNode(inputs: refs, inputShapes: shapes, inputArguments: names, callArguments: kwargs)
                n.call = node
                return n
            }
            // Keras 1/2: [["name", node, tensor, {kwargs}], …]; tf.keras puts tensors passed by
            // keyword (MultiHeadAttention's `value`, `key`) in the kwargs of the first entry.
            guard var entries = node.array else {
                throw fail("layer '\(layer)': inbound node \(String(node.description.prefix(100))) is neither a Keras 2 list nor a Keras 3 {args, kwargs} object", path)
            }
            // TFOpLambda's node is the structure of its first argument: one entry when it is a tensor.
            if entries.first?.string != nil { entries = [node] }
            // tf.keras writes constant positional arguments as ["_CONSTANT_VALUE", -1, value, kwargs].
            let positional = entries.compactMap(ref).filter { $0.layer != KerasInboundNode.constantValueMarker }
            var kwargs: [String: KerasJSON] = [:]
            for e in entries { if let a = e.array, a.count > 3, let o = a[3].object { kwargs.merge(o) { first, _ in first } } }
            var refs = positional, names = [String?](repeating: nil, count: positional.count)
            if KerasInboundNode.tensorKwargClasses.contains(className) {
                // tf.math.multiply(x, y=<tensor>): keyword tensors are operands, in the op's order.
                if let kw = entries.last?.array?.dropFirst(3).first {
                    let extra = KerasInboundNode.keras2KwargTensors(kw)
                    refs += extra
                    names += extra.map { _ in nil }
                }
            } else {
                for k in kwargs.keys.sorted() {
                    guard let v = kwargs[k] else { continue }
                    // A tensor reference ["layer", node, tensor] or a list of them.
                    let found: [KerasTensorRef]
                    if let r = ref(v), v.array?.dropFirst().allSatisfy({ $0.int != nil }) == true { found = [r] } else {
                        found = (v.array ?? []).compactMap { e in e.array?.dropFirst().allSatisfy({ $0.int != nil }) == true ? ref(e) : nil }
                    }
                    refs += found; names += found.map { _ in k }
                }
            }
            var n = KerasInboundNode(inputs: refs, inputArguments: names, callArguments: kwargs)
            n.call = node
            return n
        }
    }
}
