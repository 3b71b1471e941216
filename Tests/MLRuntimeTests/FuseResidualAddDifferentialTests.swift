import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// MARK: residual add fusion (issue 12)

/// `fuse_residual_add` against the unfused graph: every graph runs unfused on the reference kernels
/// (the oracle), fused on the reference kernels, fused on oneDNN (sum post-op, as `Model` loads
/// it) and on oneDNN with only this pass disabled; every result must match the oracle. ResNet-style
/// and MobileNetV2-style blocks, and seeded random graphs of convolutions and additions whose
/// operands are read again later (so the memory plan must not give the sum the residual's buffer),
/// are graph inputs, or are convolutions themselves.
final class FuseResidualAddDifferentialTests: XCTestCase {
    static let allPasses: Set<String> = Set(PassPipeline.inference.names)

    func conv(_ name: String, _ input: String, _ output: String, cin: Int, cout: Int, k: Int = 3, stride: Int = 1,
              groups: Int = 1, seed: UInt64) -> Node {
        Node(name: name, op: .conv2d(Conv2DAttributes(kernel: [k, k], strides: [stride, stride], padding: .same, groups: groups,
                                                      outputChannels: cout)),
             inputs: [input], outputs: [output],
             weights: ["weight": randomConstant([cout, cin / groups, k, k], seed: seed, in: -0.5 ... 0.5),
                       "bias": randomConstant([cout], seed: seed + 1)])
    }

    func batchNorm(_ input: String, _ output: String, c: Int, seed: UInt64) -> Node {
        Node(name: "bn_" + output, op: .batchNorm(BatchNormAttributes(axis: 3, epsilon: 1e-3)), inputs: [input], outputs: [output],
             weights: ["gamma": randomConstant([c], seed: seed, in: 0.5...2), "beta": randomConstant([c], seed: seed + 1),
                       "mean": randomConstant([c], seed: seed + 2), "variance": randomConstant([c], seed: seed + 3, in: 0.1...3)])
    }

    func add(_ a: String, _ b: String, _ output: String) -> Node {
        Node(name: "add_" + output, op: .elementwise(.add), inputs: [a, b], outputs: [output])
    }

    func act(_ op: Op, _ input: String, _ output: String) -> Node {
        Node(name: "act_" + output, op: op, inputs: [input], outputs: [output])
    }

    /// Runs `graph` four ways on a random input; asserts that `fuse_residual_add` fused `fusions`
    /// additions and that every run is within `tolerance`·max(1, max|oracle|) of the oracle.
    /// - Returns: the oneDNN fused model.
    @discardableResult
    func assertResidualFusionPreservesValues(_ graph: Graph, fusions: Int, tolerance: Float = 1e-4,
                                             file: StaticString = #filePath, line: UInt = #line) throws -> Model {
        var g = graph
        try g.inferShapes()
        var withoutResidual = g, fused = g
        try PassPipeline.inference.run(on: &withoutResidual, disabling: ["fuse_residual_add"])
        let changed = try PassPipeline.inference.run(on: &fused)
        XCTAssertEqual(withoutResidual.nodes.count - fused.nodes.count >= fusions, true,
                       "\(withoutResidual.nodes.count) → \(fused.nodes.count) nodes", file: file, line: line)
        let residualConvs = fused.nodes.filter { if case let .conv2d(a) = $0.op { return a.residual != nil } else { return false } }
        XCTAssertEqual(residualConvs.count, fusions, "fused: \(fused.nodes.map { "\($0.name) \($0.inputs)" })", file: file, line: line)
        XCTAssertEqual(changed.contains("fuse_residual_add"), fusions > 0, file: file, line: line)
        var again = fused
        XCTAssertEqual(try PassPipeline.inference.run(on: &again), [], "idempotent", file: file, line: line)

        var feeds: [String: NDArray] = [:]
        for (k, input) in g.inputs.enumerated() {
            feeds[input.name] = nd(input.type.shape, randomFloats(count: input.type.elementCount, seed: 7 + UInt64(k), in: -3 ... 3))
        }
        let oracle = try Model(graph: g, configuration: .init(referenceOnly: true))
        let dnnlFused = try Model(graph: g)
        XCTAssertEqual(dnnlFused.graph.nodes.count, fused.nodes.count, file: file, line: line)
        let runs: [(String, Model)] = [
            ("reference fused", try Model(graph: fused, configuration: .init(referenceOnly: true))),
            ("oneDNN fused", dnnlFused),
            ("oneDNN without fuse_residual_add", try Model(graph: g, configuration: .init(disabledPasses: ["fuse_residual_add"]))),
            ("oneDNN unfused", try Model(graph: g, configuration: .init(disabledPasses: Self.allPasses))),
        ]
        let expected = try oracle.prediction(from: feeds)
        for o in g.outputs {
            let e = try XCTUnwrap(expected[o])
            let scale = max(1, e.scalars.map(abs).max() ?? 0)
            for (what, model) in runs {
                // Twice: a sum that wrote over a buffer still needed would change the second run.
                for round in 0..<2 {
                    let y = try XCTUnwrap(try model.prediction(from: feeds)[o])
                    XCTAssertEqual(y.shape, e.shape, what, file: file, line: line)
                    let err = maxAbsDiff(y.scalars, e.scalars)
                    XCTAssertLessThanOrEqual(err, tolerance * scale, "\(what) round \(round), output \(o): max|err| \(err)",
                                             file: file, line: line)
                }
            }
        }
        return dnnlFused
    }

    /// Two ResNet basic blocks (conv-bn-relu-conv-bn, add, relu): the identity shortcut of the
    /// first block is the graph input (the sum must copy it, never write over it), the second's an
    /// intermediate read by nothing after the add (the sum takes its buffer); then a projection
    /// block whose shortcut is a strided 1×1 convolution (both operands convolutions).
    static func resnetStyle(_ t: FuseResidualAddDifferentialTests) -> Graph {
        var nodes: [Node] = []
        var seed: UInt64 = 100
        func block(_ x: String, _ tag: String, c: Int) -> String {
            seed += 20
            nodes += [t.conv("\(tag)_c1", x, "\(tag)_a", cin: c, cout: c, seed: seed), t.batchNorm("\(tag)_a", "\(tag)_ab", c: c, seed: seed + 2),
                      t.act(.activation(.relu), "\(tag)_ab", "\(tag)_ar"),
                      t.conv("\(tag)_c2", "\(tag)_ar", "\(tag)_b", cin: c, cout: c, seed: seed + 4), t.batchNorm("\(tag)_b", "\(tag)_bb", c: c, seed: seed + 6),
                      t.add("\(tag)_bb", x, "\(tag)_s"), t.act(.activation(.relu), "\(tag)_s", "\(tag)_out")]
            return "\(tag)_out"
        }
        var h = block("x", "b1", c: 8)
        h = block(h, "b2", c: 8)
        nodes += [t.conv("b3_c1", h, "b3_a", cin: 8, cout: 16, stride: 2, seed: 300), t.act(.activation(.relu), "b3_a", "b3_ar"),
                  t.conv("b3_c2", "b3_ar", "b3_b", cin: 16, cout: 16, seed: 302),
                  t.conv("b3_proj", h, "b3_p", cin: 8, cout: 16, k: 1, stride: 2, seed: 304), t.batchNorm("b3_p", "b3_pb", c: 16, seed: 306),
                  t.add("b3_b", "b3_pb", "b3_s"), t.act(.activation(.relu), "b3_s", "b3_out"),
                  Node(name: "pool", op: .globalPool2d(kind: .average, keepDims: false), inputs: ["b3_out"], outputs: ["y"])]
        return Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 9, 7, 8]))], outputs: ["y"], nodes: nodes)
    }

    func testResNetStyleBlocks() throws {
        let model = try assertResidualFusionPreservesValues(Self.resnetStyle(self), fusions: 3)
        // b2's shortcut (b1_out) is dead after its add: the sum runs in place on it. b1's is the
        // graph input (copied, never written). b3's operands are both convolutions' outputs read
        // only there — b3 fuses the later one (the projection) and takes over the other's buffer.
        XCTAssertGreaterThanOrEqual(model.memoryPlan.inPlaceNodeCount, 2)
        let (_, timings) = try model.profiledPrediction(from: ["x": nd([1, 9, 7, 8], randomFloats(count: 504, seed: 3))])
        XCTAssertEqual(timings.filter { $0.kernel == "DNNLResidualConvKernel" }.count, 3, "\(timings.map(\.kernel))")
    }

    /// Two ResNet basic blocks of 64 channels at 16×16: every 3×3 convolution, the residual ones
    /// included, runs on oneDNN's Winograd kernel (`DNNLBlockedConvolution`, the sum post-op on
    /// the blocked destination) where the CPU has AVX-512; values as the oracle's, and the
    /// second block's sum takes its shortcut's buffer (b1_out, read by nothing after it).
    func testResNetStyleBlocksOnWinograd() throws {
        var nodes: [Node] = []
        var x = "x"
        for (b, seed) in [("b1", UInt64(500)), ("b2", UInt64(600))] {
            nodes += [conv("\(b)_c1", x, "\(b)_a", cin: 64, cout: 64, seed: seed), batchNorm("\(b)_a", "\(b)_ab", c: 64, seed: seed + 2),
                      act(.activation(.relu), "\(b)_ab", "\(b)_ar"),
                      conv("\(b)_c2", "\(b)_ar", "\(b)_b", cin: 64, cout: 64, seed: seed + 4), batchNorm("\(b)_b", "\(b)_bb", c: 64, seed: seed + 6),
                      add("\(b)_bb", x, "\(b)_s"), act(.activation(.relu), "\(b)_s", "\(b)_out")]
            x = "\(b)_out"
        }
        nodes.append(Node(name: "pool", op: .globalPool2d(kind: .average, keepDims: false), inputs: [x], outputs: ["y"]))
        let graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 16, 16, 64]))], outputs: ["y"], nodes: nodes)
        let model = try assertResidualFusionPreservesValues(graph, fusions: 2)
        let (_, timings) = try model.profiledPrediction(from: ["x": nd([1, 16, 16, 64], randomFloats(count: 16 * 16 * 64, seed: 4))])
        let hasAVX512 = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.contains(" avx512f") ?? false
        XCTAssertEqual(timings.filter { $0.kernel == "DNNLBlockedConvolution" }.count, hasAVX512 ? 4 : 0, "\(timings.map(\.kernel))")
        XCTAssertGreaterThanOrEqual(model.memoryPlan.inPlaceNodeCount, 1)
    }

    /// Two MobileNetV2 inverted residual blocks (expand 1×1-bn-relu6, depthwise 3×3-bn-relu6,
    /// project 1×1-bn, add without activation), the second block's input read after it again.
    static func mobileNetV2Style(_ t: FuseResidualAddDifferentialTests) -> Graph {
        var nodes: [Node] = [t.conv("stem", "x", "s0", cin: 3, cout: 8, stride: 2, seed: 1), t.act(.clip(alpha: 0, beta: 6), "s0", "h0")]
        var seed: UInt64 = 10
        func block(_ x: String, _ tag: String) -> String {
            seed += 20
            nodes += [t.conv("\(tag)_expand", x, "\(tag)_e", cin: 8, cout: 24, k: 1, seed: seed), t.batchNorm("\(tag)_e", "\(tag)_eb", c: 24, seed: seed + 2),
                      t.act(.clip(alpha: 0, beta: 6), "\(tag)_eb", "\(tag)_er"),
                      t.conv("\(tag)_dw", "\(tag)_er", "\(tag)_d", cin: 24, cout: 24, groups: 24, seed: seed + 4),
                      t.batchNorm("\(tag)_d", "\(tag)_db", c: 24, seed: seed + 6), t.act(.clip(alpha: 0, beta: 6), "\(tag)_db", "\(tag)_dr"),
                      t.conv("\(tag)_project", "\(tag)_dr", "\(tag)_p", cin: 24, cout: 8, k: 1, seed: seed + 8),
                      t.batchNorm("\(tag)_p", "\(tag)_pb", c: 8, seed: seed + 10), t.add(x, "\(tag)_pb", "\(tag)_out")]
            return "\(tag)_out"
        }
        let h1 = block("h0", "b1")
        let h2 = block(h1, "b2")
        nodes += [t.add(h2, h1, "skip"),  // h1 read again after b2's add: not in place there
                  Node(name: "pool", op: .globalPool2d(kind: .average, keepDims: false), inputs: ["skip"], outputs: ["p"]),
                  Node(name: "fc", op: .dense(DenseAttributes(outputChannels: 5)), inputs: ["p"], outputs: ["y"],
                       weights: ["weight": randomConstant([5, 8], seed: 90)])]
        return Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 12, 10, 3]))], outputs: ["y"], nodes: nodes)
    }

    func testMobileNetV2StyleBlocks() throws {
        // b1's add reads h0, b2's h1 (read again by "skip"), "skip" adds two non-convolutions.
        try assertResidualFusionPreservesValues(Self.mobileNetV2Style(self), fusions: 2)
    }

    /// Regression: the residual is also the convolution's source (t = relu(x); y = conv(t) + t,
    /// as a Core ML import of a Keras residual unit gives it). The sum must not be written over t
    /// while the convolution still reads it (the memory plan gave y t's buffer: 1 % off).
    func testResidualThatIsAlsoTheConvolutionsSource() throws {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 6, 7, 3]))], outputs: ["y"], nodes: [
            act(.activation(.relu), "x", "t"),
            conv("c", "t", "c", cin: 3, cout: 3, seed: 3),
            act(.activation(.relu), "c", "cr"),
            add("cr", "t", "s"),
            Node(name: "pool", op: .globalPool2d(kind: .average, keepDims: false), inputs: ["s"], outputs: ["y"]),
        ])
        let model = try assertResidualFusionPreservesValues(g, fusions: 1)
        let fusedNode = try XCTUnwrap(model.graph.nodes.first { $0.name == "c" })
        XCTAssertEqual(fusedNode.inputs, ["t", "t"])
        XCTAssertNotEqual(model.memoryPlan.locations["s"], model.memoryPlan.locations["t"])
    }

    /// Activations after the sum that oneDNN fuses and ones it cannot (softsign: the kernel then
    /// runs the sum and activation itself), with and without an activation of the convolution.
    func testActivationsAroundTheSum() throws {
        let after: [Op?] = [nil, .activation(.relu), .clip(alpha: 0, beta: 6), .activation(.sigmoid), .activation(.softsign),
                            .activation(.hardSwish), .activation(.elu(alpha: 0.5))]
        for (k, op) in after.enumerated() {
            for convActivation in [nil, Op.activation(.tanh), .activation(.softsign)] {
                var nodes = [conv("c", "x", "c", cin: 4, cout: 4, seed: UInt64(k))]
                var last = "c"
                if let convActivation { nodes.append(act(convActivation, "c", "ca")); last = "ca" }
                nodes.append(add("x", last, op == nil ? "y" : "s"))
                if let op { nodes.append(act(op, "s", "y")) }
                let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([2, 5, 4, 4]))], outputs: ["y"], nodes: nodes)
                try assertResidualFusionPreservesValues(g, fusions: 1)
            }
        }
    }

    /// Seeded random graphs: a chain of same-shaped convolutions (random kernel, groups,
    /// activation) and additions of the current tensor with a random earlier one (graph input,
    /// convolution output, addition output), some followed by an activation, some earlier tensors
    /// also made graph outputs.
    func testRandomGraphs() throws {
        let activations: [Op] = [.activation(.relu), .clip(alpha: 0, beta: 6), .activation(.tanh), .activation(.softsign),
                                 .activation(.leakyReLU(alpha: 0.1))]
        var total = 0
        for trial in 0..<12 {
            var rng = SeededGenerator(seed: UInt64(1000 + trial))
            let c = [4, 8][Int.random(in: 0...1, using: &rng)]
            var nodes: [Node] = []
            var tensors = ["x"]
            var outputs: Set<String> = []
            for step in 0..<Int.random(in: 4...9, using: &rng) {
                let cur = tensors.last!
                if Bool.random(using: &rng) || tensors.count < 2 {
                    let k = [1, 3][Int.random(in: 0...1, using: &rng)], groups = Bool.random(using: &rng) ? 1 : c
                    nodes.append(conv("conv\(step)", cur, "t\(step)", cin: c, cout: c, k: k, groups: groups, seed: UInt64(trial * 100 + step)))
                    tensors.append("t\(step)")
                    if Int.random(in: 0..<4, using: &rng) == 0 {
                        nodes.append(act(activations.randomElement(using: &rng)!, "t\(step)", "t\(step)a"))
                        tensors.append("t\(step)a")
                    }
                } else {
                    let other = tensors[Int.random(in: 0..<(tensors.count - 1), using: &rng)]
                    let operands = Bool.random(using: &rng) ? [cur, other] : [other, cur]
                    nodes.append(add(operands[0], operands[1], "t\(step)"))
                    tensors.append("t\(step)")
                    if Bool.random(using: &rng) {
                        nodes.append(act(activations.randomElement(using: &rng)!, "t\(step)", "t\(step)a"))
                        tensors.append("t\(step)a")
                    }
                }
                if Int.random(in: 0..<5, using: &rng) == 0, tensors.last! != "x" { outputs.insert(tensors.last!) }
            }
            outputs.insert(tensors.last!)
            let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 6, 5, c]))], outputs: outputs.sorted(), nodes: nodes)
            var typed = g
            try typed.inferShapes()
            var fused = typed
            try PassPipeline.inference.run(on: &fused)
            let n = fused.nodes.filter { if case let .conv2d(a) = $0.op { return a.residual != nil } else { return false } }.count
            total += n
            try assertResidualFusionPreservesValues(g, fusions: n)
        }
        XCTAssertGreaterThan(total, 5, "the random graphs exercise the fusion")
    }
}
