/// A value of a custom layer parameter (Core ML `CustomLayerParams.CustomLayerParamValue`).
public enum CustomParameterValue: Codable, Hashable, Sendable {
    case double(Double), string(String), int(Int32), long(Int64), bool(Bool)
}

/// `Op.custom`: a layer implemented outside the built-in op set (Core ML `CustomLayerParams`).
/// Weights are attached to the node as "w0", "w1", … in order. The output shapes are fixed at
/// conversion time by the hook that produced the layer.
public struct CustomLayerAttributes: Codable, Hashable, Sendable {
    public var className: String
    public var description: String
    public var parameters: [String: CustomParameterValue]
    public var outputShapes: [[Int]]
    public init(className: String, description: String = "", parameters: [String: CustomParameterValue] = [:],
                outputShapes: [[Int]]) {
        self.className = className; self.description = description; self.parameters = parameters
        self.outputShapes = outputShapes
    }
}

/// Definition of `Op.custom`. Core ML `custom` (CustomLayerParams); no MIL or ONNX equivalent.
enum CustomDefinition: OpDefinition {
    static let kind = OpKind.custom
    static let summary = "custom layer implemented outside the op set (Core ML CustomLayerParams)"
    static let milOps: [String] = []

    static func checkAttributes(of node: Node) throws {
        guard case let .custom(a) = node.op else { return }
        guard a.outputShapes.count <= 1024 else { throw node.fail("\(a.outputShapes.count) output shapes (at most 1024)") }
        for s in a.outputShapes {
            if let problem = TensorType(s).shapeProblem { throw node.fail("output shape \(formatShape(s)): \(problem)") }
        }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .custom(a) = node.op else { return [] }
        let dtype = ins.first?.elementType ?? .float32
        return a.outputShapes.map { TensorType($0, dtype) }
    }
}
