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

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .custom(a) = op else { return [:] }
        return ["className": .string(a.className), "description": .string(a.description),
                "parameters": .object(a.parameters.mapValues(\.attributeValue)), "outputShapes": .intPairs(a.outputShapes)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op {
        let p = try a.object("parameters")
        var parameters: [String: CustomParameterValue] = [:]
        for key in p.values.keys { parameters[key] = try CustomParameterValue(attribute: key, of: p) }
        return .custom(CustomLayerAttributes(className: try a.string("className"), description: try a.string("description"),
                                             parameters: parameters, outputShapes: try a.intPairs("outputShapes")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .custom(a) = node.op else { return [] }
        let dtype = ins.first?.elementType ?? .float32
        return a.outputShapes.map { TensorType($0, dtype) }
    }
}

extension CustomParameterValue {
    /// Encoding: {"double": x} / {"string": s} / {"int": i} / {"long": i} / {"bool": b}, keeping
    /// Core ML's CustomLayerParamValue type.
    var attributeValue: AttributeValue {
        switch self {
        case let .double(v): return .object(["double": v.isFinite ? .float(Float(v)) : .number(Float(v)), "bits": .string(String(v.bitPattern, radix: 16))])
        case let .string(v): return .object(["string": .string(v)])
        case let .int(v): return .object(["int": .int(Int(v))])
        case let .long(v): return .object(["long": .int(Int(v))])
        case let .bool(v): return .object(["bool": .bool(v)])
        }
    }

    init(attribute name: String, of a: AttributeReader) throws {
        let o = try a.object(name)
        if o.has("double") {
            // The exact double travels as its bit pattern; the number is for readers of the JSON.
            guard let bits = UInt64(try o.string("bits"), radix: 16) else {
                throw o.mismatch("bits", expected: "a hexadecimal bit pattern", found: o.values["bits"])
            }
            self = .double(Double(bitPattern: bits))
        } else if o.has("string") { self = .string(try o.string("string"))
        } else if o.has("int") {
            let v = try o.int("int")
            guard let i = Int32(exactly: v) else { throw o.mismatch("int", expected: "a 32-bit integer", found: .int(v)) }
            self = .int(i)
        } else if o.has("long") { self = .long(Int64(try o.int("long")))
        } else if o.has("bool") { self = .bool(try o.bool("bool"))
        } else { throw a.mismatch(name, expected: "one of double, string, int, long, bool", found: .object(o.values)) }
    }
}
