// Layers tf.keras makes by itself when a model calls TensorFlow functions on Keras tensors:
// `TFOpLambda` / `SlicingOpLambda` (tf.keras ≥ 2.4: the function's name, e.g. "math.multiply",
// with its arguments in the inbound node) and `TensorFlowOpLayer` (tf.keras 2.0–2.3: a raw
// TensorFlow NodeDef and its constant inputs). Both are lowered through `PythonLowering`, with
// TensorFlow's signatures and defaults.

import MLGraph

extension KerasInboundNode {
    /// The layer name tf.keras writes for a constant positional argument
    /// (`["_CONSTANT_VALUE", -1, 2.0, {…}]`).
    static let constantValueMarker = "_CONSTANT_VALUE"
    /// Classes whose Keras 2 call kwargs may hold tensors (`{"y": ["input_2", 0, 0]}`), which
    /// are then inputs of the call.
    static let tensorKwargClasses: Set<String> = ["TFOpLambda", "SlicingOpLambda"]

    /// Whether a JSON value is a Keras 2 tensor reference `[layer, node, tensor]`.
    static func isKeras2TensorReference(_ v: KerasJSON) -> Bool {
        guard let a = v.array, a.count == 3, let n = a[0].string, n != constantValueMarker,
              a[1].int != nil, a[2].int != nil else { return false }
        return true
    }

    /// The tensor references inside Keras 2 call kwargs, in the order `TFOpCallArguments` reads
    /// them (object keys sorted, lists in order).
    static func keras2KwargTensors(_ json: KerasJSON, depth: Int = 0) -> [KerasTensorRef] {
        guard depth < 32 else { return [] }
        if isKeras2TensorReference(json), let a = json.array, let n = a[0].string {
            return [KerasTensorRef(layer: n, node: a[1].int ?? 0, tensor: a[2].int ?? 0)]
        }
        if let a = json.array { return a.flatMap { keras2KwargTensors($0, depth: depth + 1) } }
        if let o = json.object { return o.keys.sorted().flatMap { keras2KwargTensors(o[$0]!, depth: depth + 1) } }
        return []
    }
}

/// The positional and keyword arguments of one recorded call, tensors bound to the call's IR
/// inputs in the order the config parser listed them.
struct TFOpCallArguments {
    var args: [LoweredValue] = []
    var kwargs: [(String, LoweredValue)] = []

    /// Reads the call record of `ctx` (Keras 2 entries or Keras 3 `{args, kwargs}`).
    init(_ ctx: KerasLayerContext) throws {
        guard let node = ctx.layer.inboundNodes.indices.contains(ctx.callIndex) ? ctx.layer.inboundNodes[ctx.callIndex].call : nil else {
            throw ctx.unsupported("the call's arguments are not recorded", hint: "re-save the model with tf.keras ≥ 2.4 or Keras 3")
        }
        var next = 0
        func tensor() throws -> LoweredValue {
            guard next < ctx.inputs.count else {
                throw ctx.unsupported("the call record names more tensors than the layer's \(ctx.inputs.count) inputs", hint: "report this file")
            }
            defer { next += 1 }
            return .tensor(ctx.inputs[next])
        }
        func value(_ v: KerasJSON, keras3: Bool, depth: Int = 0) throws -> LoweredValue {
            guard depth < 32 else { throw ctx.unsupported("call arguments nested too deeply", hint: "report this file") }
            if keras3, v["class_name"]?.string == "__keras_tensor__" { return try tensor() }
            if !keras3, KerasInboundNode.isKeras2TensorReference(v) { return try tensor() }
            switch v {
            case let .array(items):
                var out: [LoweredValue] = []
                for i in items { out.append(try value(i, keras3: keras3, depth: depth + 1)) }
                return .sequence(out, isTuple: false)
            case let .object(o):
                if o["class_name"]?.string == "__ellipsis__" { return .constant(.ellipsis) }
                if o["class_name"]?.string == "__slice__", let c = o["config"] { return try value(c, keras3: keras3, depth: depth + 1) }
                if o.keys.contains("start") || o.keys.contains("stop") || o.keys.contains("step") {
                    func part(_ k: String) -> PythonConstant { o[k].map { PythonConstant(keras: $0) } ?? .none }
                    return .slice(part("start"), part("stop"), part("step"))
                }
                if o["class_name"]?.string == "__tuple__", let items = o["config"]?["value"] {
                    guard case let .sequence(s, _) = try value(items, keras3: keras3, depth: depth + 1) else { break }
                    return .sequence(s, isTuple: true)
                }
                throw ctx.unsupported("call argument \(String(v.description.prefix(80))) is not a tensor, number, string, list or slice",
                                      hint: "replace the operation with built-in Keras layers and re-save the model")
            default:
                return .constant(PythonConstant(keras: v))
            }
            return .constant(PythonConstant(keras: v))
        }
        if var entries = node.array {  // Keras 2
            if entries.first?.string != nil { entries = [node] }  // the node is one entry
            var positional: [LoweredValue] = []
            for e in entries {
                guard let a = e.array, let n = a.first?.string else { continue }
                if n == KerasInboundNode.constantValueMarker {
                    positional.append(a.count > 2 ? .constant(PythonConstant(keras: a[2])) : .constant(.none))
                } else {
                    positional.append(try tensor())
                }
            }
            args = positional.count == 1 ? positional : [.sequence(positional, isTuple: false)]
            if let kw = entries.last?.array?.dropFirst(3).first?.object {
                for k in kw.keys.sorted() { kwargs.append((k, try value(kw[k]!, keras3: false))) }
            }
        } else {  // Keras 3
            for a in node["args"]?.array ?? [] { args.append(try value(a, keras3: true)) }
            if let kw = node["kwargs"]?.object {
                for k in kw.keys.sorted() { kwargs.append((k, try value(kw[k]!, keras3: true))) }
            }
        }
        guard next == ctx.inputs.count else {
            throw ctx.unsupported("the call record names \(next) tensors but the layer has \(ctx.inputs.count) inputs", hint: "report this file")
        }
        kwargs.removeAll { $0.0 == "name" }
    }
}

/// Lowers one call through `PythonLowering` and names its output.
func lowerPythonCall(_ ctx: KerasLayerContext, what: String,
                     _ body: (inout PythonLowering) throws(PythonLoweringFailure) -> LoweredValue) throws -> [Node] {
    guard ctx.outputNames.count == 1 else {
        throw ctx.unsupported("\(what) has \(ctx.outputNames.count) outputs; one is supported", hint: "replace it with built-in Keras layers")
    }
    var lowering = PythonLowering(nodeName: ctx.nodeName, inputs: ctx.inputs, inputTypes: ctx.inputTypes)
    do {
        let v = try body(&lowering)
        guard case let .tensor(t) = v else {
            throw ctx.unsupported("\(what) gives \(lowering.describe(v)), not a tensor", hint: "replace it with built-in Keras layers")
        }
        return lowering.finish(result: t, output: ctx.outputNames[0], finalName: ctx.nodeName)
    } catch let e as PythonLoweringFailure {
        throw ctx.unsupported("\(what): \(e.reason)", hint: "replace the TensorFlow call with built-in Keras layers, or convert this layer with a hook (--lower / --custom-layer, docs/HOOKS.md)")
    }
}

/// The IR op kinds Python-level lowering may produce.
let pythonLoweringOps: Set<OpKind> = [.activation, .unary, .binary, .constant, .matmul, .sliceByIndex, .crop, .expandDims, .reduce, .softmax,
                                      .logSoftmax, .clip, .concat, .stack, .squeeze, .reshapeND, .transpose, .tile, .pad]

/// tf.keras `TFOpLambda` (a TensorFlow function called on Keras tensors, e.g. `tf.math.multiply`,
/// `tf.reshape`, `tf.nn.softmax`, `x + 1` as `__operators__.add`) and `SlicingOpLambda`
/// (`x[:, 1:3]` as `__operators__.getitem` with its `slice_spec`).
struct TFOpLambdaConverter: KerasLayerConverter {
    let classNames = ["TFOpLambda", "SlicingOpLambda"]
    var ops: Set<OpKind> { pythonLoweringOps }
    var minimumInputCount: Int { 0 }

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        let function = try ctx.string("function")
        let call = try TFOpCallArguments(ctx)
        return try lowerPythonCall(ctx, what: "tf.\(function)") { (l: inout PythonLowering) throws(PythonLoweringFailure) -> LoweredValue in
            switch function {
            case "__operators__.getitem":
                guard let base = call.args.first else { throw PythonLoweringFailure("no tensor to index") }
                let spec = call.kwargs.first { $0.0 == "slice_spec" }?.1 ?? (call.args.count > 1 ? call.args[1] : .constant(.none))
                var index = spec
                if case let .sequence(items, _) = spec { index = .sequence(items, isTuple: true) }
                return try l.subscriptValue(base, index)
            case "__operators__.add":
                return try l.call("tf.math.add", args: call.args, kwargs: call.kwargs)
            default:
                return try l.call("tf." + function, args: call.args, kwargs: call.kwargs)
            }
        }
    }
}

/// tf.keras 2.0–2.3 `TensorFlowOpLayer`: a raw TensorFlow op (`node_def.op`) whose inputs are the
/// layer's tensors and the constants of `constants` (by input position).
struct TensorFlowOpLayerConverter: KerasLayerConverter {
    let classNames = ["TensorFlowOpLayer"]
    var ops: Set<OpKind> { pythonLoweringOps }
    var minimumInputCount: Int { 0 }

    /// TensorFlow op → the tf function with the same semantics, for ops whose inputs map one to
    /// one onto the function's positional parameters.
    static let functions: [String: String] = [
        "AddV2": "add", "Add": "add", "Sub": "subtract", "Mul": "multiply", "RealDiv": "truediv", "Div": "truediv",
        "Maximum": "maximum", "Minimum": "minimum", "Pow": "pow", "FloorDiv": "floordiv", "FloorMod": "floormod", "BiasAdd": "add",
        "Relu": "relu", "Relu6": "relu6", "Sigmoid": "sigmoid", "Tanh": "tanh", "Softplus": "softplus", "Softsign": "softsign",
        "Elu": "elu", "Selu": "selu", "Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Rsqrt": "rsqrt", "Square": "square",
        "Abs": "abs", "Neg": "negative", "Reciprocal": "reciprocal", "Inv": "reciprocal", "Floor": "floor", "Ceil": "ceil",
        "Round": "round", "Sign": "sign", "Sin": "sin", "Cos": "cos", "Erf": "erf",
        "Transpose": "transpose", "Reshape": "reshape", "ExpandDims": "expand_dims", "Tile": "tile",
        "ClipByValue": "clip_by_value", "Pad": "pad", "MatMul": "matmul", "BatchMatMulV2": "matmul", "BatchMatMul": "matmul",
    ]
    static let reductions: [String: String] = ["Mean": "reduce_mean", "Sum": "reduce_sum", "Max": "reduce_max", "Min": "reduce_min",
                                               "Prod": "reduce_prod"]

    func convert(_ ctx: KerasLayerContext) throws -> [Node] {
        guard let nodeDef = ctx.value("node_def"), let op = nodeDef["op"]?.string else { throw ctx.invalid("node_def", expected: "a TensorFlow NodeDef with an op") }
        let declared = nodeDef["input"]?.array?.count ?? 0
        let constants = ctx.value("constants")?.object ?? [:]
        // Inputs in NodeDef order: a constant where `constants` has the position, else the next tensor.
        var inputs: [LoweredValue] = []
        var next = 0
        for i in 0..<max(declared, ctx.inputs.count + constants.count) {
            if let c = constants[String(i)] {
                inputs.append(.constant(PythonConstant(keras: c)))
            } else if next < ctx.inputs.count {
                inputs.append(.tensor(ctx.inputs[next])); next += 1
            }
        }
        guard next == ctx.inputs.count else {
            throw ctx.unsupported("the NodeDef lists \(declared) inputs but the layer has \(ctx.inputs.count) tensors and \(constants.count) constants", hint: "report this file")
        }
        let attrs = nodeDef["attr"]?.object ?? [:]
        func attrInt(_ k: String) -> Int { attrs[k]?["i"].flatMap { $0.int ?? $0.string.flatMap { Int($0) } } ?? 0 }
        func attrBool(_ k: String) -> Bool { attrs[k]?["b"]?.bool ?? false }
        func attrInts(_ k: String) -> [Int] {
            (attrs[k]?["list"]?["i"]?.array ?? []).compactMap { $0.int ?? $0.string.flatMap { Int($0) } }
        }
        return try lowerPythonCall(ctx, what: "TensorFlow op \(op)") { (l: inout PythonLowering) throws(PythonLoweringFailure) -> LoweredValue in
            for k in ["transpose_a", "transpose_b", "adj_x", "adj_y"] where attrBool(k) {
                throw PythonLoweringFailure("\(k)=true is not supported")
            }
            if op == "Identity" || op == "StopGradient" {
                guard let x = inputs.first else { throw PythonLoweringFailure("no input") }
                return x
            }
            if let f = TensorFlowOpLayerConverter.functions[op] {
                var args = inputs
                if op == "Pad", args.count == 2 { args.append(.constant(.string("CONSTANT"))) }
                return try l.call("tf." + f, args: args, kwargs: [])
            }
            if let f = TensorFlowOpLayerConverter.reductions[op] {
                guard inputs.count == 2 else { throw PythonLoweringFailure("\(op) takes 2 inputs") }
                return try l.call("tf." + f, args: inputs, kwargs: [("keepdims", .constant(.bool(attrBool("keep_dims"))))])
            }
            switch op {
            case "ConcatV2":
                guard inputs.count >= 2, let axis = inputs.last else { throw PythonLoweringFailure("ConcatV2 takes values and an axis") }
                return try l.call("tf.concat", args: [.sequence(Array(inputs.dropLast()), isTuple: false), axis], kwargs: [])
            case "Softmax", "LogSoftmax":
                return try l.call(op == "Softmax" ? "tf.nn.softmax" : "tf.nn.log_softmax", args: inputs, kwargs: [])
            case "LeakyRelu":
                let alpha = attrs["alpha"]?["f"]?.double ?? 0.2
                return try l.call("tf.nn.leaky_relu", args: inputs, kwargs: [("alpha", .constant(.float(alpha)))])
            case "Squeeze":
                let dims = attrInts("squeeze_dims")
                return try l.call("tf.squeeze", args: inputs,
                                  kwargs: [("axis", dims.isEmpty ? .constant(.none) : .constant(.list(dims.map { .int(Int64($0)) })))])
            case "MirrorPad":
                let mode = attrs["mode"]?["s"]?.string ?? ""
                // NodeDef strings are base64 in JSON ("UkVGTEVDVA==" is REFLECT).
                let text = mode == "UkVGTEVDVA==" || mode == "REFLECT" ? "REFLECT" : "SYMMETRIC"
                return try l.call("tf.pad", args: inputs + [.constant(.string(text))], kwargs: [])
            case "PadV2":
                guard inputs.count == 3 else { throw PythonLoweringFailure("PadV2 takes 3 inputs") }
                return try l.call("tf.pad", args: [inputs[0], inputs[1], .constant(.string("CONSTANT")), inputs[2]], kwargs: [])
            case "StridedSlice":
                guard inputs.count == 4, let begin = l.constantValue(inputs[1]).flatMap(PythonLowering.numericArray),
                      let end = l.constantValue(inputs[2]).flatMap(PythonLowering.numericArray),
                      let strides = l.constantValue(inputs[3]).flatMap(PythonLowering.numericArray),
                      begin.values.count == end.values.count, end.values.count == strides.values.count else {
                    throw PythonLoweringFailure("StridedSlice needs constant begin, end and strides of one length")
                }
                var items: [LoweredValue] = []
                for i in 0..<begin.values.count {
                    let bit = 1 << i
                    if attrInt("ellipsis_mask") & bit != 0 { items.append(.constant(.ellipsis)); continue }
                    if attrInt("new_axis_mask") & bit != 0 { items.append(.constant(.none)); continue }
                    let b = Int64(begin.values[i]), e = Int64(end.values[i]), s = Int64(strides.values[i])
                    if attrInt("shrink_axis_mask") & bit != 0 { items.append(.constant(.int(b))); continue }
                    items.append(.slice(attrInt("begin_mask") & bit != 0 ? .none : .int(b),
                                        attrInt("end_mask") & bit != 0 ? .none : .int(e), .int(s)))
                }
                guard let base = inputs.first else { throw PythonLoweringFailure("no input") }
                return try l.subscriptValue(base, .sequence(items, isTuple: true))
            default:
                throw PythonLoweringFailure("the TensorFlow op \(op) has no IR lowering")
            }
        }
    }
}
