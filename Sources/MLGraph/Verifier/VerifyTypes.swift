// Graph verifier, layer 3: element types and weight encodings (see GraphVerifier.Layer.types).

extension GraphVerifier {
    /// Weight encodings and storage alignment, then recorded element types against inferred ones.
    static func checkTypes(_ run: inout VerifierRun) throws {
        let g = run.graph
        // Weights first: shape inference (run next) may read weight values.
        for node in g.allNodes {
            for key in node.weights.keys.sorted() {
                guard let w = node.weights[key], weightShapeProblem(w.shape) == nil else { continue }  // shapes / sizes
                try checkEncoding(w, node: node, key: key)
            }
        }
        let inferred = run.inferred()
        for i in g.inputs {
            if let recorded = g.tensorTypes[i.name] { try compareElementTypes(recorded, i.type, tensor: i.name, node: nil) }
        }
        for node in g.nodes {
            for o in node.outputs {
                guard let t = inferred.types[o], inferred.producer[o] != nil else { continue }  // past the stop
                if let recorded = g.tensorTypes[o] { try compareElementTypes(recorded, t, tensor: o, node: node) }
            }
        }
    }

    private static func compareElementTypes(_ recorded: TensorType, _ inferred: TensorType, tensor: String, node: Node?) throws {
        guard recorded.elementType != inferred.elementType || recorded.isList != inferred.isList else { return }
        func kind(_ t: TensorType) -> String { t.isList ? "a list of \(t.elementType)" : "\(t.elementType)" }
        let by = node.map { "its producer, node '\($0.name)' (\($0.op.name)), gives" } ?? "the input is declared as"
        let m = "tensor '\(tensor)' is recorded as \(recorded) but \(by) \(inferred)"
        if let node {
            throw GraphVerificationFailure.at(.types, node: node, tensor: tensor, m, expected: kind(inferred), found: kind(recorded))
        }
        throw GraphVerificationFailure.at(.types, tensor: tensor, m, expected: kind(inferred), found: kind(recorded))
    }

    /// The encoding's fields fit the (usable) shape; float32 / float16 storage is aligned.
    static func checkEncoding(_ w: ConstantTensor, node: Node, key: String) throws {
        let what = "weight '\(key)' of node '\(node.name)' (\(node.op.name)), shape \(formatShape(w.shape)) in \(w.encoding)"
        func fail(_ m: String, expected: String, found: String) -> GraphError {
            GraphVerificationFailure.at(.types, node: node, weight: key, "\(what): \(m)", expected: expected, found: found)
        }
        let address = Int(bitPattern: w.storage.baseAddress)
        switch w.encoding {
        case .float32:
            guard address % 4 == 0 else { throw fail("its storage is not aligned for float32", expected: "a multiple of 4", found: "address \(address)") }
        case .float16:
            guard address % 2 == 0 else { throw fail("its storage is not aligned for float16", expected: "a multiple of 2", found: "address \(address)") }
        case let .linear(q):
            guard (1...8).contains(q.bits) else { throw fail("linear quantization with \(q.bits) bits", expected: "1…8 bits", found: "\(q.bits)") }
            guard q.axis >= 0, q.axis <= Node.maxRank else {
                throw fail("the quantization axis is out of range", expected: "0…\(Node.maxRank)", found: "\(q.axis)")
            }
            let n = w.shape.reduce(1, *)  // usable shape: at most 2^40
            guard !q.scale.isEmpty || n == 0 else { throw fail("linear quantization has no scale", expected: "1 or one per channel", found: "0 scales") }
            if q.scale.count > 1 {
                guard q.axis < w.shape.count, q.scale.count == w.shape[q.axis] else {
                    let channels = q.axis < w.shape.count ? "\(w.shape[q.axis])" : "none (the axis is past the rank)"
                    throw fail("\(q.scale.count) scales for axis \(q.axis)", expected: "1 or \(channels)", found: "\(q.scale.count)")
                }
            }
            guard q.bias.count <= 1 || q.bias.count == q.scale.count else {
                throw fail("\(q.bias.count) biases for \(q.scale.count) scales", expected: "0, 1 or \(q.scale.count)", found: "\(q.bias.count)")
            }
        case let .lookupTable(q):
            guard (1...8).contains(q.bits) else { throw fail("look-up table quantization with \(q.bits) bits", expected: "1…8 bits", found: "\(q.bits)") }
            guard q.table.count == 1 << q.bits else {
                throw fail("the look-up table has \(q.table.count) entries", expected: "\(1 << q.bits) entries (2^bits)", found: "\(q.table.count)")
            }
        case .blockwise, .palettized, .sparse:
            do { try w.encoding.validate(shape: w.shape) } catch let GraphError.invalidConstant(m) {
                throw fail(m, expected: "a valid \(w.encoding) encoding", found: "\(w.encoding)")
            }
        }
    }
}
