// Control flow, tensor lists and run-time shapes: cond, whileLoop, makeList, listRead, listWrite,
// listGather, listScatter, listLength, shape (docs/ARCHITECTURE.md, "Control flow and dynamic
// shapes"). These ops run in `Model`'s dynamic executor; their shape rules accept unknown
// dimensions (`TensorType.unknown`) and tensor lists (`TensorType.isList`).

/// Attributes of `Op.makeList` (MIL `make_list`).
public struct MakeListAttributes: Codable, Hashable, Sendable {
    /// Shape of every element (rank 1…`Node.maxRank`; −1 for a dimension fixed by the first write).
    public var elementShape: [Int]
    public var elementType: ElementType
    /// Initial length (0…`Node.maxCountAttribute`) when the node has no length input. Elements
    /// not yet written read as zeros (the element shape must then be known).
    public var length: Int
    /// Whether writes past the end grow the list (MIL `dynamic_length`); otherwise such a write
    /// is a run-time error.
    public var dynamicLength: Bool

    public init(elementShape: [Int], elementType: ElementType = .float32, length: Int = 0, dynamicLength: Bool = true) {
        self.elementShape = elementShape; self.elementType = elementType; self.length = length; self.dynamicLength = dynamicLength
    }
}

extension Node {
    /// Checks that input `i` is a tensor list.
    func expectList(_ t: TensorType, _ what: String) throws {
        guard t.isList else { throw fail("\(what) must be a tensor list (from makeList), found the tensor \(t)") }
    }

    /// Checks that `t` is a one-element index tensor (int32, int64, or float32 holding an integer).
    func expectIndexScalar(_ t: TensorType, _ what: String) throws {
        guard !t.isList, [.int32, .int64, .float32].contains(t.elementType), t.shape.allSatisfy({ $0 == 1 || $0 == TensorType.unknown }) else {
            throw fail("\(what) must be a one-element int32, int64 or float32 tensor (e.g. shape (1)), found \(t)")
        }
    }

    /// Checks that `t` is a rank-1 index vector (int32, int64, or float32 holding integers).
    func expectIndexVector(_ t: TensorType, _ what: String) throws {
        guard !t.isList, [.int32, .int64, .float32].contains(t.elementType), t.rank == 1 else {
            throw fail("\(what) must be a rank-1 int32, int64 or float32 tensor of indices, found \(t)")
        }
    }

    /// Checks that `t` is a predicate: one element (bool, or a number: true when non-zero).
    func expectPredicate(_ t: TensorType, _ what: String) throws {
        guard !t.isList, t.shape.allSatisfy({ $0 == 1 || $0 == TensorType.unknown }) else {
            throw fail("\(what) must be a one-element tensor (bool, or a number: non-zero is true), found \(t)")
        }
    }

    /// Deepest nesting of blocks under this node (0 without blocks).
    public var blockNesting: Int {
        blocks.map { b in 1 + (b.nodes.map(\.blockNesting).max() ?? 0) }.max() ?? 0
    }

    /// Most levels of nested blocks (shape inference of nested loops costs up to 4 block
    /// inferences per level, so a file cannot make it explode).
    public static let maxBlockNesting = 8

    /// Checks that the node owns exactly `n` blocks, named by `labels` in messages, nested at
    /// most `maxBlockNesting` deep.
    func expectBlocks(_ labels: [String]) throws {
        guard blocks.count == labels.count else {
            throw fail("needs \(labels.count) blocks (\(labels.joined(separator: ", "))), found \(blocks.count)")
        }
        guard blockNesting <= Node.maxBlockNesting else {
            throw fail("blocks nest \(blockNesting) levels deep; at most \(Node.maxBlockNesting) are supported")
        }
    }
}

// MARK: - cond

/// `Op.cond`: inputs pred, operands…; blocks [then, else], each binding the operands.
enum CondDefinition: OpDefinition {
    static let kind = OpKind.cond
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "runs one of two blocks (then / else) on its operands, chosen by a one-element predicate"
    static let milOps = ["cond"]
    static let onnxOps = ["If"]
    static let acceptsDynamicTypes = true

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .cond }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, atLeast: 1)
        try node.expectPredicate(ins[0], "input 0 (the predicate)")
        try node.expectBlocks(["then", "else"])
        let operands = Array(ins.dropFirst())
        let a = try node.blocks[0].inferOutputTypes(inputs: operands, owner: node, label: "then")
        let b = try node.blocks[1].inferOutputTypes(inputs: operands, owner: node, label: "else")
        guard a.count == b.count else {
            throw node.fail("the then block yields \(a.count) value(s), the else block \(b.count); both must yield the same number")
        }
        return try zip(a, b).enumerated().map { i, p in
            guard let t = p.0.joined(with: p.1) else {
                throw node.fail("output \(i): the then block yields \(p.0), the else block \(p.1); branches must agree in element type, rank and list-ness (dimensions may differ: they become unknown)")
            }
            return t
        }
    }
}

// MARK: - whileLoop

/// `Op.whileLoop`: inputs = initial loop variables; blocks [cond, body], each binding the loop
/// variables; outputs = the final loop variables.
enum WhileLoopDefinition: OpDefinition {
    static let kind = OpKind.whileLoop
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "repeats a body block on loop variables while a condition block yields true"
    static let milOps = ["while_loop"]
    static let onnxOps = ["Loop"]
    static let acceptsDynamicTypes = true

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .whileLoop }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, atLeast: 1)
        try node.expectBlocks(["cond", "body"])
        // Loop-carried types: widen (dimensions that change become unknown) until the body
        // yields what it was given: at most 3 rounds (the third with every dimension of a
        // still-changing variable unknown), so nested loops cannot make inference explode.
        var types = ins
        var stable = false
        for round in 0..<3 {
            let outs = try node.blocks[1].inferOutputTypes(inputs: types, owner: node, label: "body")
            guard outs.count == types.count else {
                throw node.fail("the body block yields \(outs.count) value(s) for \(types.count) loop variable(s)")
            }
            let joined = try zip(types, outs).enumerated().map { i, p -> TensorType in
                guard let t = p.0.joined(with: p.1) else {
                    throw node.fail("loop variable \(i) is \(p.0) but the body yields \(p.1); a loop variable must keep its element type, rank and list-ness")
                }
                return t
            }
            if joined == types { stable = true; break }
            types = round == 0 ? joined : zip(types, joined).map { old, new in
                guard old != new else { return new }
                var t = new
                t.shape = Array(repeating: TensorType.unknown, count: t.rank)
                return t
            }
        }
        guard stable else { throw node.fail("the loop variables' types do not settle") }
        let c = try node.blocks[0].inferOutputTypes(inputs: types, owner: node, label: "cond")
        guard c.count == 1 else { throw node.fail("the cond block must yield one predicate, found \(c.count) value(s)") }
        try node.expectPredicate(c[0], "the cond block's output")
        return types
    }
}

// MARK: - tensor lists

enum MakeListDefinition: OpDefinition {
    static let kind = OpKind.makeList
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "a tensor list of a given element type and shape, initial length from an attribute or a one-element input"
    static let milOps = ["make_list"]
    static let onnxOps = ["SequenceEmpty"]
    static let acceptsDynamicTypes = true

    static func checkAttributes(of node: Node) throws {
        guard case let .makeList(a) = node.op else { return }
        guard !a.elementShape.isEmpty, a.elementShape.count <= Node.maxRank else {
            throw node.fail("element shape must have rank 1…\(Node.maxRank), found \(a.elementShape)")
        }
        if let p = TensorType(a.elementShape).shapeProblem { throw node.fail("element shape \(formatShape(a.elementShape)): \(p)") }
        guard a.length >= 0, a.length <= Node.maxCountAttribute else {
            throw node.fail("length must be in 0…\(Node.maxCountAttribute), found \(a.length)")
        }
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .makeList(a) = op else { return [:] }
        return ["elem_shape": .ints(a.elementShape), "dtype": .string(a.elementType.milName), "init_length": .int(a.length),
                "dynamic_length": .bool(a.dynamicLength)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op {
        .makeList(MakeListAttributes(elementShape: try r.ints("elem_shape"), elementType: try r.elementType("dtype"),
                                     length: try r.int("init_length"), dynamicLength: try r.bool("dynamic_length")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .makeList(a) = node.op else { return [] }
        guard ins.count <= 1 else { throw node.fail("expects 0 inputs or 1 (the length), found \(ins.count)") }
        if let t = ins.first { try node.expectIndexScalar(t, "input 0 (the length)") }
        return [.list(elementShape: a.elementShape, a.elementType)]
    }
}

enum ListReadDefinition: OpDefinition {
    static let kind = OpKind.listRead
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "element `index` of a tensor list (negative counts from the end)"
    static let milOps = ["list_read"]
    static let onnxOps = ["SequenceAt"]
    static let acceptsDynamicTypes = true
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .listRead }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 2)
        try node.expectList(ins[0], "input 0")
        try node.expectIndexScalar(ins[1], "input 1 (the index)")
        return [TensorType(ins[0].shape, ins[0].elementType)]
    }
}

enum ListWriteDefinition: OpDefinition {
    static let kind = OpKind.listWrite
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "the list with element `index` set to a tensor (growing a dynamic-length list)"
    static let milOps = ["list_write"]
    static let onnxOps = ["SequenceInsert"]
    static let acceptsDynamicTypes = true
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .listWrite }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 3)
        try node.expectList(ins[0], "input 0")
        try node.expectIndexScalar(ins[1], "input 1 (the index)")
        let element = TensorType(ins[0].shape, ins[0].elementType)
        guard !ins[2].isList, element.joined(with: ins[2]) != nil else {
            throw node.fail("input 2 (the value) is \(ins[2]), but the list holds \(element)")
        }
        return [ins[0]]
    }
}

enum ListGatherDefinition: OpDefinition {
    static let kind = OpKind.listGather
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "the list elements at `indices`, stacked along a new axis 0"
    static let milOps = ["list_gather"]
    static let onnxOps: [String] = []
    static let acceptsDynamicTypes = true
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .listGather }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 2)
        try node.expectList(ins[0], "input 0")
        try node.expectIndexVector(ins[1], "input 1 (the indices)")
        guard ins[0].rank < Node.maxRank else { throw node.fail("the stacked rank would exceed \(Node.maxRank)") }
        return [TensorType([ins[1].shape[0]] + ins[0].shape, ins[0].elementType)]
    }
}

enum ListScatterDefinition: OpDefinition {
    static let kind = OpKind.listScatter
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "the list with elements `indices[i]` set to `values[i]` (slices along axis 0)"
    static let milOps = ["list_scatter"]
    static let onnxOps: [String] = []
    static let acceptsDynamicTypes = true
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .listScatter }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 3)
        try node.expectList(ins[0], "input 0")
        try node.expectIndexVector(ins[1], "input 1 (the indices)")
        let v = ins[2], element = TensorType(ins[0].shape, ins[0].elementType)
        let k = ins[1].shape[0]
        guard !v.isList, v.rank == element.rank + 1, element.joined(with: TensorType(Array(v.shape.dropFirst()), v.elementType)) != nil,
              k == TensorType.unknown || v.shape[0] == TensorType.unknown || v.shape[0] == k else {
            throw node.fail("input 2 (the values) must be [\(k == TensorType.unknown ? "?" : String(k))] + the element shape \(element), found \(v)")
        }
        return [ins[0]]
    }
}

enum ListLengthDefinition: OpDefinition {
    static let kind = OpKind.listLength
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "the number of elements of a tensor list, as int32 (1)"
    static let milOps = ["list_length"]
    static let onnxOps = ["SequenceLength"]
    static let acceptsDynamicTypes = true
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .listLength }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        try node.expectList(ins[0], "input 0")
        return [TensorType([1], .int32)]
    }
}

// MARK: - shape

enum ShapeDefinition: OpDefinition {
    static let kind = OpKind.shape
    static let neuralNetworkExportRefusal: NeuralNetworkExportRefusal? = .controlFlow
    static let summary = "the run-time shape of a tensor, as int32 (rank)"
    static let milOps = ["shape"]
    static let onnxOps = ["Shape"]
    static let acceptsDynamicTypes = true
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { [:] }
    static func decodeOp(from r: AttributeReader) throws -> Op { .shape }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        guard !ins[0].isList else { throw node.fail("input 0 is a tensor list; use listLength, or listRead and then shape") }
        return [TensorType([ins[0].rank], .int32)]
    }
}
