extension Graph {
    /// Computes the static type of every tensor from the inputs' types, node by node, and stores
    /// them in `tensorTypes` (replacing what was there).
    ///
    /// - Throws: `GraphError.invalidTopology` when a node reads a tensor not produced earlier;
    ///   `GraphError.invalidNode` when an op's inputs, attributes or weights do not fit together
    ///   (the message gives expected and found shapes).
    public mutating func inferShapes() throws {
        var types: [String: TensorType] = [:]
        for i in inputs {
            guard let problem = i.type.shapeProblem else { types[i.name] = i.type; continue }
            throw GraphError.invalidTopology("input '\(i.name)' has shape \(formatShape(i.type.shape)): \(problem)")
        }
        for node in nodes {
            var ins: [TensorType] = []
            for name in node.inputs {
                guard let t = types[name] else {
                    throw GraphError.invalidTopology(
                        "node '\(node.name)' (\(node.op.name)) reads tensor '\(name)', which no earlier node or input produces")
                }
                ins.append(t)
            }
            let outs = try node.inferOutputTypes(ins)
            for (name, t) in zip(node.outputs, outs) {
                if let problem = t.shapeProblem {
                    throw GraphError.invalidNode(node: node.name, op: node.op.name,
                        message: "output '\(name)' would have shape \(formatShape(t.shape)): \(problem)")
                }
            }
            guard outs.count == node.outputs.count else {
                throw GraphError.invalidNode(node: node.name, op: node.op.name,
                    message: "produces \(outs.count) outputs, but \(node.outputs.count) output names are given")
            }
            for (name, t) in zip(node.outputs, outs) {
                if types[name] != nil {
                    throw GraphError.invalidTopology("tensor '\(name)' is produced twice (again by node '\(node.name)')")
                }
                types[name] = t
            }
        }
        for o in outputs where types[o] == nil {
            throw GraphError.invalidTopology("graph output '\(o)' is not produced by any node or input")
        }
        tensorTypes = types
    }
}

extension TensorType {
    /// Largest element count a tensor may have (2⁴⁰): products of dimensions cannot overflow.
    public static let maxElementCount = 1 << 40

    /// Why this shape is unusable (a dimension neither positive nor `TensorType.unknown`, a rank
    /// above `Node.maxRank`, or more than 2⁴⁰ elements counting the known dimensions), or nil.
    /// Rank 0 (shape []) is a tensor of one element.
    public var shapeProblem: String? {
        guard shape.count <= Node.maxRank else { return "rank \(shape.count) is more than \(Node.maxRank)" }
        var n = 1
        for d in shape {
            if d == TensorType.unknown { continue }
            guard d > 0 else { return "dimension \(d) is not positive (nor −1, unknown until prediction)" }
            let (p, overflow) = n.multipliedReportingOverflow(by: d)
            guard !overflow, p <= TensorType.maxElementCount else { return "more than 2^40 elements" }
            n = p
        }
        return nil
    }
}

extension Node {
    /// Checks that attribute arrays have the lengths, signs and magnitudes the op needs, so that
    /// shape inference and kernels can index them and no size computation overflows — for graphs
    /// built in code and for graphs read from a file, damaged or crafted (the `.mlbundle` reader
    /// relies on it). `inferOutputTypes` calls it first; each op's rules are its
    /// `OpDefinition.checkAttributes`. - Throws: `GraphError.invalidNode`.
    public func checkAttributes() throws {
        try op.definition.checkAttributes(of: self)
    }

    /// Output types for the given input types; also checks attributes and the weights' shapes
    /// (each op's rules are in its `OpDefinition`, Sources/MLGraph/Ops/).
    /// - Throws: `GraphError.invalidNode` naming this node.
    public func inferOutputTypes(_ ins: [TensorType]) throws -> [TensorType] {
        try checkAttributes()
        for (i, t) in ins.enumerated() {
            if let problem = t.shapeProblem { throw fail("input \(i) has shape \(formatShape(t.shape)): \(problem)") }
        }
        let definition = op.definition
        if !definition.acceptsDynamicTypes {
            if let i = ins.firstIndex(where: \.isList) {
                throw fail("input \(i) is a tensor list (\(ins[i])); only the list ops, cond and whileLoop take lists (read an element with listRead or stack them with listGather)")
            }
            if ins.contains(where: { !$0.isFullyKnown }) { return try inferWithUnknownDimensions(ins) }
        }
        return try definition.inferOutputTypes(of: self, inputs: ins)
    }

    /// Shape rule of an op that knows only concrete shapes, for inputs with unknown dimensions:
    /// the rule runs with every unknown dimension set to 1, 7 and 64 in turn, and twice more with
    /// each unknown dimension set to a known dimension of another input at the same position
    /// counted from the last axis (the broadcasting partner; 1 or 7 when there is none). An output
    /// dimension is known when at least two runs succeed and all successful runs agree on it,
    /// else unknown (the run-time shapes decide: the dynamic executor infers every node again at
    /// the actual shapes). Ranks and element types must not depend on the probes.
    /// - Throws: the first run's error when no run succeeds (e.g. an unknown dimension that must
    ///   equal a weight's dimension: give that dimension in the file).
    private func inferWithUnknownDimensions(_ ins: [TensorType]) throws -> [TensorType] {
        var results: [[TensorType]] = []
        var firstError: Error?
        func partner(_ k: Int, _ axis: Int) -> Int? {
            let fromEnd = ins[k].rank - axis
            for (j, t) in ins.enumerated() where j != k && t.rank >= fromEnd {
                let d = t.shape[t.rank - fromEnd]
                if d != TensorType.unknown, d > 1 { return d }
            }
            return nil
        }
        let probes: [(Int, Bool)] = [(1, false), (7, false), (64, false), (1, true), (7, true)]
        for (probe, aligned) in probes {
            let concrete = ins.enumerated().map { k, t -> TensorType in
                var c = t
                c.shape = t.shape.enumerated().map { a, d in d != TensorType.unknown ? d : (aligned ? partner(k, a) ?? probe : probe) }
                return c
            }
            do { results.append(try op.definition.inferOutputTypes(of: self, inputs: concrete)) } catch {
                if firstError == nil { firstError = error }
            }
        }
        guard let first = results.first else { throw firstError ?? fail("no shape rule result") }
        return try first.indices.map { i in
            guard results.allSatisfy({ $0.count == first.count && $0[i].rank == first[i].rank && $0[i].elementType == first[i].elementType }) else {
                throw fail("the rank or element type of output \(i) depends on dimensions known only at prediction time")
            }
            var t = first[i]
            t.shape = first[i].shape.indices.map { d in
                results.count >= 2 && results.allSatisfy({ $0[i].shape[d] == first[i].shape[d] }) ? first[i].shape[d] : TensorType.unknown
            }
            return t
        }
    }
}
