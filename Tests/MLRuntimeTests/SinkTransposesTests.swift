@testable import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// MARK: transpose sinking (issue 12)

/// `sink_transposes` (PassPipeline.inference): the transposes an imported ML program leaves at
/// tensors read twice (residual adds), around concatenations, per-channel constants and
/// reductions go away, and the graph computes what it computed before — checked three ways:
/// the unoptimized graph on the reference kernels (the oracle), the default pipeline, and the
/// pipeline without `sink_transposes`.
final class SinkTransposesTests: XCTestCase {
    static let toNCHW = [0, 3, 1, 2], toNHWC = [0, 2, 3, 1]

    static func conv(_ name: String, _ input: String, _ output: String, cin: Int, cout: Int, k: Int = 1, seed: UInt64) -> Node {
        Node(name: name, op: .conv2d(Conv2DAttributes(kernel: [k, k], padding: .same, outputChannels: cout)),
             inputs: [input], outputs: [output],
             weights: ["weight": randomConstant([cout, cin, k, k], seed: seed), "bias": randomConstant([cout], seed: seed + 1)])
    }

    static func bn(_ name: String, _ input: String, _ output: String, c: Int, seed: UInt64) -> Node {
        Node(name: name, op: .batchNorm(BatchNormAttributes(axis: 1, epsilon: 1e-3)), inputs: [input], outputs: [output],
             weights: ["gamma": randomConstant([c], seed: seed, in: 0.5 ... 1.5), "beta": randomConstant([c], seed: seed + 1),
                       "mean": randomConstant([c], seed: seed + 2), "variance": randomConstant([c], seed: seed + 3, in: 0.2 ... 2)])
    }

    static func t(_ name: String, _ perm: [Int], _ input: String, _ output: String) -> Node {
        Node(name: name, op: .transpose(perm: perm), inputs: [input], outputs: [output])
    }

    /// Two MobileNetV2-style residual blocks as an ML program imports them (NCHW between
    /// NHWC convolutions): s = bn(T(conv_a(x))) feeds the add and conv_b; r = s + scale·bn(T(conv_b))
    /// feeds conv_c and the second add; then ReLU, a second output z (NHWC) and a global mean
    /// over H, W into a dense layer.
    static func residualGraph() throws -> Graph {
        let c = 8
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 6, 5, 4]))], outputs: ["y", "z"], nodes: [
            conv("conv_a", "x", "a", cin: 4, cout: c, seed: 1),
            t("a_nchw", toNCHW, "a", "a_t"),
            bn("bn_a", "a_t", "s", c: c, seed: 10),
            t("s_nhwc", toNHWC, "s", "s_t"),
            conv("conv_b", "s_t", "b", cin: c, cout: c, k: 3, seed: 20),
            t("b_nchw", toNCHW, "b", "b_t"),
            bn("bn_b", "b_t", "bb", c: c, seed: 30),
            // A per-channel scale as MIL writes it: a [C, 1, 1] constant broadcast against NCHW.
            Node(name: "scale", op: .binary(.mul), inputs: ["bb"], outputs: ["bs"],
                 weights: ["y": randomConstant([c, 1, 1], seed: 40, in: 0.5 ... 2)]),
            Node(name: "add_1", op: .binary(.add), inputs: ["s", "bs"], outputs: ["r"]),
            t("r_nhwc", toNHWC, "r", "r_t"),
            conv("conv_c", "r_t", "cc", cin: c, cout: c, seed: 50),
            t("c_nchw", toNCHW, "cc", "c_t"),
            Node(name: "add_2", op: .binary(.add), inputs: ["r", "c_t"], outputs: ["r2"]),
            Node(name: "relu", op: .activation(.relu), inputs: ["r2"], outputs: ["r3"]),
            t("z_nhwc", toNHWC, "r3", "z"),
            Node(name: "gap", op: .reduce(ReduceAttributes(function: .mean, axes: [2, 3])), inputs: ["r3"], outputs: ["pooled"]),
            Node(name: "dense", op: .dense(DenseAttributes(outputChannels: 3)), inputs: ["pooled"], outputs: ["y"],
                 weights: ["weight": randomConstant([3, c], seed: 60), "bias": randomConstant([3], seed: 61)]),
        ])
        try g.inferShapes()
        return g
    }

    static func count(_ g: Graph, _ op: String) -> Int { g.nodes.filter { $0.op.name == op }.count }

    /// Runs `g` as the oracle (unoptimized, reference kernels), with the default pipeline and
    /// with the pipeline minus `sink_transposes`; every output of both must be within
    /// `tolerance`·max(1, max|oracle|). Returns the two loaded graphs.
    func assertSameValues(_ g: Graph, tolerance: Float = 1e-4, file: StaticString = #filePath, line: UInt = #line) throws -> (Graph, Graph) {
        let xType = try XCTUnwrap(g.inputs.first?.type)
        let x = nd(xType.shape, randomFloats(count: xType.elementCount, seed: 77, in: -2 ... 2))
        let oracle = try Model(graph: g, configuration: .init(referenceOnly: true)).prediction(from: ["x": x])
        let sunk = try Model(graph: g)
        let unsunk = try Model(graph: g, configuration: .init(disabledPasses: ["sink_transposes"]))
        for model in [sunk, unsunk] {
            let out = try model.prediction(from: ["x": x])
            for name in g.outputs {
                let a = try XCTUnwrap(oracle[name], file: file, line: line), b = try XCTUnwrap(out[name], file: file, line: line)
                XCTAssertEqual(a.shape, b.shape, name, file: file, line: line)
                let scale = max(1, a.scalars.map(abs).max() ?? 0)
                XCTAssertLessThanOrEqual(maxAbsDiff(a.scalars, b.scalars) / scale, tolerance, name, file: file, line: line)
                XCTAssertGreaterThan(a.scalars.map(abs).max() ?? 0, 1e-3, "\(name): a non-trivial output", file: file, line: line)
            }
        }
        return (sunk.graph, unsunk.graph)
    }

    func testResidualBlocksLoseEveryTransposeAndBatchNorm() throws {
        let g = try Self.residualGraph()
        XCTAssertEqual(Self.count(g, "transpose"), 6)
        let (sunk, unsunk) = try assertSameValues(g)
        // One transpose is left, right before the global mean: a mean over NCHW's trailing H, W
        // is not turned into a mean over NHWC's middle axes 1, 2 (the slow case of the kernels).
        XCTAssertEqual(sunk.nodes.filter { $0.op.name == "transpose" }.map { tr in sunk.nodes.first { $0.inputs.contains(tr.outputs[0]) }?.name },
                       ["gap"], "\(sunk.nodes.map { "\($0.name) \($0.op)" })")
        XCTAssertEqual(Self.count(sunk, "batchNorm"), 0, "both batch norms folded into their convolutions")
        XCTAssertGreaterThanOrEqual(Self.count(unsunk, "transpose"), 5, "cancel_transpose_pairs alone leaves the residual transposes")
        XCTAssertEqual(Self.count(unsunk, "batchNorm"), 2)
        // The per-channel scale was permuted with the tensor: [C, 1, 1] on NCHW → [1, 1, 1, C].
        let scale = try XCTUnwrap(sunk.nodes.first { $0.name == "scale" })
        XCTAssertEqual(scale.weights["y"]?.shape, [1, 1, 1, 8])
        XCTAssertEqual(scale.weights["y"]?.floats(), g.nodes.first { $0.name == "scale" }?.weights["y"]?.floats())
        XCTAssertEqual(sunk.nodes.first { $0.name == "gap" }?.op, .reduce(ReduceAttributes(function: .mean, axes: [2, 3])))
        // Idempotent, as every inference pass.
        var h = g
        XCTAssertTrue(try PassPipeline.inference.run(on: &h).contains("sink_transposes"))
        let again = h
        XCTAssertEqual(try PassPipeline.inference.run(on: &h), [])
        XCTAssertEqual(h, again)
    }

    /// Two NCHW branches concatenated on channels, a [1, C, 1, 1] bias, a sum over C kept as a
    /// size-1 axis, back to NHWC: concat axis 1 → 3, the bias permuted, reduce axis 1 → 3; and a
    /// global mean over H, W without keepDims whose kept axes stay in order: no transpose after it.
    func testConcatConstantAndKeptDimReduceAreMoved() throws {
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 5, 4, 3]))], outputs: ["y", "z"], nodes: [
            Self.conv("conv_a", "x", "a", cin: 3, cout: 4, seed: 1),
            Self.t("a_nchw", Self.toNCHW, "a", "a_t"),
            Self.conv("conv_b", "x", "b", cin: 3, cout: 2, k: 3, seed: 3),
            Self.t("b_nchw", Self.toNCHW, "b", "b_t"),
            Node(name: "cat", op: .concat(axis: 1), inputs: ["a_t", "b_t"], outputs: ["cat"]),
            Node(name: "bias", op: .binary(.sub), inputs: ["cat"], outputs: ["biased"],
                 weights: ["y": randomConstant([1, 6, 1, 1], seed: 5)]),
            Node(name: "csum", op: .reduce(ReduceAttributes(function: .sum, axes: [1], keepDims: true)), inputs: ["biased"], outputs: ["m"]),
            Self.t("m_nhwc", Self.toNHWC, "m", "y"),
            // [1, 6, 5, 4] → mean over N, H → [6, 4] (C, W): NHWC axes 0, 1 keep W, C in the order W, C → transposed back.
            Node(name: "nhmean", op: .reduce(ReduceAttributes(function: .mean, axes: [0, 2])), inputs: ["biased"], outputs: ["z"]),
        ])
        try g.inferShapes()
        let (sunk, _) = try assertSameValues(g, tolerance: 1e-5)
        XCTAssertEqual(sunk.nodes.first { $0.name == "cat" }?.op, .concat(axis: 3))
        XCTAssertEqual(sunk.nodes.first { $0.name == "csum" }?.op, .reduce(ReduceAttributes(function: .sum, axes: [3], keepDims: true)))
        XCTAssertEqual(sunk.nodes.first { $0.name == "nhmean" }?.op, .reduce(ReduceAttributes(function: .mean, axes: [0, 1])))
        // The one transpose left: [W, C] → [C, W] after the mean (two transposes moved, one added).
        XCTAssertEqual(sunk.nodes.filter { $0.op.name == "transpose" }.map(\.op), [.transpose(perm: [1, 0])],
                       "\(sunk.nodes.map { "\($0.name) \($0.op)" })")
    }

    func testRewritesThatWouldAddTransposesAreNotMade() throws {
        // t = T(conv(x)) read by two element-wise ops that are graph outputs' producers: moving T
        // would need a transpose after each (2 for 1).
        var twoReaders = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3, 3, 2]))], outputs: ["p", "q"], nodes: [
            Self.conv("conv", "x", "a", cin: 2, cout: 2, seed: 1),
            Self.t("nchw", Self.toNCHW, "a", "t"),
            Node(name: "relu", op: .activation(.relu), inputs: ["t"], outputs: ["p"]),
            Node(name: "sig", op: .activation(.sigmoid), inputs: ["t"], outputs: ["q"]),
        ])
        try twoReaders.inferShapes()
        var h = twoReaders
        XCTAssertFalse(SinkTransposes().apply(to: &h))
        XCTAssertEqual(h, twoReaders)

        // An add whose other operand is not transposed the same way (a graph input in NCHW).
        var mixed = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3, 3, 2])), ValueInfo(name: "w", type: TensorType([1, 2, 3, 3]))],
                          outputs: ["y"], nodes: [
            Self.conv("conv", "x", "a", cin: 2, cout: 2, seed: 1),
            Self.t("nchw", Self.toNCHW, "a", "t"),
            Node(name: "add", op: .binary(.add), inputs: ["t", "w"], outputs: ["s"]),
            Self.t("nhwc", Self.toNHWC, "s", "y"),
        ])
        try mixed.inferShapes()
        h = mixed
        XCTAssertFalse(SinkTransposes().apply(to: &h))
        XCTAssertEqual(h, mixed)

        // The transposed tensor is a graph output: it must keep its name and layout.
        var shown = try Self.residualGraph()
        shown.outputs.append("a_t")
        try shown.inferShapes()
        h = shown
        _ = SinkTransposes().apply(to: &h)
        XCTAssertTrue(h.nodes.contains { $0.name == "a_nchw" && $0.outputs == ["a_t"] }, "the transpose writing a graph output stays")
        XCTAssertEqual(h.outputs, shown.outputs)
        XCTAssertEqual(h.inputs, shown.inputs)
    }

    func testConstantIsPaddedThenPermuted() throws {
        // y [C=2, 1, W=3] against an NCHW tensor: padded to [1, 2, 1, 3], as NHWC [1, 1, 3, 2],
        // element (c, w) at NHWC offset w·2 + c.
        let y = floatConstant([2, 1, 3], [0, 1, 2, 3, 4, 5])
        let moved = try XCTUnwrap(SinkTransposes.permutedConstant(y, rank: 4, perm: Self.toNCHW))
        XCTAssertEqual(moved.shape, [1, 1, 3, 2])
        XCTAssertEqual(moved.floats(), [0, 3, 1, 4, 2, 5])
    }
}

/// The transposes no pass removes run as a oneDNN reorder (DNNLTranspose): bit-identical to the
/// reference kernel for every permutation of ranks 1–4 and a rank-5 / rank-6 case.
final class DNNLTransposeTests: XCTestCase {
    static func permutations(_ n: Int) -> [[Int]] {
        guard n > 1 else { return [Array(0..<n)] }
        return permutations(n - 1).flatMap { p in (0...p.count).map { i in var q = p; q.insert(n - 1, at: i); return q } }
    }

    func testReorderEqualsReferenceTranspose() throws {
        let shapes: [[Int]] = [[7], [3, 5], [2, 3, 4], [1, 6, 5, 4], [2, 3, 1, 4, 5], [2, 1, 3, 2, 2, 3]]
        var checked = 0
        for shape in shapes {
            var perms = Self.permutations(shape.count)
            if shape.count > 4 { perms = [Array((0..<shape.count).reversed()), [0] + Array(2..<shape.count) + [1]] }
            for perm in perms {
                var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType(shape))], outputs: ["y"], nodes: [
                    Node(name: "t", op: .transpose(perm: perm), inputs: ["x"], outputs: ["y"]),
                ])
                try g.inferShapes()
                XCTAssertEqual(KernelRegistry.kernels(covering: .transpose(perm: perm), inputs: [TensorType(shape)]), ["reference", "oneDNN"])
                let x = nd(shape, randomFloats(count: shape.reduce(1, *), seed: UInt64(checked + 1), in: -5 ... 5))
                // remove_no_op_nodes would drop an identity permutation: the kernels run the node as given.
                let a = try XCTUnwrap(try Model(graph: g, configuration: .init(referenceOnly: true)).prediction(from: ["x": x])["y"])
                let b = try XCTUnwrap(try Model(graph: g, configuration: .init(disabledPasses: ["remove_no_op_nodes"])).prediction(from: ["x": x])["y"])
                XCTAssertEqual(a.shape, b.shape, "\(shape) \(perm)")
                XCTAssertEqual(a.scalars, b.scalars, "\(shape) \(perm)")
                checked += 1
            }
        }
        XCTAssertEqual(checked, 1 + 2 + 6 + 24 + 2 + 2)
    }
}

/// Random graphs of transposes, element-wise ops with one and two inputs, per-axis constants
/// and batch norms on [3, 3, 3, 3] tensors (every permutation keeps the shape, so any two
/// tensors can be added): `sink_transposes` never adds a transpose, and the pipeline's result
/// equals the unoptimized graph on the reference kernels.
final class SinkTransposesRandomGraphTests: XCTestCase {
    func randomGraph(seed: UInt64) throws -> Graph {
        var rng = SeededGenerator(seed: seed)
        let shape = [3, 3, 3, 3]
        var tensors = ["x"], perms: [[Int]] = []
        var nodes: [Node] = []
        func pick() -> String { tensors[Int.random(in: max(0, tensors.count - 4)..<tensors.count, using: &rng)] }
        for k in 0..<Int.random(in: 6...14, using: &rng) {
            let out = "v\(k)", name = "n\(k)"
            switch Int.random(in: 0..<7, using: &rng) {
            case 0, 1:
                // A random permutation, or the inverse of one already used (so pairs can meet).
                var p = Array(0..<4).shuffled(using: &rng)
                if let q = perms.randomElement(using: &rng), Bool.random(using: &rng) {
                    p = Array(repeating: 0, count: 4)
                    for i in 0..<4 { p[q[i]] = i }
                }
                perms.append(p)
                nodes.append(Node(name: name, op: .transpose(perm: p), inputs: [pick()], outputs: [out]))
            case 2:
                nodes.append(Node(name: name, op: .activation(Bool.random(using: &rng) ? .relu : .tanh), inputs: [pick()], outputs: [out]))
            case 3:
                let fs: [BinaryFunction] = [.add, .sub, .mul, .maximum]
                nodes.append(Node(name: name, op: .binary(fs.randomElement(using: &rng) ?? .add), inputs: [pick(), pick()], outputs: [out]))
            case 4:
                let shapes: [[Int]] = [[3], [3, 1], [3, 1, 1], [1, 3, 1, 1], [1], [3, 3, 3, 3]]
                let s = shapes.randomElement(using: &rng) ?? [3]
                nodes.append(Node(name: name, op: .binary(.mul), inputs: [pick()], outputs: [out],
                                  weights: ["y": randomConstant(s, seed: seed &* 31 &+ UInt64(k), in: -2 ... 2)]))
            case 5:
                nodes.append(Node(name: name, op: .batchNorm(BatchNormAttributes(axis: Int.random(in: 0..<4, using: &rng), epsilon: 1e-3)),
                                  inputs: [pick()], outputs: [out],
                                  weights: ["gamma": randomConstant([3], seed: seed &+ 100 &+ UInt64(k), in: 0.5 ... 1.5),
                                            "beta": randomConstant([3], seed: seed &+ 200 &+ UInt64(k)),
                                            "mean": randomConstant([3], seed: seed &+ 300 &+ UInt64(k)),
                                            "variance": randomConstant([3], seed: seed &+ 400 &+ UInt64(k), in: 0.5 ... 2)]))
            default:
                nodes.append(Node(name: name, op: .elementwise(.add), inputs: [pick(), pick(), pick()], outputs: [out]))
            }
            tensors.append(out)
        }
        // Outputs: the last tensor and, sometimes, an earlier one (a graph output inside the region).
        var outputs = [tensors[tensors.count - 1]]
        if tensors.count > 3, Bool.random(using: &rng), let o = tensors.dropFirst().dropLast().randomElement(using: &rng) { outputs.append(o) }
        var g = Graph(inputs: [ValueInfo(name: "x", type: TensorType(shape))], outputs: outputs, nodes: nodes)
        try g.inferShapes()
        return g
    }

    func testRandomGraphsKeepTheirValuesAndNeverGainTransposes() throws {
        var moved = 0
        for seed in UInt64(1)...120 {
            let g = try randomGraph(seed: seed)
            var h = g
            let changed = SinkTransposes().apply(to: &h)
            try h.verify()
            try h.inferShapes()
            let before = g.nodes.filter { $0.op.name == "transpose" }.count, after = h.nodes.filter { $0.op.name == "transpose" }.count
            XCTAssertLessThanOrEqual(after, before, "seed \(seed)")
            if changed { moved += 1 }
            XCTAssertEqual(h.outputs, g.outputs)
            let x = nd([3, 3, 3, 3], randomFloats(count: 81, seed: seed, in: -2 ... 2))
            let oracle = try Model(graph: g, configuration: .init(referenceOnly: true)).prediction(from: ["x": x])
            for model in [try Model(graph: h, configuration: .init(referenceOnly: true)), try Model(graph: g)] {
                let out = try model.prediction(from: ["x": x])
                for name in g.outputs {
                    let a = try XCTUnwrap(oracle[name]), b = try XCTUnwrap(out[name])
                    XCTAssertEqual(a.shape, b.shape, "seed \(seed) \(name)")
                    let scale = max(1, a.scalars.map(abs).max() ?? 0)
                    XCTAssertLessThanOrEqual(maxAbsDiff(a.scalars, b.scalars) / scale, 1e-5, "seed \(seed) \(name)")
                }
            }
        }
        XCTAssertGreaterThanOrEqual(moved, 20, "the random graphs exercise the pass")
    }
}
