// MARK: inference passes (issue 12): helpers shared by the structural passes.

/// Who reads each tensor of a graph's top level: node indices (one entry per reading input
/// slot) and whether the tensor is a graph output. Blocks are closed (Block.swift), so only
/// top-level nodes can read a top-level tensor.
struct TensorUses {
    private(set) var readers: [String: [Int]] = [:]
    let graphOutputs: Set<String>
    let graphInputs: Set<String>

    init(_ graph: Graph) {
        graphOutputs = Set(graph.outputs)
        graphInputs = Set(graph.inputs.map(\.name))
        for (i, n) in graph.nodes.enumerated() { for t in n.inputs { readers[t, default: []].append(i) } }
    }

    /// The one node that reads `tensor` (through exactly one input slot), when `tensor` is not a
    /// graph output; nil otherwise.
    func soleReader(of tensor: String) -> Int? {
        guard !graphOutputs.contains(tensor), let r = readers[tensor], r.count == 1 else { return nil }
        return r[0]
    }

    /// Whether nothing reads `tensor` and it is not a graph output.
    func isUnused(_ tensor: String) -> Bool { !graphOutputs.contains(tensor) && (readers[tensor]?.isEmpty ?? true) }
}

extension Graph {
    /// Replaces producer `producer`'s single output by the output of its sole reader `absorbed`
    /// (which the caller has folded into the producer) and removes `absorbed`: the producer
    /// then writes the tensor the absorbed node wrote, under its name, so graph outputs and later
    /// readers are unchanged. The producer's old output tensor disappears.
    mutating func absorb(_ absorbed: Int, into producer: Int) {
        let old = nodes[producer].outputs[0]
        nodes[producer].outputs[0] = nodes[absorbed].outputs[0]
        tensorTypes.removeValue(forKey: old)
        nodes.remove(at: absorbed)
    }

    /// Whether every tensor named in `names` has a recorded float32 type.
    func allFloat32(_ names: [String]) -> Bool {
        names.allSatisfy { tensorTypes[$0]?.elementType == .float32 && !(tensorTypes[$0]?.isList ?? true) }
    }
}
