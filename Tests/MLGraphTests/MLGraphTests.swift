import Foundation
import XCTest
@testable import MLGraph

final class ConstantTensorTests: XCTestCase {
    /// Regression: ByteStorage used to keep the pointer from `withUnsafeBytes { $0 }` after the
    /// closure returned, which crashed (memcpy on a dead buffer) in optimized builds.
    func testFloatConstantCopiesItsValues() {
        var values: [Float] = (0..<1000).map { Float($0) * 0.5 - 3 }
        let t = ConstantTensor(shape: [10, 100], floats: values)
        values[0] = 99  // the constant owns its copy
        XCTAssertEqual(t.floats()[0], -3)
        XCTAssertEqual(t.floats()[999], 496.5)
        XCTAssertEqual(Int(bitPattern: t.storage.baseAddress) % 64, 0, "allocations are 64-byte aligned")
    }

    func testPackingIsMSBFirst() {
        // 4-bit: byte0 = q0<<4 | q1 (coreml-format-facts §2.8).
        XCTAssertEqual(packMSBFirst([0x1, 0x2, 0xF], bits: 4), [0x12, 0xF0])
        // 2-bit: q0 in bits 7–6.
        XCTAssertEqual(packMSBFirst([3, 0, 1, 2, 1], bits: 2), [0b1100_0110, 0b0100_0000])
        // 3-bit codes straddle bytes: 101 011 111 001 → 10101111 1001(0000)
        XCTAssertEqual(packMSBFirst([5, 3, 7, 1], bits: 3), [0b1010_1111, 0b1001_0000])
        for bits in 1...8 {
            let codes = (0..<37).map { UInt8(($0 * 7 + 3) % (1 << bits)) }
            let packed = packMSBFirst(codes, bits: bits)
            XCTAssertEqual(packed.count, max(1, (37 * bits + 7) / 8))
            XCTAssertEqual(packed.withUnsafeBytes { unpackMSBFirst($0, bits: bits, count: 37) }, codes, "bits \(bits)")
        }
    }

    func testDequantizeLinearPerChannelAndLUT() throws {
        let codes: [UInt8] = [0, 1, 2, 3, 3, 2, 1, 0]
        let q = LinearQuantization(bits: 2, axis: 0, scale: [0.5, 2], bias: [-1, 10])
        let lin = try ConstantTensor(shape: [2, 4], encoding: .linear(q), storage: .copying(packMSBFirst(codes, bits: 2)))
        XCTAssertEqual(lin.floats(), [-1, -0.5, 0, 0.5, 16, 14, 12, 10])
        let lut = try ConstantTensor(shape: [8], encoding: .lookupTable(LookupTableQuantization(bits: 2, table: [-2, -1, 1, 2])),
                                     storage: .copying(packMSBFirst(codes, bits: 2)))
        XCTAssertEqual(lut.floats(), [-2, -1, 1, 2, 2, 1, -1, -2])
        let half = try ConstantTensor(shape: [2], encoding: .float16,
                                      storage: .copying([0x00, 0x3C, 0x00, 0xC0]))  // 1.0, -2.0
        XCTAssertEqual(half.floats(), [1, -2])
    }

    func testShortStorageIsAnError() {
        XCTAssertThrowsError(try ConstantTensor(shape: [4], encoding: .float32, storage: .copying([1, 2, 3]))) { e in
            XCTAssertTrue("\(e)".contains("needs 16 bytes, found 3"), "\(e)")
        }
    }
}

final class ShapeInferenceTests: XCTestCase {
    private func conv(_ name: String, _ input: String, cin: Int, cout: Int, k: Int, stride: Int, padding: PaddingMode) -> Node {
        Node(name: name, op: .conv2d(Conv2DAttributes(kernel: [k, k], strides: [stride, stride], padding: padding, outputChannels: cout)),
             inputs: [input], outputs: [name],
             weights: ["weight": ConstantTensor(shape: [cout, cin, k, k], floats: Array(repeating: 0, count: cout * cin * k * k))])
    }

    func testSamePaddingMatchesTensorFlow() {
        // TF: out = ceil(in/stride); total pad = max((out-1)*s + k - in, 0), extra at bottom/right.
        let p = PaddingMode.same.resolve(inH: 10, inW: 11, kernel: (3, 4), stride: (2, 2), dilation: (1, 1))
        XCTAssertEqual(p.top, 0); XCTAssertEqual(p.bottom, 1)   // out 5: total 4·2+3−10 = 1
        XCTAssertEqual(p.left, 1); XCTAssertEqual(p.right, 2)   // out 6: total 5·2+4−11 = 3
        let d = PaddingMode.same.resolve(inH: 7, inW: 7, kernel: (3, 3), stride: (1, 1), dilation: (2, 2))
        XCTAssertEqual(d.top, 2); XCTAssertEqual(d.bottom, 2)   // effective kernel 5
    }

    func testChainInfersShapes() throws {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 11, 10, 3]))], outputs: ["flat"], nodes: [
            conv("c1", "x", cin: 3, cout: 8, k: 3, stride: 2, padding: .same),
            conv("c2", "c1", cin: 8, cout: 4, k: 3, stride: 1, padding: .valid),
            Node(name: "p", op: .pool2d(Pool2DAttributes(kind: .max, kernel: [2, 2], strides: [2, 2], padding: .valid)),
                 inputs: ["c2"], outputs: ["p"]),
            Node(name: "flat", op: .reshape(targetShape: [-1]), inputs: ["p"], outputs: ["flat"]),
        ])
        try g.inferShapes()
        XCTAssertEqual(g.tensorTypes["c1"]?.shape, [1, 6, 5, 8])
        XCTAssertEqual(g.tensorTypes["c2"]?.shape, [1, 4, 3, 4])
        XCTAssertEqual(g.tensorTypes["p"]?.shape, [1, 2, 1, 4])
        XCTAssertEqual(g.tensorTypes["flat"]?.shape, [1, 8])
        try g.verify()
    }

    func testVerifierNamesTheBadNode() {
        let bad = conv("c1", "x", cin: 4, cout: 8, k: 3, stride: 1, padding: .same)  // input has 3 channels
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 5, 3]))], outputs: ["c1"], nodes: [bad])
        XCTAssertThrowsError(try g.inferShapes()) { e in
            XCTAssertEqual("\(e)", "node 'c1' (conv2d): weight 'weight' should have shape (8, 3, 3, 3), found (8, 4, 3, 3)")
        }
        g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 5, 3]))], outputs: ["y"],
                  nodes: [Node(name: "a", op: .activation(.relu), inputs: ["nope"], outputs: ["y"])])
        XCTAssertThrowsError(try g.verify()) { e in
            XCTAssertTrue("\(e)".contains("reads tensor 'nope'"), "\(e)")
        }
        g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4]))], outputs: ["y"],
                  nodes: [Node(name: "a", op: .activation(.relu), inputs: ["x"], outputs: ["y"]),
                          Node(name: "a", op: .activation(.relu), inputs: ["x"], outputs: ["z"])])
        XCTAssertThrowsError(try g.verify()) { e in XCTAssertEqual("\(e)", "invalid graph (structure check): two nodes are named 'a'") }
    }

    func testBroadcastAndDeconvSizes() {
        XCTAssertEqual(broadcastShapes([1, 4, 1, 3], [5, 1]), [1, 4, 5, 3])
        XCTAssertNil(broadcastShapes([2, 3], [4, 3]))
        let a = Deconv2DAttributes(kernel: [3, 3], strides: [2, 2], padding: .valid, outputChannels: 2)
        XCTAssertEqual(deconvOutputSize(5, axis: 0, a), 11)  // (5-1)*2 + 3
        var s = a; s.padding = .same
        XCTAssertEqual(deconvOutputSize(5, axis: 0, s), 10)
    }
}

final class GraphCodableTests: XCTestCase {
    func testJSONRoundTripInlinesWeights() throws {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3]))], outputs: ["y"], nodes: [
            Node(name: "d", op: .dense(DenseAttributes(outputChannels: 2, activation: .hardSigmoid(alpha: 0.2, beta: 0.5))),
                 inputs: ["x"], outputs: ["y"],
                 weights: ["weight": ConstantTensor(shape: [2, 3], floats: [1, 2, 3, 4, 5, 6]),
                           "bias": ConstantTensor(shape: [2], floats: [0.5, -0.5])]),
        ])
        try g.inferShapes()
        g.description.metadata.author = "test"
        let data = try JSONEncoder().encode(g)
        let back = try JSONDecoder().decode(Graph.self, from: data)
        XCTAssertEqual(back.nodes, g.nodes)
        XCTAssertEqual(back.tensorTypes, g.tensorTypes)
        XCTAssertEqual(back.description, g.description)
        XCTAssertEqual(back.nodes[0].weights["bias"]?.floats(), [0.5, -0.5])
    }
}

final class MalformedGraphTests: XCTestCase {
    /// Regression: malformed attributes (short arrays, zero sizes) used to trap in shape
    /// inference by indexing or dividing; they must throw instead.
    func testMalformedAttributesThrow() {
        let x = ValueInfo(name: "x", type: TensorType([1, 4, 4, 2]))
        let bad: [Op] = [
            .conv2d(Conv2DAttributes(kernel: [3], padding: .same, outputChannels: 2)),
            .pool2d(Pool2DAttributes(kind: .max, kernel: [2, 2], strides: [0, 2], padding: .valid)),
            .upsample2d(Upsample2DAttributes(scale: [2], mode: .nearest)),
            .reshape(targetShape: []),
            .reshape(targetShape: [-1, -1]),
            .deconv2d(Deconv2DAttributes(kernel: [2, 2], strides: [2, 2], padding: .valid, outputPadding: [0], outputChannels: 2)),
            .repeatVector(n: 0),
        ]
        for op in bad {
            let g = Graph(inputs: [x], outputs: ["y"], nodes: [Node(name: "n", op: op, inputs: ["x"], outputs: ["y"])])
            XCTAssertThrowsError(try g.verify(), "\(op)")
        }
        let zero = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 0, 3]))], outputs: ["x"], nodes: [])
        XCTAssertThrowsError(try zero.verify()) { e in XCTAssertTrue("\(e)".contains("dimension 0 is not positive"), "\(e)") }
        let huge = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 1 << 30, 1 << 30, 1 << 30]))], outputs: ["x"], nodes: [])
        XCTAssertThrowsError(try huge.verify())
    }
}

final class GraphSummaryTests: XCTestCase {
    /// Regression: a constant shared by two nodes (a Keras layer called twice) was counted twice.
    func testSharedConstantsCountOnce() {
        let w = ConstantTensor(shape: [2, 3], floats: [1, 2, 3, 4, 5, 6])
        let g = Graph(inputs: [ValueInfo(name: "a", type: TensorType([1, 3])), ValueInfo(name: "b", type: TensorType([1, 3]))],
                      outputs: ["d", "d_1"], nodes: [
                          Node(name: "d", op: .dense(DenseAttributes(outputChannels: 2)), inputs: ["a"], outputs: ["d"], weights: ["weight": w]),
                          Node(name: "d_1", op: .dense(DenseAttributes(outputChannels: 2)), inputs: ["b"], outputs: ["d_1"], weights: ["weight": w]),
                      ])
        XCTAssertEqual(g.parameterCount, 6)
        XCTAssertEqual(g.opCounts, ["dense": 2])
    }
}

final class RenameTests: XCTestCase {
    func testRenameInputAndOutput() throws {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3]))], outputs: ["y"],
                      nodes: [Node(name: "a", op: .activation(.relu), inputs: ["x"], outputs: ["y"])])
        try g.inferShapes()
        g.description.outputs = [FeatureDescription(name: "y", shortDescription: "out")]
        try g.renameTensor("x", to: "image")
        try g.renameTensor("y", to: "probs")
        XCTAssertEqual(g.inputs.map(\.name), ["image"])
        XCTAssertEqual(g.outputs, ["probs"])
        XCTAssertEqual(g.nodes[0].inputs, ["image"])
        XCTAssertEqual(g.description.outputs[0].name, "probs")
        try g.verify()
        XCTAssertThrowsError(try g.renameTensor("nope", to: "z"))
        XCTAssertThrowsError(try g.renameTensor("image", to: "probs")) { e in
            XCTAssertTrue("\(e)".contains("already exists"), "\(e)")
        }
    }
}

final class FusionTests: XCTestCase {
    private func graph(convPadding: PaddingMode, padIsOutput: Bool = false) -> Graph {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 4, 4, 2]))], outputs: padIsOutput ? ["c", "p"] : ["c"], nodes: [
            Node(name: "p", op: .pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 2], [3, 0], [0, 0]])), inputs: ["x"], outputs: ["p"]),
            Node(name: "c", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: convPadding, outputChannels: 1)), inputs: ["p"], outputs: ["c"],
                 weights: ["weight": ConstantTensor(shape: [1, 2, 3, 3], floats: Array(repeating: 1, count: 18))]),
        ])
        try! g.inferShapes()
        return g
    }

    func testZeroPadFoldsIntoValidAndExplicitConvolution() throws {
        let f = graph(convPadding: .valid).fusingZeroPaddingIntoConvolutions()
        XCTAssertEqual(f.nodes.map(\.name), ["c"])
        XCTAssertEqual(f.nodes[0].inputs, ["x"])
        XCTAssertEqual(f.nodes[0].op, .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .explicit(top: 1, bottom: 2, left: 3, right: 0), outputChannels: 1)))
        try f.verify()
        XCTAssertEqual(f.tensorTypes["c"]?.shape, graph(convPadding: .valid).tensorTypes["c"]?.shape)
        let e = graph(convPadding: .explicit(top: 1, bottom: 0, left: 0, right: 1)).fusingZeroPaddingIntoConvolutions()
        XCTAssertEqual(e.nodes[0].op, .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .explicit(top: 2, bottom: 2, left: 3, right: 1), outputChannels: 1)))
    }

    func testPadIsKeptWhenNotFusable() {
        XCTAssertEqual(graph(convPadding: .same).fusingZeroPaddingIntoConvolutions().nodes.count, 2)
        XCTAssertEqual(graph(convPadding: .valid, padIsOutput: true).fusingZeroPaddingIntoConvolutions().nodes.count, 2)
    }
}

final class ActivationTests: XCTestCase {
    /// Regression: relu(NaN) returned 0; TensorFlow (and so Keras) returns NaN.
    func testReluPropagatesNaN() {
        XCTAssertTrue(Activation.relu.apply(.nan).isNaN)
        XCTAssertTrue(Activation.leakyReLU(alpha: 0.1).apply(.nan).isNaN)
        XCTAssertEqual(Activation.relu.apply(-2), 0)
        XCTAssertEqual(Activation.relu.apply(3), 3)
        XCTAssertEqual(Activation.leakyReLU(alpha: 0.1).apply(-2), -0.2, accuracy: 1e-7)
        XCTAssertEqual(Activation.relu.apply(.infinity), .infinity)
    }

    func testKerasDefinitions() {
        // hard_sigmoid: Keras 2 (0.2x + 0.5) and Keras 3 (relu6(x + 3)/6) differ at x = 2: 0.9 vs 5/6.
        XCTAssertEqual(Activation.hardSigmoid(alpha: 0.2, beta: 0.5).apply(2), 0.9, accuracy: 1e-7)
        XCTAssertEqual(Activation.hardSigmoid(alpha: 1.0 / 6, beta: 0.5).apply(2), 5.0 / 6, accuracy: 1e-7)
        // ReLU(max_value 4, negative_slope 0.2, threshold 0.5).
        let r = Activation.clippedReLU(maxValue: 4, negativeSlope: 0.2, threshold: 0.5)
        XCTAssertEqual(r.apply(5), 4); XCTAssertEqual(r.apply(1), 1)
        XCTAssertEqual(r.apply(0), -0.1, accuracy: 1e-7)
        XCTAssertEqual(Activation.selu.apply(1), 1.0507009873554805, accuracy: 1e-6)
        XCTAssertEqual(Activation.gelu(approximate: false).apply(1), 0.8413447, accuracy: 1e-6)
    }
}

final class AttributeBoundsTests: XCTestCase {
    /// `inferOutputTypes` itself rejects attributes and inputs that would overflow or index out of
    /// range (the `.mlbundle` reader calls it directly on values read from a file).
    func testInferOutputTypesGuardsItself() {
        let x = TensorType([1, 4, 4, 2])
        func node(_ op: Op) -> Node { Node(name: "n", op: op, inputs: ["x"], outputs: ["y"]) }
        let bad: [Op] = [
            .pad(PadAttributes(mode: .constant, pads: [[0, 0], [Int.max, 0], [0, 0], [0, 0]])),
            .crop(crops: [[0, 0], [0, 0], [0, -1], [0, 0]]),
            .reshape(targetShape: [1 << 30, 1 << 30]),
            .repeatVector(n: Int.max),
            .custom(CustomLayerAttributes(className: "C", outputShapes: [[1, -3]])),
            .conv2d(Conv2DAttributes(kernel: [1, 1], padding: .valid, groups: 0, outputChannels: 2)),
        ]
        for op in bad { XCTAssertThrowsError(try node(op).inferOutputTypes([x]), "\(op)") }
        // Rank 0 is a tensor (one element); more than Node.maxRank axes is not.
        XCTAssertEqual(try node(.activation(.relu)).inferOutputTypes([TensorType([])]), [TensorType([])])
        XCTAssertThrowsError(try node(.activation(.relu)).inferOutputTypes([TensorType(Array(repeating: 1, count: 33))])) { e in
            XCTAssertTrue("\(e)".contains("rank 33"), "\(e)")
        }
        // Reshape whose element product overflows Int: an error, not a trap.
        let big = TensorType([1 << 20, 1 << 20])
        XCTAssertThrowsError(try node(.reshape(targetShape: [1 << 20, 1 << 20])).inferOutputTypes([big]))
    }
}
