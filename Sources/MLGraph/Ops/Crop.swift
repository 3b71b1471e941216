/// Definition of `Op.crop(crops:)`: removes `crops[axis] = [before, after]` elements on each axis.
/// MIL `crop` / `slice_by_index`, ONNX `Slice`, Core ML `crop`.
enum CropDefinition: OpDefinition {
    static let kind = OpKind.crop
    static let summary = "removes a fixed number of elements at both ends of each axis"
    static let milOps = ["crop"]
    static let onnxOps = ["Slice"]

    static func checkAttributes(of node: Node) throws {
        guard case let .crop(crops) = node.op else { return }
        try node.checkAmounts(crops, "crops")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .crop(crops) = op else { return [:] }
        return ["crops": .intPairs(crops)]
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .crop(crops: try a.intPairs("crops")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .crop(crops) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard crops.count == ins[0].rank else {  // pairs and signs: checkAttributes
            throw node.fail("crops \(crops) need one non-negative [before, after] per axis of \(formatShape(ins[0].shape))")
        }
        let out = zip(ins[0].shape, crops).map { $0 - $1[0] - $1[1] }
        guard out.allSatisfy({ $0 > 0 }) else { throw node.fail("cropping \(crops) leaves shape \(formatShape(out))") }
        return [TensorType(out, ins[0].elementType)]
    }
}
