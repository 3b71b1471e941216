import Diagnostics
import MLGraph

/// One conversion: walks the model config (nested models inlined, shared layers called once per
/// call), converts each call with a hook or the built-in converter, infers shapes as it goes,
/// collects every unsupported layer, then names the outputs and verifies the graph.
final class KerasConversionSession {
    let source: KerasModelSource
    let options: KerasConversionOptions
    let store: KerasWeightStore
    var fileName: String { source.file.path }

    private var nodes: [Node] = []
    private var types: [String: TensorType] = [:]
    private var graphInputs: [ValueInfo] = []
    private var nodeNames = Set<String>()
    private var tensorNames = Set<String>()
    private var reserved = Set<String>()
    private var unsupported: [(entry: KerasUnsupportedLayer, error: KerasConversionError?, layer: KerasLayerConfig)] = []
    private var poisoned = Set<String>()
    /// Poisoned tensor → index in `unsupported` of the single-output layer producing it (for
    /// inferring that layer's output shape from a merge layer reading it).
    private var poisonOrigin: [String: Int] = [:]
    /// Whether `options.inputShapes` changed a dimension the file records: the recorded shapes
    /// of the layers then no longer apply.
    private var inputsResized = false
    /// Whether an unsupported layer's output was given an inferred type (`provisionalOutput`,
    /// `inferMergeInputs`) so that conversion could go on to find the shapes downstream.
    private var provisional = false
    private let cache = ConstantCache()
    private var topLevel: [String: KerasLayerConfig] = [:]

    init(source: KerasModelSource, options: KerasConversionOptions) throws {
        self.source = source
        self.options = options
        self.store = try KerasWeightStore(file: source.file, layout: source.layout)
        self.keras1Weights = store.writtenByKeras1(rootVersion: source.fileVersion)
    }

    /// Whether the weights are Keras 1's (converted by `Keras1Weights`).
    let keras1Weights: Bool

    // MARK: Support queries

    /// The hooks matching a layer, most specific pattern first (`LayerHook.Pattern.precedence`),
    /// then in option order.
    func hooks(for layer: KerasLayerConfig, scope: [String]) -> [LayerHook] {
        options.hooks.enumerated().filter { $0.element.matches(layer: layer, scope: scope) }
            .sorted { ($0.element.pattern.precedence, $0.offset) < ($1.element.pattern.precedence, $1.offset) }
            .map(\.element)
    }

    /// Weight roles of a leaf layer (nil converter → none known).
    func roles(_ layer: KerasLayerConfig) -> [String] {
        KerasLayerRegistry.converter(for: layer.className)?.weightRoles(layer, version: source.version) ?? []
    }

    /// Whether a layer (or any layer of a nested model) has weights. For a class without a
    /// built-in converter (a custom layer a hook may convert with its weights): whether the file
    /// stores weights under its name.
    func hasWeights(_ layer: KerasLayerConfig) -> Bool {
        if let m = layer.nestedModel { return m.layers.contains(where: hasWeights) }
        if KerasLayerRegistry.converter(for: layer.className) == nil { return store.hasNamedWeights(layer.name) }
        return !roles(layer).isEmpty
    }

    /// What is cheaply known about an unsupported layer (for a Lambda, its Python function as
    /// `LambdaFunctionDecoder` recovers it).
    static func detail(_ layer: KerasLayerConfig, kerasVersion: String? = nil) -> String {
        if let f = KerasLambdaFunction(layer: layer, kerasVersion: kerasVersion) { return f.summary }
        switch layer.className {
        case "TensorFlowOpLayer":
            let op = layer.config["node_def"]?["op"]?.string ?? "?"
            return "a raw TensorFlow op '\(op)' that tf.keras wrapped automatically (TensorFlowOpLayer)"
        case "TFOpLambda", "SlicingOpLambda":
            let f = layer.config["function"]?.string ?? "?"
            return "a TensorFlow function 'tf.\(f)' that tf.keras wrapped automatically (\(layer.className))"
        default:
            break
        }
        if KerasModelConfig.modelClassNames.contains(layer.className) {
            return "a nested model without a readable config"
        }
        var parts: [String] = []
        if let r = layer.registeredName, r != layer.className { parts.append("registered as '\(r)'") }
        if let m = layer.module, !m.hasPrefix("keras") { parts.append("from module '\(m)'") }
        parts.append(parts.isEmpty ? "no built-in converter for this Keras class" : "a custom layer class")
        return parts.joined(separator: ", ")
    }

    // MARK: Names

    private func allocateName(_ base: String, call: Int) -> String {
        func free(_ n: String) -> Bool { !nodeNames.contains(n) && !tensorNames.contains(n) }
        if call == 0, free(base) { return base }
        var k = max(call, 1)
        while true {
            let c = "\(base)_\(k)"
            if free(c), !reserved.contains(c) { return c }
            k += 1
        }
    }

    // MARK: Running

    func run() throws -> Graph {
        let model = source.model
        for (_, l) in model.allLayers() { reserved.insert(l.name) }
        for l in model.layers { topLevel[l.name] = l }
        let labels = options.hooks.compactMap(\.label)
        if !labels.isEmpty {
            let all = model.allLayers()
            var matched = Set<String>()
            for h in options.hooks { if let l = h.label, !matched.contains(l), all.contains(where: { h.matches(layer: $0.1, scope: $0.0) }) { matched.insert(l) } }
            var unmatched: [String] = []
            for l in labels where !matched.contains(l) && !unmatched.contains(l) { unmatched.append(l) }
            if !unmatched.isEmpty {
                throw KerasConversionError.unmatchedHooks(file: fileName, matches: unmatched,
                                                          layerNames: all.map { ($0.0 + [$0.1.name]).joined(separator: "/") + " (\($0.1.className))" })
            }
        }

        // Phase 1: unsupported classes (cheap, no shapes), used if weight binding fails.
        var prescan: [KerasHookAdvisor.Item] = []
        for (scope, l) in model.allLayers() where l.nestedModel == nil {
            if KerasLayerRegistry.converter(for: l.className) == nil, hooks(for: l, scope: scope).isEmpty {
                prescan.append(.init(entry: KerasUnsupportedLayer(name: (scope + [l.name]).joined(separator: "/"), className: l.className,
                                                                  detail: Self.detail(l, kerasVersion: source.version.string)),
                                     layer: l, hasConverter: false))
            }
        }
        // Phase 2: bind the file's weight groups to the top-level layers.
        do {
            try store.bind(model: model, weightedLayers: model.layers.filter(hasWeights).map { ($0.name, $0.className) })
        } catch let e as KerasConversionError {
            if !prescan.isEmpty {
                throw KerasConversionError.unsupportedLayers(file: fileName, layers: KerasHookAdvisor.annotate(prescan, kerasVersion: source.version.string))
            }
            throw e
        }
        // Phase 3: convert.
        let outs: [String]
        do { outs = try convertModel(model, scope: [], callInputs: nil) } catch let e as KerasConversionError where provisional {
            // Downstream of an unsupported layer whose output type was only inferred: report the
            // unsupported layers, the likely cause.
            throw unsupportedError() ?? e
        }
        if let e = unsupportedError() { throw e }
        let outputs = nameOutputs(outs, refs: model.outputs)

        var description = ModelDescription()
        description.inputs = graphInputs.map { FeatureDescription(name: $0.name) }
        description.outputs = outputs.map { FeatureDescription(name: $0) }
        let fileBase = fileName.split(separator: "/").last.map(String.init) ?? fileName
        var meta: [String: String] = [
            "keras.version": source.fileVersion.isUnknown ? source.version.string : source.fileVersion.string,
            "keras.backend": source.backend ?? "",
            "keras.sourceFile": fileBase,
            "keras.modelClass": model.className,
            "keras.modelName": model.name,
            "mlconv.source": "Keras \(source.fileVersion.isUnknown ? source.version.description : source.fileVersion.description)"
                + (source.backend.map { " (\($0))" } ?? "") + " \(fileBase)",
        ]
        if let a = source.architecturePath {
            meta["keras.architectureFile"] = a.split(separator: "/").last.map(String.init) ?? a
        }
        description.metadata.userDefined = meta

        var graph = Graph(inputs: graphInputs, outputs: outputs, nodes: nodes, description: description)
        do {
            try graph.inferShapesAndVerify()  // MARK: graph verifier: a layered error when inference fails
        } catch let e as GraphError {
            if let m = e.memoryLimitExceeded(file: fileName) { throw m }  // MARK: graph verifier: keeps .resourceLimit
            throw KerasConversionError.invalidGraph(file: fileName, layer: nil, className: nil, message: "", cause: DiagnosticCause(e))
        }
        return graph
    }

    /// The error for the unsupported layers found, nil when there are none.
    private func unsupportedError() -> KerasConversionError? {
        if unsupported.isEmpty { return nil }
        if unsupported.count == 1, let e = unsupported[0].error { return e }
        let items = unsupported.map {
            KerasHookAdvisor.Item(entry: $0.entry, layer: $0.layer, hasConverter: KerasLayerRegistry.converter(for: $0.layer.className) != nil)
        }
        return .unsupportedLayers(file: fileName, layers: KerasHookAdvisor.annotate(items, kerasVersion: source.version.string))
    }

    /// Renames the output tensors after the Keras output layers (`model.output_names`), by
    /// renaming the producing tensor when safe, else with an identity node.
    private func nameOutputs(_ outs: [String], refs: [KerasTensorRef]) -> [String] {
        var result: [String] = []
        var desiredSeen: [String: Int] = [:]
        for (t, ref) in zip(outs, refs) {
            var d = ref.layer
            if let n = desiredSeen[d] { desiredSeen[d] = n + 1; d = "\(d)_\(n)" } else { desiredSeen[d] = 1 }
            if t == d || result.contains(d) { result.append(t); continue }
            let isInput = graphInputs.contains { $0.name == t }
            let usedTwice = outs.filter { $0 == t }.count > 1
            if !isInput, !usedTwice, !tensorNames.contains(d), !graphInputs.contains(where: { $0.name == d }) {
                rename(t, to: d)
                result.append(d)
            } else if !tensorNames.contains(d), !nodeNames.contains(d), !graphInputs.contains(where: { $0.name == d }) {
                nodes.append(Node(name: d, op: .identity, inputs: [t], outputs: [d]))
                nodeNames.insert(d); tensorNames.insert(d); types[d] = types[t]
                result.append(d)
            } else {
                result.append(t)
            }
        }
        return result
    }

    private func rename(_ from: String, to: String) {
        for i in nodes.indices {
            nodes[i].inputs = nodes[i].inputs.map { $0 == from ? to : $0 }
            nodes[i].outputs = nodes[i].outputs.map { $0 == from ? to : $0 }
        }
        types[to] = types.removeValue(forKey: from)
        tensorNames.remove(from); tensorNames.insert(to)
    }

    private func makeGraphInput(_ layer: KerasLayerConfig) throws -> String {
        let raw = layer.batchInputShape ?? []
        var dims: [Int?] = Array(raw.dropFirst())
        if let given = options.inputShapes[layer.name] {
            let saved = dims
            if given.count == dims.count || raw.isEmpty { dims = given } else if given.count == dims.count + 1 { dims = Array(given.dropFirst()) } else {
                throw KerasConversionError.invalidLayerConfig(
                    file: fileName, layer: layer.name, className: "InputLayer", key: "inputShapes[\"\(layer.name)\"]",
                    expected: "\(dims.count) dimensions (the shape without the batch)", found: formatShapeText(given))
            }
            if zip(saved, dims).contains(where: { $0 != nil && $0 != $1 }) { inputsResized = true }
        }
        guard !raw.isEmpty || options.inputShapes[layer.name] != nil, dims.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw KerasConversionError.unknownInputShape(file: fileName, input: layer.name, shape: raw.isEmpty ? [nil] : [nil] + dims)
        }
        let name = layer.name
        let t = TensorType([1] + dims.map { $0! })
        graphInputs.append(ValueInfo(name: name, type: t))
        types[name] = t
        tensorNames.insert(name)
        return name
    }

    private func key(_ r: KerasTensorRef) -> String { "\(r.layer)#\(r.node)" }

    /// Converts a model (top level: `callInputs` nil, graph inputs are made from its
    /// InputLayers; nested: its inputs are bound to the call's tensors). Returns its outputs.
    private func convertModel(_ m: KerasModelConfig, scope: [String], callInputs: [String]?) throws -> [String] {
        var tensors: [KerasTensorRef: String] = [:]
        var outCount: [String: Int] = [:]
        var refShapes: [KerasTensorRef: [Int?]] = [:]
        for l in m.layers {
            for n in l.inboundNodes {
                for (i, r) in n.inputs.enumerated() {
                    outCount[key(r)] = max(outCount[key(r)] ?? 1, r.tensor + 1)
                    if i < n.inputShapes.count, !n.inputShapes[i].isEmpty { refShapes[r] = n.inputShapes[i] }
                    if refShapes[r] == nil, l.buildInputShapes.count == n.inputs.count { refShapes[r] = l.buildInputShapes[i] }
                }
            }
        }
        for r in m.outputs { outCount[key(r)] = max(outCount[key(r)] ?? 1, r.tensor + 1) }

        for (i, r) in m.inputs.enumerated() {
            if let callInputs {
                guard i < callInputs.count else {
                    throw KerasConversionError.invalidArchitecture(
                        file: fileName, message: "nested model '\((scope).joined(separator: "/"))' has \(m.inputs.count) inputs but is called with \(callInputs.count)")
                }
                tensors[r] = callInputs[i]
            } else {
                guard let il = m.layer(named: r.layer), il.className == "InputLayer" else {
                    throw KerasConversionError.invalidArchitecture(file: fileName, message: "model input '\(r.layer)' is not an InputLayer")
                }
                tensors[r] = try makeGraphInput(il)
            }
        }
        let inputLayerNames = Set(m.inputs.map(\.layer))
        var pending: [(Int, Int)] = []
        for (li, l) in m.layers.enumerated() where !(l.className == "InputLayer" && inputLayerNames.contains(l.name)) {
            for ci in l.inboundNodes.indices { pending.append((li, ci)) }
        }
        while !pending.isEmpty {
            var remaining: [(Int, Int)] = []
            for (li, ci) in pending {
                let layer = m.layers[li], node = layer.inboundNodes[ci]
                let ins = node.inputs.map { tensors[$0] }
                if ins.contains(where: { $0 == nil }) { remaining.append((li, ci)); continue }
                let outs = try convertCall(layer, scope: scope, call: ci, inputs: ins.map { $0! },
                                           outputCount: outCount["\(layer.name)#\(ci)"] ?? 1, node: node,
                                           outputShapes: (0..<(outCount["\(layer.name)#\(ci)"] ?? 1)).compactMap {
                                               refShapes[KerasTensorRef(layer: layer.name, node: ci, tensor: $0)] })
                for (t, name) in outs.enumerated() { tensors[KerasTensorRef(layer: layer.name, node: ci, tensor: t)] = name }
            }
            if remaining.count == pending.count {
                let (li, ci) = remaining[0]
                let layer = m.layers[li]
                let missing = layer.inboundNodes[ci].inputs.first { tensors[$0] == nil }!
                throw KerasConversionError.danglingInput(file: fileName, layer: (scope + [layer.name]).joined(separator: "/"),
                                                         className: layer.className, missing: missing.description)
            }
            pending = remaining
        }
        return try m.outputs.map { r in
            guard let t = tensors[r] else {
                throw KerasConversionError.danglingInput(file: fileName, layer: "(model '\(m.name)' outputs)", className: m.className,
                                                         missing: r.description)
            }
            return t
        }
    }

    /// Records an unsupported layer (once per layer); returns its index in `unsupported`.
    @discardableResult
    private func recordUnsupported(_ layer: KerasLayerConfig, scope: [String], inputs: [String], node: KerasInboundNode,
                                   outputShapes: [[Int?]], detail: String? = nil, error: KerasConversionError? = nil) -> Int {
        let name = (scope + [layer.name]).joined(separator: "/")
        if let i = unsupported.firstIndex(where: { $0.entry.name == name }) { return i }
        let recorded = recordedInputShapes(layer, node: node, count: inputs.count)
        let shapes: [[Int?]] = inputs.enumerated().map { i, t in
            if !poisoned.contains(t), let s = types[t]?.shape { return s.map { Optional($0) } }
            return recorded[i]
        }
        unsupported.append((KerasUnsupportedLayer(name: name, className: layer.className,
                                                  detail: detail ?? Self.detail(layer, kerasVersion: source.version.string),
                                                  inputShapes: shapes, outputShapes: outputShapes), error, layer))
        return unsupported.count - 1
    }

    /// The input shapes the file records for a call ([] per unrecorded input).
    private func recordedInputShapes(_ layer: KerasLayerConfig, node: KerasInboundNode, count: Int) -> [[Int?]] {
        (0..<count).map { i in
            if i < node.inputShapes.count, !node.inputShapes[i].isEmpty { return node.inputShapes[i] }
            if layer.buildInputShapes.count == count { return layer.buildInputShapes[i] }
            return []
        }
    }

    /// Whether a shape agrees with a recorded Keras shape: same rank, same known dimensions
    /// (the batch aside).
    private static func agrees(_ shape: [Int], _ recorded: [Int?]) -> Bool {
        shape.count == recorded.count && zip(shape, recorded).dropFirst().allSatisfy { $1 == nil || $0 == $1 }
    }

    /// For the error listing only: a merge layer (Add, …) reading outputs of unsupported layers
    /// together with tensors of one known shape tells those outputs' shape. Records it on the
    /// unsupported layers and gives the tensors that type (no node produces them, and the
    /// conversion fails with `unsupportedLayers` at the end), so the layers downstream are
    /// converted and their shapes known too. Returns whether every poisoned input was resolved.
    private func inferMergeInputs(_ layer: KerasLayerConfig, inputs: [String]) -> Bool {
        guard ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum"].contains(layer.className) else { return false }
        let known = inputs.filter { !poisoned.contains($0) }.compactMap { types[$0] }
        guard let t = known.first, known.allSatisfy({ $0 == t }),
              inputs.allSatisfy({ !poisoned.contains($0) || poisonOrigin[$0] != nil }) else { return false }
        provisional = true
        for p in inputs where poisoned.contains(p) {
            unsupported[poisonOrigin[p]!].entry.outputShapes = [t.shape.map { Optional($0) }]
            poisoned.remove(p)
            types[p] = t
            tensorNames.insert(p)
        }
        return true
    }

    /// For the error listing only: gives the output of an unsupported single-output layer a type
    /// when its shape is known — recorded by Keras, or implied by a padding class's `padding`
    /// config — so the layers downstream are converted and their shapes known; else poisons it.
    private func provisionalOutput(_ index: Int, _ output: String, outputShapes: [[Int?]]) {
        let e = unsupported[index].entry
        var shape: [Int]? = nil
        if !inputsResized, outputShapes.count == 1, let s = outputShapes.first, !s.isEmpty, s.dropFirst().allSatisfy({ ($0 ?? 0) > 0 }) {
            shape = [1] + s.dropFirst().map { $0! }
        } else if e.inputShapes.count == 1, e.inputShapes[0].count == 4, e.inputShapes[0].allSatisfy({ $0 != nil }),
                  let g = KerasHookAdvisor.guessLowering(.init(entry: e, layer: unsupported[index].layer, hasConverter: false)),
                  case let .pad(b)? = g.customShape {
            let i = e.inputShapes[0].map { $0! }
            shape = [1, i[1] + b.top + b.bottom, i[2] + b.left + b.right, i[3]]
            unsupported[index].entry.outputShapes = [shape!.map { Optional($0) }]
        }
        if let shape {
            provisional = true
            types[output] = TensorType(shape)
            tensorNames.insert(output)
        } else {
            poisoned.insert(output)
            poisonOrigin[output] = index
        }
    }

    private func nestedLeaves(top: String) -> [(key: String, name: String, count: Int)] {
        guard let m = topLevel[top]?.nestedModel else { return [] }
        return m.allLayers(scope: [top]).filter { $0.layer.nestedModel == nil }.map {
            (($0.scope + [$0.layer.name]).joined(separator: "/"), $0.layer.name, roles($0.layer).count)
        }
    }

    private func convertCall(_ layer: KerasLayerConfig, scope: [String], call: Int, inputs: [String], outputCount: Int,
                             node: KerasInboundNode, outputShapes: [[Int?]]) throws -> [String] {
        let hooks = hooks(for: layer, scope: scope)
        if let nested = layer.nestedModel, hooks.isEmpty || inputs.contains(where: poisoned.contains) {
            return try convertModel(nested, scope: scope + [layer.name], callInputs: inputs)
        }
        let nodeName = allocateName(layer.name, call: call)
        let outputNames = (0..<outputCount).map { $0 == 0 ? nodeName : "\(nodeName):\($0)" }
        // Keras 3 operations (keras.ops calls) share class names with layers: told apart first.
        let converter: (any KerasLayerConverter)? = layer.nestedModel == nil
            ? (KerasOperationConverter.operation(for: layer) ?? KerasLayerRegistry.converter(for: layer.className)) : nil
        if inputs.contains(where: poisoned.contains), !inferMergeInputs(layer, inputs: inputs) {
            if hooks.isEmpty, converter == nil {
                let i = recordUnsupported(layer, scope: scope, inputs: inputs, node: node, outputShapes: outputShapes)
                if outputNames.count == 1 { poisonOrigin[outputNames[0]] = i }
            }
            outputNames.forEach { poisoned.insert($0) }
            return outputNames
        }
        let top = scope.first ?? layer.name
        var stored = try store.weights(scope: scope, layer: layer.name, nestedLeaves: { self.nestedLeaves(top: top) })
        if keras1Weights {
            stored = try Keras1Weights.preprocess(layer, key: (scope + [layer.name]).joined(separator: "/"), stored: stored, store: store)
        }
        var ctx = KerasLayerContext(
            layer: layer, scope: scope, callIndex: call, nodeName: nodeName, inputs: inputs,
            inputTypes: inputs.map { types[$0]! }, outputNames: outputNames, kerasVersion: source.version, backend: source.backend,
            file: fileName, storedWeights: stored, weightRoles: roles(layer),
            readWeight: { [store] in try store.read($0) }, constantCache: cache)
        if !inputsResized {
            let recorded = recordedInputShapes(layer, node: node, count: inputs.count)
            ctx.recordedInputShapes = recorded.allSatisfy(\.isEmpty) ? [] : recorded
            ctx.recordedOutputShapes = outputShapes.count == outputCount ? outputShapes : []
        }

        let needed = converter?.minimumInputCount ?? 1
        guard inputs.count >= needed else {
            throw KerasConversionError.missingInputs(file: fileName, layer: (scope + [layer.name]).joined(separator: "/"),
                                                     className: layer.className, expected: needed, found: inputs.count)
        }
        var result: [Node]? = nil
        var fromHook = false
        var autoLambdaFailure: String? = nil
        do {
            for h in hooks {
                if let r = try h.convert(ctx) { result = r; fromHook = true; break }
            }
            if result == nil, let converter { result = try KerasChannelsFirst.convert(ctx, with: converter) }
            if result == nil, converter == nil, options.autoLowerLambdas, layer.className == "Lambda" {
                switch KerasLambdaLowering.lower(ctx) {  // checked against Keras' recorded shapes like a hook
                case let .success(nodes): result = nodes; fromHook = true
                case let .failure(why): autoLambdaFailure = why.reason
                }
            }
        } catch let e as KerasConversionError {
            if case let .unsupportedConfiguration(_, _, _, message, _) = e {
                recordUnsupported(layer, scope: scope, inputs: inputs, node: node, outputShapes: outputShapes, detail: message, error: e)
                outputNames.forEach { poisoned.insert($0) }
                return outputNames
            }
            throw e
        }
        if result == nil, let nested = layer.nestedModel {
            // Every hook declined: inline the nested model.
            return try convertModel(nested, scope: scope + [layer.name], callInputs: inputs)
        }
        guard let produced = result else {
            let i = recordUnsupported(layer, scope: scope, inputs: inputs, node: node, outputShapes: outputShapes,
                                      detail: autoLambdaFailure.map { Self.detail(layer, kerasVersion: source.version.string) + "; not lowered automatically: " + $0 })
            if outputNames.count == 1 { provisionalOutput(i, outputNames[0], outputShapes: outputShapes) } else { outputNames.forEach { poisoned.insert($0) } }
            return outputNames
        }
        let qualified = (scope + [layer.name]).joined(separator: "/")
        #if DEBUG  // test builds: the converters' `ops`, which `mlconv ops` lists, stay true
        if !fromHook, let converter {
            var allowed = converter.ops
            if KerasChannelsFirst.applies(to: ctx) { allowed.insert(.transpose) }
            if let inner = BidirectionalConverter.inner(layer.config), let c = KerasLayerRegistry.converter(for: inner.className) {
                allowed.formUnion(c.ops)
            }
            if let stray = produced.first(where: { !allowed.contains($0.op.kind) }) {
                throw KerasConversionError.invalidGraph(
                    file: fileName, layer: qualified, className: layer.className,
                    message: "internal error: the \(layer.className) converter produced a '\(stray.op.kind.rawValue)' node ('\(stray.name)'), which its `ops` (\(allowed.map(\.rawValue).sorted().joined(separator: ", "))) does not list; please report it")
            }
        }
        #endif
        /// A hook's outputs must have the shapes Keras recorded (when recorded).
        func checkRecorded(_ produced: [TensorType]) throws {
            guard fromHook else { return }
            for (i, (t, r)) in zip(produced, ctx.recordedOutputShapes).enumerated() where !Self.agrees(t.shape, r) {
                throw KerasConversionError.invalidHookResult(
                    file: fileName, layer: qualified, className: layer.className,
                    message: "output \(i) has shape \(formatShape(t.shape)) but Keras recorded \(formatOptionalShape(r)) for this layer (input \(ctx.inputTypes.map { formatShape($0.shape) }.joined(separator: ", ")))")
            }
        }
        if produced.isEmpty {
            guard outputCount == 1, let first = inputs.first else {
                throw KerasConversionError.invalidHookResult(file: fileName, layer: qualified, className: layer.className,
                                                             message: "no nodes (identity) for a call with \(inputs.count) inputs and \(outputCount) outputs")
            }
            try checkRecorded([types[first]!])
            return [first]
        }
        var local = types
        var newNodeNames = Set<String>()
        for n in produced {
            guard !nodeNames.contains(n.name), newNodeNames.insert(n.name).inserted else {
                throw KerasConversionError.invalidHookResult(file: fileName, layer: qualified, className: layer.className,
                                                             message: "node name '\(n.name)' is already used")
            }
            var ins: [TensorType] = []
            for i in n.inputs {
                guard let t = local[i] else {
                    throw KerasConversionError.invalidHookResult(
                        file: fileName, layer: qualified, className: layer.className,
                        message: "node '\(n.name)' reads tensor '\(i)', which is neither an input of the layer (\(inputs.joined(separator: ", "))) nor produced by an earlier node of it")
                }
                ins.append(t)
            }
            let outs: [TensorType]
            do { outs = try n.inferOutputTypes(ins) } catch let e as GraphError {
                throw KerasConversionError.invalidGraph(file: fileName, layer: qualified, className: layer.className, message: "", cause: DiagnosticCause(e))
            }
            guard outs.count == n.outputs.count else {
                throw KerasConversionError.invalidGraph(file: fileName, layer: qualified, className: layer.className,
                                                        message: "node '\(n.name)' produces \(outs.count) outputs but names \(n.outputs.count)")
            }
            for (name, t) in zip(n.outputs, outs) {
                guard local[name] == nil, !tensorNames.contains(name) else {
                    throw KerasConversionError.invalidHookResult(file: fileName, layer: qualified, className: layer.className,
                                                                 message: "tensor '\(name)' is already produced elsewhere")
                }
                local[name] = t
            }
        }
        for o in outputNames where local[o] == nil {
            throw KerasConversionError.invalidHookResult(file: fileName, layer: qualified, className: layer.className,
                                                         message: "no node produces the layer's output tensor '\(o)' (nodes: \(produced.map(\.name).joined(separator: ", ")))")
        }
        try checkRecorded(outputNames.map { local[$0]! })
        types = local
        nodes += produced
        for n in produced { nodeNames.insert(n.name); n.outputs.forEach { tensorNames.insert($0) } }
        return outputNames
    }
}
