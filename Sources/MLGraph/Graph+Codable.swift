import Foundation

/// Where a constant's bytes live inside a container (e.g. the weight section of an `.mlbundle`).
public struct WeightLocation: Codable, Hashable, Sendable {
    /// Byte offset from the start of the container's weight section.
    public var offset: Int
    public var byteCount: Int
    public init(offset: Int, byteCount: Int) { self.offset = offset; self.byteCount = byteCount }
}

/// Receives constants while a graph is encoded and returns where their bytes were put.
/// Install one in `JSONEncoder.userInfo[.constantArchiver]`; without it, bytes are inlined (base64).
public protocol ConstantArchiver: AnyObject {
    func archive(_ tensor: ConstantTensor) throws -> WeightLocation
}

/// Provides the bytes of constants while a graph is decoded (e.g. slices of a mapped file).
/// Install one in `JSONDecoder.userInfo[.constantUnarchiver]`.
public protocol ConstantUnarchiver: AnyObject {
    /// - Throws: when the location lies outside the container.
    func storage(at location: WeightLocation) throws -> ByteStorage
}

extension CodingUserInfoKey {
    public static let constantArchiver = CodingUserInfoKey(rawValue: "mlconv.constantArchiver")!
    public static let constantUnarchiver = CodingUserInfoKey(rawValue: "mlconv.constantUnarchiver")!
}

extension ConstantTensor: Codable {
    private enum CodingKeys: String, CodingKey { case shape, encoding, location, bytes }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shape, forKey: .shape)
        try c.encode(encoding, forKey: .encoding)
        if let archiver = encoder.userInfo[.constantArchiver] as? ConstantArchiver {
            try c.encode(try archiver.archive(self), forKey: .location)
        } else {
            try c.encode(Data(UnsafeRawBufferPointer(start: storage.baseAddress, count: encodedByteCount)), forKey: .bytes)
        }
    }

    public convenience init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let shape = try c.decode([Int].self, forKey: .shape)
        let encoding = try c.decode(WeightEncoding.self, forKey: .encoding)
        let storage: ByteStorage
        if let loc = try c.decodeIfPresent(WeightLocation.self, forKey: .location) {
            guard let unarchiver = decoder.userInfo[.constantUnarchiver] as? ConstantUnarchiver else {
                throw GraphError.invalidConstant("constant refers to external weights but no weight source was given")
            }
            storage = try unarchiver.storage(at: loc)
        } else {
            let data = try c.decode(Data.self, forKey: .bytes)
            storage = data.withUnsafeBytes { ByteStorage(copying: $0) }
        }
        try self.init(shape: shape, encoding: encoding, storage: storage)
    }
}

extension Node: Codable {
    private enum CodingKeys: String, CodingKey { case name, op, inputs, outputs, weights }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), op: try c.decode(Op.self, forKey: .op),
                  inputs: try c.decode([String].self, forKey: .inputs), outputs: try c.decode([String].self, forKey: .outputs),
                  weights: try c.decodeIfPresent([String: ConstantTensor].self, forKey: .weights) ?? [:])
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(op, forKey: .op)
        try c.encode(inputs, forKey: .inputs)
        try c.encode(outputs, forKey: .outputs)
        if !weights.isEmpty {
            // Sorted keys: deterministic archive order.
            var w = c.nestedContainer(keyedBy: AnyKey.self, forKey: .weights)
            for k in weights.keys.sorted() { try w.encode(weights[k]!, forKey: AnyKey(k)) }
        }
    }
}

struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ s: String) { stringValue = s }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

extension Graph: Codable {
    private enum CodingKeys: String, CodingKey { case inputs, outputs, nodes, tensorTypes, description }
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(inputs: try c.decode([ValueInfo].self, forKey: .inputs), outputs: try c.decode([String].self, forKey: .outputs),
                  nodes: try c.decode([Node].self, forKey: .nodes),
                  tensorTypes: try c.decode([String: TensorType].self, forKey: .tensorTypes),
                  description: try c.decode(ModelDescription.self, forKey: .description))
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(inputs, forKey: .inputs)
        try c.encode(outputs, forKey: .outputs)
        try c.encode(nodes, forKey: .nodes)
        try c.encode(tensorTypes, forKey: .tensorTypes)
        try c.encode(description, forKey: .description)
    }
}
