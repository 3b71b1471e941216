// Convolution and pooling over 1 or 3 spatial axes (issue 9): conv1d (NWC), conv3d (NDHWC),
// pool1d, pool3d. MIL `conv`, `max_pool`, `avg_pool` are rank-generic (ops/defs/iOS15/conv.py,
// pool.py); the IR keeps channels last, as conv2d / pool2d do, and one attribute struct per family
// serves every spatial rank (the arrays have one entry per spatial axis).

/// Padding of an N-D window op (conv1d, conv3d, pool1d, pool3d), one rule per spatial axis.
public enum SpatialPadding: Codable, Hashable, Sendable {
    /// No padding (Keras `padding='valid'`).
    case valid
    /// TensorFlow/Keras `padding='same'`: output = ceil(input/stride); total padding
    /// max((out−1)·stride + effectiveKernel − input, 0), the odd element going to the end (as
    /// `PaddingMode.same`, Core ML BOTTOM_RIGHT_HEAVY).
    case same
    /// Explicit amounts: `before[i]` elements before and `after[i]` after spatial axis i (ONNX
    /// `pads` split in its begin and end halves).
    case explicit(before: [Int], after: [Int])

    /// The (before, after) amounts per spatial axis for spatial input sizes `input` (one entry per
    /// spatial axis in `kernel`, `strides` and `dilations`).
    public func resolve(input: [Int], kernel: [Int], strides: [Int], dilations: [Int]) -> [(before: Int, after: Int)] {
        switch self {
        case .valid: return input.map { _ in (0, 0) }
        case let .explicit(b, a): return Array(zip(b, a)).map { ($0.0, $0.1) }
        case .same:
            return input.indices.map { i in
                let ek = (kernel[i] - 1) * dilations[i] + 1
                let out = (input[i] + strides[i] - 1) / strides[i]
                let total = Swift.max((out - 1) * strides[i] + ek - input[i], 0)
                return (total / 2, total - total / 2)
            }
        }
    }

    /// Encoding: "valid", "same", or the flat list before… + after… (ONNX `pads` order).
    var attributeValue: AttributeValue {
        switch self {
        case .valid: return .string("valid")
        case .same: return .string("same")
        case let .explicit(b, a): return .ints(b + a)
        }
    }

    init(attribute name: String, of a: AttributeReader, rank: Int) throws {
        let expected = "\"valid\", \"same\" or \(2 * rank) integers (before…, after…)"
        switch a.values[name] {
        case .string("valid")?: self = .valid
        case .string("same")?: self = .same
        case .list?:
            let v = try a.ints(name)
            guard v.count == 2 * rank else { throw a.mismatch(name, expected: expected, found: .ints(v)) }
            self = .explicit(before: Array(v[..<rank]), after: Array(v[rank...]))
        case let v: throw a.mismatch(name, expected: expected, found: v)
        }
    }
}

/// `Op.conv1d` / `Op.conv3d`: convolution over the spatial axes of a channels-last input
/// x [N, spatial…, Cin] (conv1d: [N, W, Cin], NWC; conv3d: [N, D, H, W, Cin], NDHWC).
/// Weights: "weight" [Cout, Cin/groups, k…] (Core ML / MIL / ONNX layout: conv1d [Cout, Cin/g, kW],
/// conv3d [Cout, Cin/g, kD, kH, kW]), optional "bias" [Cout]. Output [N, out…, Cout].
/// `kernel`, `strides`, `dilations` have one entry per spatial axis (as `Conv2DAttributes`).
public struct ConvNDAttributes: Codable, Hashable, Sendable {
    public var kernel: [Int]
    public var strides: [Int]
    public var dilations: [Int]
    public var padding: SpatialPadding
    public var groups: Int
    public var outputChannels: Int
    public var activation: Activation?

    /// `strides` and `dilations` default to 1 on every axis of `kernel`.
    public init(kernel: [Int], strides: [Int]? = nil, dilations: [Int]? = nil, padding: SpatialPadding,
                groups: Int = 1, outputChannels: Int, activation: Activation? = nil) {
        self.kernel = kernel; self.strides = strides ?? kernel.map { _ in 1 }; self.dilations = dilations ?? kernel.map { _ in 1 }
        self.padding = padding; self.groups = groups; self.outputChannels = outputChannels; self.activation = activation
    }
}

/// `Op.pool1d` / `Op.pool3d`: max or average pooling over the spatial axes of [N, spatial…, C]
/// → [N, out…, C]. Average pooling excludes padded elements (as `Op.pool2d`).
public struct PoolNDAttributes: Codable, Hashable, Sendable {
    public var kind: PoolKind
    public var kernel: [Int]
    public var strides: [Int]
    public var padding: SpatialPadding
    public init(kind: PoolKind, kernel: [Int], strides: [Int], padding: SpatialPadding) {
        self.kind = kind; self.kernel = kernel; self.strides = strides; self.padding = padding
    }
}

extension Node {
    /// Spatial output sizes of an N-D window op; every array has one entry per spatial axis
    /// (checked by `checkWindowND` before).
    /// - Throws: when an output axis would be empty.
    func windowOutputND(_ input: [Int], _ k: [Int], _ s: [Int], _ d: [Int], _ p: SpatialPadding) throws -> [Int] {
        let pads = p.resolve(input: input, kernel: k, strides: s, dilations: d)
        var out: [Int] = []
        for i in input.indices {
            let o: Int
            if case .same = p {
                o = (input[i] + s[i] - 1) / s[i]
            } else {
                // Each term ≤ 2^40 (attributes ≤ 2^20, sizes ≤ the element-count limit): no overflow.
                let ek = (k[i] - 1) * d[i] + 1
                let span = input[i] + pads[i].before + pads[i].after - ek
                o = span < 0 ? 0 : span / s[i] + 1
            }
            guard o > 0 else {
                throw fail("window \(k) stride \(s) dilation \(d) on \(formatShape(input)) with \(p) padding gives an empty output")
            }
            out.append(o)
        }
        return out
    }

    /// Checks kernel, strides, dilations (nil for pooling) and padding of an op with `rank`
    /// spatial axes.
    func checkWindowND(rank: Int, kernel: [Int], strides: [Int], dilations: [Int]?, padding: SpatialPadding) throws {
        try checkWindow(kernel, count: rank, "kernel"); try checkWindow(strides, count: rank, "strides")
        if let dilations { try checkWindow(dilations, count: rank, "dilations") }
        if case let .explicit(b, a) = padding {
            try checkWindow(b, count: rank, "padding before", min: 0); try checkWindow(a, count: rank, "padding after", min: 0)
        }
    }
}

/// Shared rules of conv1d and conv3d (`rank` spatial axes).
enum ConvND {
    static func attributes(_ op: Op) -> ConvNDAttributes? {
        switch op {
        case let .conv1d(a), let .conv3d(a): return a
        default: return nil
        }
    }

    static func check(_ node: Node, rank: Int) throws {
        guard let a = attributes(node.op) else { return }
        try node.checkWindowND(rank: rank, kernel: a.kernel, strides: a.strides, dilations: a.dilations, padding: a.padding)
        try node.checkCount(a.outputChannels, "outputChannels"); try node.checkCount(a.groups, "groups")
    }

    static func infer(_ node: Node, _ ins: [TensorType], rank: Int, layout: String) throws -> [TensorType] {
        guard let a = attributes(node.op) else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], rank + 2, "\(layout) input")
        let s = ins[0].shape, cin = s[rank + 1]
        guard cin % a.groups == 0, a.outputChannels % a.groups == 0 else {
            throw node.fail("groups \(a.groups) must divide input channels \(cin) and output channels \(a.outputChannels)")
        }
        try node.expectWeight("weight", shape: [a.outputChannels, cin / a.groups] + a.kernel)
        try node.expectWeight("bias", shape: [a.outputChannels], optional: true)
        let out = try node.windowOutputND(Array(s[1...rank]), a.kernel, a.strides, a.dilations, a.padding)
        return [TensorType([s[0]] + out + [a.outputChannels], ins[0].elementType)]
    }

    static func encode(_ op: Op) -> [String: AttributeValue] {
        guard let a = attributes(op) else { return [:] }
        return ["kernel": .ints(a.kernel), "strides": .ints(a.strides), "dilations": .ints(a.dilations),
                "padding": a.padding.attributeValue, "groups": .int(a.groups), "outputChannels": .int(a.outputChannels),
                "activation": a.activation.attributeValue]
    }

    static func decode(_ a: AttributeReader, rank: Int) throws -> ConvNDAttributes {
        ConvNDAttributes(kernel: try a.ints("kernel"), strides: try a.ints("strides"), dilations: try a.ints("dilations"),
                         padding: try SpatialPadding(attribute: "padding", of: a, rank: rank), groups: try a.int("groups"),
                         outputChannels: try a.int("outputChannels"), activation: try Activation(optionalAttribute: "activation", of: a))
    }
}

/// Shared rules of pool1d and pool3d (`rank` spatial axes).
enum PoolND {
    static func attributes(_ op: Op) -> PoolNDAttributes? {
        switch op {
        case let .pool1d(a), let .pool3d(a): return a
        default: return nil
        }
    }

    static func check(_ node: Node, rank: Int) throws {
        guard let a = attributes(node.op) else { return }
        try node.checkWindowND(rank: rank, kernel: a.kernel, strides: a.strides, dilations: nil, padding: a.padding)
    }

    static func infer(_ node: Node, _ ins: [TensorType], rank: Int, layout: String) throws -> [TensorType] {
        guard let a = attributes(node.op) else { return [] }
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], rank + 2, "\(layout) input")
        let s = ins[0].shape
        let out = try node.windowOutputND(Array(s[1...rank]), a.kernel, a.strides, a.kernel.map { _ in 1 }, a.padding)
        return [TensorType([s[0]] + out + [s[rank + 1]], ins[0].elementType)]
    }

    static func encode(_ op: Op) -> [String: AttributeValue] {
        guard let a = attributes(op) else { return [:] }
        return ["kind": .string(a.kind.rawValue), "kernel": .ints(a.kernel), "strides": .ints(a.strides), "padding": a.padding.attributeValue]
    }

    static func decode(_ a: AttributeReader, rank: Int) throws -> PoolNDAttributes {
        PoolNDAttributes(kind: try a.enumeration("kind", PoolKind.self), kernel: try a.ints("kernel"),
                         strides: try a.ints("strides"), padding: try SpatialPadding(attribute: "padding", of: a, rank: rank))
    }
}

/// Definition of `Op.conv1d`: 1-D convolution, NWC. MIL `conv` (rank-3 input), ONNX `Conv`
/// (1 spatial axis), Core ML `convolution` on a width-1 image.
enum Conv1DDefinition: OpDefinition {
    static let kind = OpKind.conv1d
    static let summary = "1-D convolution (groups, dilation, fused activation), NWC"
    static let milOps = ["conv"]
    static let onnxOps = ["Conv"]
    static func checkAttributes(of node: Node) throws { try ConvND.check(node, rank: 1) }
    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try ConvND.infer(node, ins, rank: 1, layout: "NWC")
    }
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { ConvND.encode(op) }
    static func decodeOp(from a: AttributeReader) throws -> Op { .conv1d(try ConvND.decode(a, rank: 1)) }
    static var weightRoles: [WeightRole] { [WeightRole("weight"), WeightRole("bias")] }
}

/// Definition of `Op.conv3d`: 3-D convolution, NDHWC. MIL `conv` (rank-5 input), ONNX `Conv`
/// (3 spatial axes), Core ML `convolution3d` (not written by the exporter).
enum Conv3DDefinition: OpDefinition {
    static let kind = OpKind.conv3d
    static let summary = "3-D convolution (groups, dilation, fused activation), NDHWC"
    static let milOps = ["conv"]
    static let onnxOps = ["Conv"]
    static func checkAttributes(of node: Node) throws { try ConvND.check(node, rank: 3) }
    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try ConvND.infer(node, ins, rank: 3, layout: "NDHWC")
    }
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { ConvND.encode(op) }
    static func decodeOp(from a: AttributeReader) throws -> Op { .conv3d(try ConvND.decode(a, rank: 3)) }
    static var weightRoles: [WeightRole] { [WeightRole("weight"), WeightRole("bias")] }
}

/// Definition of `Op.pool1d`. MIL `max_pool` / `avg_pool` (rank-3 input, exclude_padding_from_average),
/// ONNX `MaxPool` / `AveragePool`, Core ML `pooling` on a width-1 image.
enum Pool1DDefinition: OpDefinition {
    static let kind = OpKind.pool1d
    static let summary = "1-D max or average pooling (average excludes padding), NWC"
    static let milOps = ["max_pool", "avg_pool"]
    static let onnxOps = ["MaxPool", "AveragePool"]
    static func checkAttributes(of node: Node) throws { try PoolND.check(node, rank: 1) }
    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try PoolND.infer(node, ins, rank: 1, layout: "NWC")
    }
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { PoolND.encode(op) }
    static func decodeOp(from a: AttributeReader) throws -> Op { .pool1d(try PoolND.decode(a, rank: 1)) }
}

/// Definition of `Op.pool3d`. MIL `max_pool` / `avg_pool` (rank-5 input), ONNX `MaxPool` /
/// `AveragePool`, Core ML `pooling3d` (not written by the exporter).
enum Pool3DDefinition: OpDefinition {
    static let kind = OpKind.pool3d
    static let summary = "3-D max or average pooling (average excludes padding), NDHWC"
    static let milOps = ["max_pool", "avg_pool"]
    static let onnxOps = ["MaxPool", "AveragePool"]
    static func checkAttributes(of node: Node) throws { try PoolND.check(node, rank: 3) }
    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try PoolND.infer(node, ins, rank: 3, layout: "NDHWC")
    }
    static func encodeAttributes(of op: Op) -> [String: AttributeValue] { PoolND.encode(op) }
    static func decodeOp(from a: AttributeReader) throws -> Op { .pool3d(try PoolND.decode(a, rank: 3)) }
}

/// `Op.deconv3d` (transposed 3-D convolution, Keras `Conv3DTranspose`): x [N, D, H, W, Cin] →
/// [N, D', H', W', Cout]. Weights: "weight" [Cin, Cout/groups, kD, kH, kW] (the deconv2d layout
/// with one more spatial axis; MIL `conv_transpose` / ONNX `ConvTranspose` weight), optional
/// "bias" [Cout]. Per spatial axis, the full output is (in−1)·stride + (k−1)·dilation + 1 +
/// outputPadding; `.valid` keeps it; `.same` gives in·stride + outputPadding, cropping
/// max(full − that, 0)/2 at the start (TF `conv3d_transpose`); `.explicit(before, after)` crops
/// the given amounts from the full output (as `Op.deconv2d`).
public struct DeconvNDAttributes: Codable, Hashable, Sendable {
    public var kernel: [Int]
    public var strides: [Int]
    public var dilations: [Int]
    public var padding: SpatialPadding
    /// One entry per spatial axis, 0 unless Keras `output_padding` is set.
    public var outputPadding: [Int]
    public var groups: Int
    public var outputChannels: Int
    public var activation: Activation?

    /// `strides`, `dilations` default to 1 and `outputPadding` to 0 on every axis of `kernel`.
    public init(kernel: [Int], strides: [Int]? = nil, dilations: [Int]? = nil, padding: SpatialPadding,
                outputPadding: [Int]? = nil, groups: Int = 1, outputChannels: Int, activation: Activation? = nil) {
        self.kernel = kernel; self.strides = strides ?? kernel.map { _ in 1 }; self.dilations = dilations ?? kernel.map { _ in 1 }
        self.padding = padding; self.outputPadding = outputPadding ?? kernel.map { _ in 0 }
        self.groups = groups; self.outputChannels = outputChannels; self.activation = activation
    }

    /// The full (uncropped) output size on spatial axis `axis` for input size `input`.
    public func fullSize(_ input: Int, axis i: Int) -> Int {
        (input - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 + outputPadding[i]
    }

    /// The output size on spatial axis `axis` for input size `input`.
    public func outputSize(_ input: Int, axis i: Int) -> Int {
        switch padding {
        case .valid: return fullSize(input, axis: i)
        case .same: return input * strides[i] + outputPadding[i]
        case let .explicit(b, a): return fullSize(input, axis: i) - b[i] - a[i]
        }
    }

    /// Where the output starts in the full output on spatial axis `axis`.
    public func cropOrigin(_ input: Int, axis i: Int) -> Int {
        switch padding {
        case .valid: return 0
        case .same: return Swift.max(fullSize(input, axis: i) - outputSize(input, axis: i), 0) / 2
        case let .explicit(b, _): return b[i]
        }
    }
}

/// The rules of the transposed N-D convolutions (`deconv1d`, `deconv3d`; `deconv2d` keeps its
/// own `Deconv2DAttributes`) on `rank` spatial axes, channels last.
enum DeconvNDRules {
    static func check(_ node: Node, _ a: DeconvNDAttributes, rank: Int) throws {
        try node.checkWindowND(rank: rank, kernel: a.kernel, strides: a.strides, dilations: a.dilations, padding: a.padding)
        try node.checkWindow(a.outputPadding, count: rank, "outputPadding", min: 0)
        try node.checkCount(a.outputChannels, "outputChannels"); try node.checkCount(a.groups, "groups")
    }

    static func infer(_ node: Node, _ a: DeconvNDAttributes, _ ins: [TensorType], rank: Int, layout: String) throws -> [TensorType] {
        try node.expectInputs(ins, 1); try node.expectRank(ins[0], rank + 2, "\(layout) input")
        let s = ins[0].shape, cin = s[rank + 1]
        guard cin % a.groups == 0, a.outputChannels % a.groups == 0 else {
            throw node.fail("groups \(a.groups) must divide input channels \(cin) and output channels \(a.outputChannels)")
        }
        try node.expectWeight("weight", shape: [cin, a.outputChannels / a.groups] + a.kernel)
        try node.expectWeight("bias", shape: [a.outputChannels], optional: true)
        // Sizes ≤ the element-count limit and attributes ≤ 2^20: each product fits in 64 bits.
        let out = (0..<rank).map { a.outputSize(s[1 + $0], axis: $0) }
        guard out.allSatisfy({ $0 > 0 && $0 <= TensorType.maxElementCount }) else { throw node.fail("output size \(out) is not positive") }
        return [TensorType([s[0]] + out + [a.outputChannels], ins[0].elementType)]
    }

    static func encode(_ a: DeconvNDAttributes) -> [String: AttributeValue] {
        ["kernel": .ints(a.kernel), "strides": .ints(a.strides), "dilations": .ints(a.dilations),
         "padding": a.padding.attributeValue, "outputPadding": .ints(a.outputPadding), "groups": .int(a.groups),
         "outputChannels": .int(a.outputChannels), "activation": a.activation.attributeValue]
    }

    static func decode(_ a: AttributeReader, rank: Int) throws -> DeconvNDAttributes {
        DeconvNDAttributes(kernel: try a.ints("kernel"), strides: try a.ints("strides"), dilations: try a.ints("dilations"),
                           padding: try SpatialPadding(attribute: "padding", of: a, rank: rank),
                           outputPadding: try a.ints("outputPadding"), groups: try a.int("groups"),
                           outputChannels: try a.int("outputChannels"), activation: try Activation(optionalAttribute: "activation", of: a))
    }

    /// Weights [Cin, Cout/groups, k…]: output channels on axis 1 (as deconv2d).
    static let weightRoles = [WeightRole("weight", quantizationAxis: 1), WeightRole("bias")]
}

/// Definition of `Op.deconv3d`: transposed 3-D convolution, NDHWC. MIL `conv_transpose`
/// (rank-5 input), ONNX `ConvTranspose`, Core ML: none in the classic layers.
enum Deconv3DDefinition: OpDefinition {
    static let kind = OpKind.deconv3d
    static let summary = "transposed 3-D convolution (output padding, groups, fused activation), NDHWC"
    static let milOps = ["conv_transpose"]
    static let onnxOps = ["ConvTranspose"]

    static func checkAttributes(of node: Node) throws {
        guard case let .deconv3d(a) = node.op else { return }
        try DeconvNDRules.check(node, a, rank: 3)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .deconv3d(a) = node.op else { return [] }
        return try DeconvNDRules.infer(node, a, ins, rank: 3, layout: "NDHWC")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .deconv3d(a) = op else { return [:] }
        return DeconvNDRules.encode(a)
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .deconv3d(try DeconvNDRules.decode(a, rank: 3)) }

    static var weightRoles: [WeightRole] { DeconvNDRules.weightRoles }
}

/// Definition of `Op.deconv1d`: transposed 1-D convolution, NWC. MIL `conv_transpose` (rank-3
/// input), ONNX `ConvTranspose`, Keras `Conv1DTranspose`; Core ML: a k×1 deconvolution.
enum Deconv1DDefinition: OpDefinition {
    static let kind = OpKind.deconv1d
    static let summary = "transposed 1-D convolution (output padding, groups, fused activation), NWC"
    static let milOps = ["conv_transpose"]
    static let onnxOps = ["ConvTranspose"]

    static func checkAttributes(of node: Node) throws {
        guard case let .deconv1d(a) = node.op else { return }
        try DeconvNDRules.check(node, a, rank: 1)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .deconv1d(a) = node.op else { return [] }
        return try DeconvNDRules.infer(node, a, ins, rank: 1, layout: "NWC")
    }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .deconv1d(a) = op else { return [:] }
        return DeconvNDRules.encode(a)
    }

    static func decodeOp(from a: AttributeReader) throws -> Op { .deconv1d(try DeconvNDRules.decode(a, rank: 1)) }

    static var weightRoles: [WeightRole] { DeconvNDRules.weightRoles }
}

extension SpatialPadding {
    /// The same padding as the 2-D ops' `PaddingMode` (explicit amounts: axis 0 = H, axis 1 = W).
    /// - Precondition: for `.explicit`, two spatial axes (callers check the rank first).
    public var paddingMode2D: PaddingMode {
        switch self {
        case .valid: return .valid
        case .same: return .same
        case let .explicit(before, after): return .explicit(top: before[0], bottom: after[0], left: before[1], right: after[1])
        }
    }
}
