import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// `Model`: multi-node graphs, description, input validation, NaN passthrough, concurrency.
final class ModelTests: XCTestCase {
    /// image [1, 8, 8, 3] → conv 3×3 same (8, relu) → max pool 2/2 → "features" [1, 4, 4, 8]
    /// → flatten → dense 5 → softmax → "probs" [1, 5].
    static func smallCNN() -> Graph {
        var d = ModelDescription()
        d.inputs = [FeatureDescription(name: "image", shortDescription: "an image",
                                       image: ImageFeature(width: 8, height: 8, colorSpace: .rgb))]
        d.outputs = [FeatureDescription(name: "probs", shortDescription: "class probabilities")]
        d.metadata.author = "tests"
        d.metadata.userDefined = ["k": "v"]
        return Graph(
            inputs: [ValueInfo(name: "image", type: TensorType([1, 8, 8, 3]))],
            outputs: ["probs", "features"],
            nodes: [
                Node(name: "conv", op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 8, activation: .relu)),
                     inputs: ["image"], outputs: ["c"],
                     weights: ["weight": randomConstant([8, 3, 3, 3], seed: 1), "bias": randomConstant([8], seed: 2)]),
                Node(name: "pool", op: .pool2d(Pool2DAttributes(kind: .max, kernel: [2, 2], strides: [2, 2], padding: .valid)),
                     inputs: ["c"], outputs: ["features"]),
                Node(name: "flatten", op: .reshape(targetShape: [-1]), inputs: ["features"], outputs: ["f"]),
                Node(name: "dense", op: .dense(DenseAttributes(outputChannels: 5)), inputs: ["f"], outputs: ["logits"],
                     weights: ["weight": randomConstant([5, 128], seed: 3), "bias": randomConstant([5], seed: 4)]),
                Node(name: "softmax", op: .softmax(axis: 1), inputs: ["logits"], outputs: ["probs"]),
            ],
            description: d)
    }

    func image(seed: UInt64) -> NDArray { nd([1, 8, 8, 3], randomFloats(count: 192, seed: seed, in: 0 ... 1)) }

    func testDescription() throws {
        let m = try Model(graph: Self.smallCNN(), configuration: .init(referenceOnly: true))
        let d = m.modelDescription
        XCTAssertEqual(d.inputs.map(\.name), ["image"])
        XCTAssertEqual(d.inputs[0].shape, [1, 8, 8, 3])
        XCTAssertEqual(d.inputs[0].shortDescription, "an image")
        XCTAssertEqual(d.inputs[0].image?.colorSpace, .rgb)
        XCTAssertEqual(d.outputs.map(\.name), ["probs", "features"])
        XCTAssertEqual(d.outputs.map(\.shape), [[1, 5], [1, 4, 4, 8]])
        XCTAssertEqual(d.outputs[0].shortDescription, "class probabilities")
        XCTAssertEqual(d.outputs[1].shortDescription, "")
        XCTAssertEqual(d.metadata.author, "tests")
        XCTAssertEqual(d.metadata.userDefined, ["k": "v"])
    }

    func testMultiNodeGraphMatchesOpByOpEvaluation() throws {
        // The whole graph equals its nodes run one at a time (each as a one-node model).
        let g = Self.smallCNN()
        let m = try Model(graph: g, configuration: .init(referenceOnly: true))
        let x = image(seed: 9)
        let out = try m.prediction(from: ["image": x])
        var t = x
        var features: NDArray?
        for node in g.nodes {
            t = try runOp(node.op, [t], weights: node.weights)
            if node.name == "pool" { features = t }
        }
        XCTAssertEqual(out["probs"], t)
        XCTAssertEqual(out["features"], features)
        XCTAssertEqual(out["probs"]!.scalars.reduce(0, +), 1, accuracy: 1e-5)
    }

    func testInputValidation() throws {
        let m = try Model(graph: Self.smallCNN(), configuration: .init(referenceOnly: true))
        let x = image(seed: 1)
        assertRuntimeError(.missingInput(name: "image", expected: ["image"])) { try m.prediction(from: [:]) }
        assertRuntimeError(.unknownInput(name: "imag", expected: ["image"])) { try m.prediction(from: ["image": x, "imag": x]) }
        assertRuntimeError(.shapeMismatch(input: "image", expected: [1, 8, 8, 3], found: [1, 8, 8, 4])) {
            try m.prediction(from: ["image": NDArray(shape: [1, 8, 8, 4])])
        }
        // Same element count, wrong layout.
        assertRuntimeError(.shapeMismatch(input: "image", expected: [1, 8, 8, 3], found: [1, 3, 8, 8])) {
            try m.prediction(from: ["image": NDArray(shape: [1, 3, 8, 8])])
        }
        // Only a batch of 1 may be omitted.
        assertRuntimeError(.shapeMismatch(input: "image", expected: [1, 8, 8, 3], found: [2, 8, 8, 3])) {
            try m.prediction(from: ["image": NDArray(shape: [2, 8, 8, 3])])
        }
        let message = "\(RuntimeError.shapeMismatch(input: "image", expected: [1, 8, 8, 3], found: [1, 8, 8, 4]))"
        XCTAssertTrue(message.contains("'image'") && message.contains("(1, 8, 8, 3)") && message.contains("(1, 8, 8, 4)"), message)
    }

    func testBatchDimensionOfOneMayBeOmitted() throws {
        let m = try Model(graph: Self.smallCNN(), configuration: .init(referenceOnly: true))
        let x = image(seed: 2)
        let with = try m.prediction(from: ["image": x])
        let without = try m.prediction(from: ["image": x.reshaped([8, 8, 3])])
        XCTAssertEqual(with, without)
        XCTAssertEqual(without["probs"]?.shape, [1, 5])
    }

    func testNaNAndInfinityPassThrough() throws {
        let g = Graph(inputs: [ValueInfo(name: "a", type: TensorType([1, 4])), ValueInfo(name: "b", type: TensorType([1, 4]))],
                      outputs: ["sum", "scaled"],
                      nodes: [Node(name: "add", op: .elementwise(.add), inputs: ["a", "b"], outputs: ["sum"]),
                              Node(name: "scale", op: .activation(.linear(alpha: 2, beta: 0)), inputs: ["sum"], outputs: ["scaled"])])
        for referenceOnly in [true, false] {
            let m = try Model(graph: g, configuration: .init(referenceOnly: referenceOnly))
            let out = try m.prediction(from: ["a": nd([1, 4], [.nan, .infinity, -.infinity, 1]), "b": nd([1, 4], [1, 1, 1, 1])])
            XCTAssertEqual(maxAbsDiff(out["sum"]!.scalars, [.nan, .infinity, -.infinity, 2]), 0, "referenceOnly \(referenceOnly)")
            XCTAssertEqual(maxAbsDiff(out["scaled"]!.scalars, [.nan, .infinity, -.infinity, 4]), 0, "referenceOnly \(referenceOnly)")
        }
    }

    func testInputAsOutputAndOutputReadByLaterNode() throws {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3]))], outputs: ["x", "a", "b"],
                      nodes: [Node(name: "relu", op: .activation(.relu), inputs: ["x"], outputs: ["a"]),
                              Node(name: "double", op: .activation(.linear(alpha: 2, beta: 0)), inputs: ["a"], outputs: ["b"])])
        let m = try Model(graph: g, configuration: .init(referenceOnly: true))
        let out = try m.prediction(from: ["x": nd([1, 3], [-1, 2, 3])])
        XCTAssertEqual(out["x"]?.scalars, [-1, 2, 3])
        XCTAssertEqual(out["a"]?.scalars, [0, 2, 3])
        XCTAssertEqual(out["b"]?.scalars, [0, 4, 6])
    }

    func testInvalidGraphIsRejectedAtLoad() {
        let g = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3]))], outputs: ["y"],
                      nodes: [Node(name: "relu", op: .activation(.relu), inputs: ["nope"], outputs: ["y"])])
        XCTAssertThrowsError(try Model(graph: g)) { error in
            guard case let GraphError.verificationFailed(f)? = error as? GraphError else { return XCTFail("\(error)") }
            XCTAssertEqual(f.layer, .references)
            XCTAssertEqual(f.tensor, "nope")
            XCTAssertTrue(f.message.contains("nope"), f.message)
        }
    }

    /// Every op kind has a reference kernel that accepts its samples, and the kernel's result is
    /// finite and agrees with the optimized kernel where one covers the sample.
    func testEveryOpKindHasAReferenceKernel() throws {
        for kind in OpKind.allCases {
            XCTAssertNotNil(KernelRegistry.reference[kind], "\(kind) has no reference kernel")
            for (node, inputs) in OpSamples.samples(for: kind) {
                let outs = try node.inferOutputTypes(inputs)
                if !node.blocks.isEmpty || (inputs + outs).contains(where: \.isList) {
                    // Control flow and lists run only inside Model (the dynamic executor).
                    try runSampleThroughModel(node, inputs)
                    continue
                }
                let ctx = KernelContext(node: node, inputTypes: inputs, outputTypes: outs, threadCount: 1)
                if (inputs + outs).contains(where: { $0.elementType != .float32 }) {  // typed ops: raw buffers
                    let arrays = try randomTypedArrays(inputs, seed: 7)
                    let ref = try KernelRegistry.makeKernel(ctx, referenceOnly: true)
                    let r = try runTypedKernel(ref, arrays, outputTypes: outs)
                    XCTAssertTrue(r.allSatisfy { $0.scalars.allSatisfy(\.isFinite) }, "\(kind) \(node.op): non-finite reference output")
                    let f = try runTypedKernel(try KernelRegistry.makeKernel(ctx, referenceOnly: false), arrays, outputTypes: outs)
                    XCTAssertEqual(r, f, "\(kind) \(node.op)")
                    continue
                }
                let data = inputs.enumerated().map { i, t in
                    randomFloats(count: t.elementCount, seed: UInt64(7 + i)).map { kind == .embedding ? Float(Int(abs($0) * 9)) : ($0 > -0.8 ? $0 : 0) }
                }
                let ref = try XCTUnwrap(try KernelRegistry.makeKernel(ctx, referenceOnly: true), "\(kind)")
                let r = runKernel(ref, data, outputCounts: outs.map(\.elementCount))
                XCTAssertTrue(r.allSatisfy { $0.allSatisfy(\.isFinite) }, "\(kind) \(node.op): non-finite reference output")
                let fast = try KernelRegistry.makeKernel(ctx, referenceOnly: false)
                let f = runKernel(fast, data, outputCounts: outs.map(\.elementCount))
                for (a, b) in zip(r, f) { assertClose(b, a, tolerance: 1e-4) }
            }
        }
    }

    /// Runs a sample that needs the dynamic executor as a one-node graph: list inputs come from
    /// `makeList` nodes (length 2, unwritten elements read as zeros), list outputs are measured
    /// with `listLength`; integer and bool inputs are zeros, float inputs random. Reference-only and
    /// default models must agree, with finite outputs.
    func runSampleThroughModel(_ sample: Node, _ inputs: [TensorType]) throws {
        var nodes: [Node] = [], graphInputs: [ValueInfo] = [], feeds: [String: NDArray] = [:]
        for (i, (name, t)) in zip(sample.inputs, inputs).enumerated() {
            if t.isList {
                nodes.append(Node(name: "make_\(i)", op: .makeList(MakeListAttributes(elementShape: t.shape, elementType: t.elementType, length: 2)),
                                  inputs: [], outputs: [name]))
            } else {
                graphInputs.append(ValueInfo(name: name, type: t))
                feeds[name] = t.elementType == .float32
                    ? try NDArray(shape: t.shape, scalars: randomFloats(count: t.elementCount, seed: UInt64(7 + i)))
                    : try NDArray(shape: t.shape, elementType: t.elementType, bytes: [UInt8](repeating: 0, count: t.elementCount * t.elementType.byteSize))
            }
        }
        nodes.append(sample)
        var outputs: [String] = []
        for (i, (name, t)) in zip(sample.outputs, try sample.inferOutputTypes(inputs)).enumerated() {
            if t.isList {
                nodes.append(Node(name: "length_\(i)", op: .listLength, inputs: [name], outputs: ["\(name)_length"]))
                outputs.append("\(name)_length")
            } else {
                outputs.append(name)
            }
        }
        var g = Graph(inputs: graphInputs, outputs: outputs, nodes: nodes)
        try g.inferShapes()
        let ref = try Model(graph: g, configuration: .init(referenceOnly: true))
        XCTAssertTrue(ref.isDynamic, "\(sample.op)")
        let r = try ref.prediction(from: feeds)
        XCTAssertEqual(Set(r.keys), Set(outputs))
        XCTAssertTrue(r.values.allSatisfy { $0.scalars.allSatisfy(\.isFinite) }, "\(sample.op): non-finite output")
        let f = try Model(graph: g).prediction(from: feeds)
        for o in outputs { assertClose(f[o]!.scalars, r[o]!.scalars, tolerance: 1e-4) }
    }

    func testConcurrentPredictionsAreIdenticalToSerialOnes() throws {
        for referenceOnly in [true, false] {
            let m = try Model(graph: Self.smallCNN(), configuration: .init(referenceOnly: referenceOnly, maximumPooledArenas: 2))
            let inputs = (0..<6).map { image(seed: UInt64(100 + $0)) }
            let serial = try inputs.map { try m.prediction(from: ["image": $0]) }
            XCTAssertNotEqual(serial[0]["probs"], serial[1]["probs"])
            let lock = NSLock()
            var results: [(Int, [String: NDArray])] = []
            var failures: [Error] = []
            DispatchQueue.concurrentPerform(iterations: 4) { t in
                for r in 0..<12 {
                    let i = (t + r) % inputs.count
                    do {
                        let out = try m.prediction(from: ["image": inputs[i]])
                        lock.lock(); results.append((i, out)); lock.unlock()
                    } catch {
                        lock.lock(); failures.append(error); lock.unlock()
                    }
                }
            }
            XCTAssertTrue(failures.isEmpty, "\(failures)")
            XCTAssertEqual(results.count, 48)
            for (i, out) in results { XCTAssertEqual(out, serial[i], "input \(i), referenceOnly \(referenceOnly)") }
        }
    }
}
