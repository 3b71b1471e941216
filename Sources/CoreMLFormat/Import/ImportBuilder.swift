// The graph under construction while importing a Core ML neural network: emitted nodes, inferred
// tensor types, and the map from Core ML blob names to IR tensors.
import MLGraph

/// Builds the IR graph node by node.
///
/// Layout of the IR tensors that stand for Core ML blobs (rank 5 [Seq=1, Batch=1, C, H, W]):
/// rank 4 NHWC [1, H, W, C], or rank 2 [1, C] for blobs known to be vectors ([C, 1, 1]: inner
/// product, flatten and global pooling outputs, rank-1 inputs). `toNHWC` / `toVector` convert.
final class ImportBuilder {
    let fileName: String
    var inputs: [ValueInfo] = []
    var nodes: [Node] = []
    var types: [String: TensorType] = [:]
    /// Core ML blob name → current IR tensor.
    var blobs: [String: String] = [:]
    /// Blobs produced by layers that could not be imported.
    var poisoned = Set<String>()
    var problems: [CoreMLImportError.LayerProblem] = []
    var warnings: [String] = []
    /// EXACT_ARRAY_MAPPING network: blobs keep Core ML's exact shapes (Layers/ExactMapping.swift).
    var exact = false
    /// Values known at import of tensors without a producing node here (block inputs bound to
    /// outer constants): `staticValue` (Layers/ControlFlowImport.swift).
    var knownValues: [String: [Double]] = [:]
    // MARK: flexible shapes
    /// Some input has a flexible shape: EXACT layout changes whose extra leading axes are all 1
    /// use squeeze / expandDims (valid at every size) instead of reshapes to the default shape.
    var flexibleShapes = false
    private var nodeNames = Set<String>()

    init(fileName: String) { self.fileName = fileName }

    // MARK: Names

    /// `base`, or `base__2`, `base__3`, … if a node already has that name.
    func freshNodeName(_ base: String) -> String {
        if !nodeNames.contains(base) { return base }
        var i = 2
        while nodeNames.contains("\(base)__\(i)") { i += 1 }
        return "\(base)__\(i)"
    }

    /// `base`, or `base__2`, … if a tensor already has that name.
    func freshTensorName(_ base: String) -> String {
        if types[base] == nil { return base }
        var i = 2
        while types["\(base)__\(i)"] != nil { i += 1 }
        return "\(base)__\(i)"
    }

    // MARK: Emitting

    /// Adds a graph input.
    func addInput(_ name: String, _ shape: [Int]) {
        inputs.append(ValueInfo(name: name, type: TensorType(shape)))
        types[name] = TensorType(shape)
    }

    /// Appends a node with one output and types it. The node is named `name` (made unique) and
    /// its output tensor `output` (default: the node name; made unique).
    /// - Returns: the output tensor name.
    /// - Throws: `LayerImportFailure` with the IR's shape-inference message when the node does
    ///   not fit its inputs.
    @discardableResult
    func emit(_ name: String, _ op: Op, _ ins: [String], output: String? = nil,
              weights: [String: ConstantTensor] = [:]) throws -> String {
        let nodeName = freshNodeName(name)
        let out = freshTensorName(output ?? nodeName)
        let node = Node(name: nodeName, op: op, inputs: ins, outputs: [out], weights: weights)
        let inTypes = ins.map { types[$0]! }
        let outTypes: [TensorType]
        do { outTypes = try node.inferOutputTypes(inTypes) } catch {
            throw LayerImportFailure("the IR rejects the converted \(op.name) node", cause: error)
        }
        nodes.append(node)
        nodeNames.insert(nodeName)
        types[out] = outTypes[0]
        return out
    }

    /// Appends a node with several outputs (custom layers).
    func emitMulti(_ name: String, _ op: Op, _ ins: [String], outputs: [String],
                   weights: [String: ConstantTensor] = [:], blocks: [Block] = []) throws -> [String] {
        let nodeName = freshNodeName(name)
        var outs: [String] = []
        for o in outputs {
            let t = freshTensorName(o)
            // Reserve the name before the next one is chosen.
            types[t] = TensorType([])
            outs.append(t)
        }
        let node = Node(name: nodeName, op: op, inputs: ins, outputs: outs, weights: weights, blocks: blocks)
        let outTypes: [TensorType]
        do { outTypes = try node.inferOutputTypes(ins.map { types[$0]! }) } catch {
            for t in outs { types[t] = nil }
            throw LayerImportFailure("the IR rejects the converted \(op.name) node", cause: error)
        }
        nodes.append(node)
        nodeNames.insert(nodeName)
        for (t, ty) in zip(outs, outTypes) { types[t] = ty }
        return outs
    }

    /// Renames tensor `old` to `new` everywhere (node outputs and inputs, types, blob map).
    func renameTensor(_ old: String, to new: String) {
        for i in nodes.indices {
            nodes[i].inputs = nodes[i].inputs.map { $0 == old ? new : $0 }
            nodes[i].outputs = nodes[i].outputs.map { $0 == old ? new : $0 }
        }
        types[new] = types[old]
        types[old] = nil
        for (k, v) in blobs where v == old { blobs[k] = new }
    }

    // MARK: Shapes and layouts

    func shape(_ tensor: String) -> [Int] { types[tensor]?.shape ?? [] }

    /// Core ML's (C, H, W) of an IR blob tensor ([1, H, W, C] or [1, C]).
    func chw(_ tensor: String) -> (c: Int, h: Int, w: Int) {
        let s = shape(tensor)
        if s.count == 4 { return (s[3], s[1], s[2]) }
        if s.count == 2 { return (s[1], 1, 1) }
        return (s.last ?? 0, 1, 1)
    }

    func isVector(_ tensor: String) -> Bool { shape(tensor).count == 2 }

    /// The channel axis of a blob tensor (3 for NHWC, 1 for [1, C]).
    func channelAxis(_ tensor: String) -> Int { shape(tensor).count - 1 }

    /// The blob as NHWC: itself, or a reshape [1, C] → [1, 1, 1, C] named `<base>__nhwc`.
    func toNHWC(_ tensor: String, base: String) throws -> String {
        if shape(tensor).count == 4 { return tensor }
        let c = chw(tensor).c
        return try emit(base + "__nhwc", .reshape(targetShape: [1, 1, c]), [tensor])
    }

    /// The blob as a vector [1, C]: itself, or a reshape of [1, 1, 1, C] named `<base>__vector`.
    /// - Throws: `LayerImportFailure` when H or W is not 1.
    func toVector(_ tensor: String, base: String) throws -> String {
        if shape(tensor).count == 2 { return tensor }
        let d = chw(tensor)
        guard d.h == 1, d.w == 1 else {
            throw LayerImportFailure("expects a [C, 1, 1] blob, found [C, H, W] = [\(d.c), \(d.h), \(d.w)]")
        }
        return try emit(base + "__vector", .reshape(targetShape: [d.c]), [tensor])
    }

    /// The IR tensor of blob `name`.
    func blob(_ name: String) throws -> String {
        guard let t = blobs[name] else {
            throw LayerImportFailure("reads blob '\(name)', which no earlier layer or model input produces")
        }
        return t
    }

    // MARK: Constants in the graph

    /// A `constant` node holding `values` (given in Core ML's [C, H, W] order) as an IR tensor
    /// [N, H, W, C] ([N, C] when H = W = 1), N the batch of `anchor` (any blob tensor).
    func constantTensor(_ values: [Float], c: Int, h: Int, w: Int, anchor: String, base: String) throws -> String {
        let batch = shape(anchor).first ?? 1
        let n = c * h * w
        var hwc = [Float](repeating: 0, count: n)
        for ci in 0..<c { for y in 0..<h { for x in 0..<w { hwc[(y * w + x) * c + ci] = values[(ci * h + y) * w + x] } } }
        let irShape = h == 1 && w == 1 ? [batch, c] : [batch, h, w, c]
        let tiled = batch == 1 ? hwc : Array([[Float]](repeating: hwc, count: batch).joined())
        return try emit(base + "__const", .constant, [], weights: ["value": ConstantTensor(shape: irShape, floats: tiled)])
    }
}
