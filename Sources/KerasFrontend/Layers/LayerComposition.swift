import MLGraph

// Helpers for converters that compose several IR nodes (attention, normalization and
// preprocessing layers of issue 14).

/// Builds the nodes of one layer call step by step: each step is a node named
/// `<layer>__<tag>` writing a tensor of the same name; `finish` writes the call's output.
struct KerasNodeChain {
    let ctx: KerasLayerContext
    private(set) var nodes: [Node] = []

    init(_ ctx: KerasLayerContext) { self.ctx = ctx }

    /// Appends a node and returns the tensor it writes (`output`, else `<layer>__<tag>`).
    @discardableResult
    mutating func add(_ tag: String, _ op: Op, _ inputs: [String], weights: [String: ConstantTensor] = [:],
                      output: String? = nil) -> String {
        let name = ctx.nodeName + "__" + tag
        let out = output ?? name
        nodes.append(Node(name: name, op: op, inputs: inputs, outputs: [out], weights: weights))
        return out
    }

    /// A `constant` node holding `tensor`.
    mutating func constant(_ tag: String, _ tensor: ConstantTensor) -> String {
        add(tag, .constant, [], weights: ["value": tensor])
    }

    /// Binary op with a constant second operand (weight "y", broadcast as NumPy).
    mutating func binary(_ tag: String, _ f: BinaryFunction, _ x: String, constant y: ConstantTensor, output: String? = nil) -> String {
        add(tag, .binary(f), [x], weights: ["y": y], output: output)
    }

    /// The nodes, the last one renamed to write `output` (the call's output tensor).
    func finish(output: String) -> [Node] {
        guard var last = nodes.last else { return [] }
        var all = nodes
        all.removeLast()
        last.outputs = [output]
        all.append(last)
        return all
    }
}

extension KerasLayerContext {
    /// This call's record in the model config (keyword arguments, input keywords), nil when the
    /// layer has no inbound node for `callIndex` (Sequential configs).
    var inboundCall: KerasInboundNode? {
        layer.inboundNodes.indices.contains(callIndex) ? layer.inboundNodes[callIndex] : nil
    }

    /// A boolean keyword argument of the call (`use_causal_mask`, `return_attention_scores`);
    /// `defaultValue` when absent or null.
    func callFlag(_ name: String, default defaultValue: Bool = false) throws -> Bool {
        guard let v = inboundCall?.callArguments[name], !v.isNull else { return defaultValue }
        if let b = v.bool { return b }
        throw unsupported("call argument \(name)=\(v) is not true or false", hint: "re-save the model calling the layer with a constant \(name)")
    }

    /// The IR inputs of this call by role: positional arguments take `positional` names in order,
    /// keyword tensors their keyword. Keywords not in `allowed` are refused (masks the IR cannot
    /// apply would otherwise be ignored silently).
    func callInputs(positional: [String], allowed: Set<String>) throws -> [String: String] {
        let names = inboundCall?.inputArguments ?? []
        var out: [String: String] = [:]
        var next = 0
        for (i, tensor) in inputs.enumerated() {
            let keyword = i < names.count ? names[i] : nil
            let role: String
            if let k = keyword { role = k } else {
                guard next < positional.count else {
                    throw unsupported("the call passes \(inputs.count) tensors; expected at most \(positional.joined(separator: ", "))",
                                      hint: "call the layer with \(positional.joined(separator: ", ")) only")
                }
                role = positional[next]; next += 1
            }
            guard allowed.contains(role) else {
                throw unsupported("the call passes a tensor as '\(role)', which the converter cannot apply (a mask would change the result)",
                                  hint: "re-save the model without '\(role)' (masks are not supported for this layer), or convert it with a `LayerHook`")
            }
            guard out[role] == nil else { throw unsupported("the call passes '\(role)' twice", hint: "check the model config") }
            out[role] = tensor
        }
        return out
    }

    /// The IR type of an input tensor of this call.
    func type(of tensor: String) -> TensorType? {
        inputs.firstIndex(of: tensor).map { inputTypes[$0] }
    }

    /// An axis list config value (an integer or a list of integers), normalized for `rank`,
    /// sorted, without duplicates; `defaultValue` when absent.
    func axisList(_ key: String, rank: Int, default defaultValue: [Int]) throws -> [Int] {
        let raw: [Int]
        if let v = value(key) {
            if let i = v.int { raw = [i] } else if let a = v.array, !a.isEmpty, a.allSatisfy({ $0.int != nil }) {
                raw = a.compactMap(\.int)
            } else { throw invalid(key, expected: "an axis or a list of axes") }
        } else { raw = defaultValue }
        var out: [Int] = []
        for a in raw {
            let n = try axis(a, rank: rank, key: key)
            guard !out.contains(n) else { throw invalid(key, expected: "distinct axes") }
            out.append(n)
        }
        return out.sorted()
    }

    /// A float vector config value: a number, a list of numbers (nested lists flattened), or
    /// Keras 3's serialized NumPy array; nil when absent or null.
    func floatValues(_ key: String) throws -> [Float]? {
        guard let v = value(key) else { return nil }
        var out: [Float] = []
        func walk(_ j: KerasJSON) -> Bool {
            if let d = j.double { out.append(Float(d)); return true }
            if let a = j.array { return a.allSatisfy(walk) }
            if let inner = j["config"]?["value"] { return walk(inner) }
            return false
        }
        guard walk(v), out.count <= TensorType.maxElementCount else { throw invalid(key, expected: "a number or a list of numbers") }
        return out
    }
}

/// Checked product of dimensions (nil on overflow or a negative dimension).
func checkedProduct(_ dims: [Int]) -> Int? {
    var p = 1
    for d in dims {
        guard d >= 0 else { return nil }
        let (r, o) = p.multipliedReportingOverflow(by: d)
        if o { return nil }
        p = r
    }
    return p
}
