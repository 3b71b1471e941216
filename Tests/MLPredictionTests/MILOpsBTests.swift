// MIL ops of issue 11 group B (MILOpsMoreB.swift), beyond the element-wise parity of
// MILProgramRunTests (which runs every Fixtures/mlprogram/opb_* case against its NumPy reference):
// exact output shapes and element types, typed refusals of bad attributes (programs from the
// fixtures with one constant changed), and the random ops of Fixtures/mlprogram_random, whose
// samples are checked against the distribution parameters Scripts/make_mlprogram_fixtures_b.py
// recorded (moments, range, frequencies; mlconv's generator is not Core ML's, so the numbers
// themselves cannot match) and for determinism.
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

/// Imports and runs fixture packages (shared by the two test classes below).
private enum MILFixture {
    static func package(_ dir: String, _ name: String) -> URL {
        TestPaths.repositoryRoot.appendingPathComponent("Fixtures/\(dir)/\(name)/model.mlpackage")
    }

    static func importGraph(_ spec: Spec.Model, package: URL) throws -> Graph {
        let root = try MLPackage.read(at: package.path).rootModelPath
        return try MILImporter.importModel(spec, fileName: package.lastPathComponent,
                                           modelPath: (root as NSString).deletingLastPathComponent).graph
    }

    static func graph(_ package: URL) throws -> Graph { try importGraph(Spec.Model.load(contentsOf: package.path), package: package) }

    static func inputs(_ dir: URL, _ names: [String]) throws -> [String: NDArray] {
        var out: [String: NDArray] = [:]
        for n in names { out[n] = try NPY.read(contentsOf: dir.appendingPathComponent("input_\(n).npy")) }
        return out
    }
}

final class MILOpsBTests: XCTestCase {
    private func run(_ name: String, inputs: [String]) throws -> [String: NDArray] {
        let pkg = MILFixture.package("mlprogram", name)
        return try Model(graph: try MILFixture.graph(pkg)).prediction(from: MILFixture.inputs(pkg.deletingLastPathComponent(), inputs))
    }

    /// Shapes and element types of the results (MILProgramRunTests compares the values).
    func testOutputShapesAndTypes() throws {
        let cases: [(String, [String], String, [Int])] = [
            ("opb_space_to_depth", ["x_in"], "y", [1, 12, 2, 3]),
            ("opb_depth_to_space", ["x_in"], "y", [1, 2, 4, 6]),
            ("opb_pixel_shuffle", ["x_in"], "y", [1, 2, 4, 6]),
            ("opb_pixel_unshuffle", ["x_in"], "y", [1, 12, 2, 3]),
            ("opb_space_to_batch", ["x_in"], "y", [8, 3, 2, 4]),
            ("opb_batch_to_space", ["x_in"], "y", [2, 2, 3, 4]),
            ("opb_reshape_like", ["x_in"], "y", [6, 4]),
        ]
        for (name, ins, out, shape) in cases {
            let y = try XCTUnwrap(try run(name, inputs: ins)[out], name)
            XCTAssertEqual(y.shape, shape, name)
            XCTAssertEqual(y.elementType, .float32, name)
        }
        // non_zero: int32 [N, rank], N read at run time (6 non-zeros in the fixture).
        let nz = try XCTUnwrap(try run("opb_non_zero", inputs: ["x_in"])["y"])
        XCTAssertEqual(nz.shape, [6, 2])
        XCTAssertEqual(nz.elementType, .int32)
        // NMS: boxes / scores padded to max_boxes 10, int32 indices (−1 padding) and counts.
        let nms = try run("opb_nms", inputs: ["boxes_in", "scores_in"])
        XCTAssertEqual(nms["sel_boxes"]?.shape, [2, 10, 4])
        XCTAssertEqual(nms["sel_scores"]?.shape, [2, 10, 3])
        XCTAssertEqual(nms["sel_indices"]?.shape, [2, 10])
        XCTAssertEqual(nms["sel_indices"]?.elementType, .int32)
        XCTAssertEqual(nms["counts"]?.elementType, .int32)
        XCTAssertEqual(nms["counts"]?.shape, [2])
        let n17 = try run("opb_nms_ios17", inputs: ["boxes_in", "scores_in"])
        XCTAssertEqual(n17["sel_boxes"]?.shape, [2, 4, 10])
        XCTAssertEqual(n17["sel_scores"]?.shape, [2, 3, 10])
        XCTAssertEqual(n17["sel_indices"]?.shape, [2, 10])
        XCTAssertNil(n17["counts"])
    }

    /// non_zero on an input without a non-zero element: a typed run-time error (the IR has no
    /// empty tensors), never a crash.
    func testNonZeroOfAllZerosIsATypedError() throws {
        let pkg = MILFixture.package("mlprogram", "opb_non_zero")
        let model = try Model(graph: try MILFixture.graph(pkg))
        XCTAssertThrowsError(try model.prediction(from: ["x_in": NDArray(shape: [3, 4], repeating: 0)])) { e in
            XCTAssertFalse("\(e)".isEmpty)
        }
    }

    // MARK: refusals

    /// The fixture's program with the constant bound to `param` of the first `opType` op replaced.
    private func mutated(_ name: String, op opType: String, param: String, _ value: Spec.MILSpec.TensorValue.ValueOneof) throws -> (Spec.Model, URL) {
        let pkg = MILFixture.package("mlprogram", name)
        var spec = try Spec.Model.load(contentsOf: pkg.path)
        var program = try XCTUnwrap(try spec.mlProgram())
        var function = try XCTUnwrap(program.functions["main"])
        var block = try XCTUnwrap(function.blockSpecializations[function.opset])
        let i = try XCTUnwrap(block.operations.firstIndex { $0.type == opType }, "\(name) has no \(opType)")
        func replaced(_ v: Spec.MILSpec.Value) -> Spec.MILSpec.Value {
            var out = v
            out.value = .immediateValue(.init(value: .tensor(.init(value: value))))
            return out
        }
        let binding = try XCTUnwrap(block.operations[i].inputs[param]?.arguments.first?.binding, "\(opType) has no \(param)")
        switch binding {
        case let .name(n):
            let j = try XCTUnwrap(block.operations.firstIndex { $0.type == "const" && $0.outputs.first?.name == n }, "no const \(n)")
            let v = try XCTUnwrap(block.operations[j].attributes["val"])
            block.operations[j].attributes["val"] = replaced(v)
        case let .value(v):
            block.operations[i].inputs[param]?.arguments[0].binding = .value(replaced(v))
        }
        function.blockSpecializations[function.opset] = block
        program.functions["main"] = function
        try spec.setMLProgram(program)
        return (spec, pkg)
    }

    private func assertRefused(_ name: String, op: String, param: String, _ value: Spec.MILSpec.TensorValue.ValueOneof,
                               mentioning words: [String], line: UInt = #line) throws {
        let (spec, pkg) = try mutated(name, op: op, param: param, value)
        XCTAssertThrowsError(try MILFixture.importGraph(spec, package: pkg), "\(name): \(op).\(param)", line: line) { e in
            guard case let CoreMLImportError.unsupportedLayers(_, problems) = e else { return XCTFail("\(name): \(e)", line: line) }
            let p = problems.first { $0.type == op }
            XCTAssertNotNil(p, "\(name): \(problems)", line: line)
            for w in words { XCTAssertTrue(p?.reason.contains(w) ?? false, "\(name): '\(p?.reason ?? "")' should mention \(w)", line: line) }
        }
    }

    func testBadAttributesAreTypedRefusals() throws {
        try assertRefused("opb_depth_to_space", op: "depth_to_space", param: "block_size", .ints(.init(values: [3])), mentioning: ["block_size", "9"])
        try assertRefused("opb_space_to_depth", op: "space_to_depth", param: "block_size", .ints(.init(values: [0])), mentioning: ["block_size"])
        try assertRefused("opb_pixel_shuffle", op: "pixel_shuffle", param: "upscale_factor", .ints(.init(values: [3])), mentioning: ["upscale_factor"])
        try assertRefused("opb_space_to_batch", op: "space_to_batch", param: "block_shape", .ints(.init(values: [3, 2])), mentioning: ["block_shape"])
        try assertRefused("opb_space_to_batch", op: "space_to_batch", param: "paddings", .ints(.init(values: [0, 0, -1, 2])), mentioning: ["paddings"])
        try assertRefused("opb_batch_to_space", op: "batch_to_space", param: "crops", .ints(.init(values: [4, 0, 0, 2])), mentioning: ["crops"])
        try assertRefused("opb_nms", op: "non_maximum_suppression", param: "iou_threshold", .floats(.init(values: [.nan])), mentioning: ["NaN"])
        try assertRefused("opb_nms", op: "non_maximum_suppression", param: "max_boxes", .ints(.init(values: [0])), mentioning: ["max_boxes"])
        // begins[0] 1 (ends[0] 1) drops the first reference's dimension: [4] for 24 elements.
        try assertRefused("opb_reshape_like", op: "reshape_like", param: "begins", .ints(.init(values: [1])), mentioning: ["element counts"])
    }

    func testRandomAttributeRefusals() throws {
        let cases: [(String, String, String, Spec.MILSpec.TensorValue.ValueOneof, String)] = [
            ("random_bernoulli", "random_bernoulli", "prob", .floats(.init(values: [1.5])), "prob"),
            ("random_normal", "random_normal", "stddev", .floats(.init(values: [-1])), "stddev"),
            ("random_uniform", "random_uniform", "low", .floats(.init(values: [5])), "low"),
            ("random_uniform", "random_uniform", "shape", .ints(.init(values: [0])), "shape"),
        ]
        for (name, op, param, value, word) in cases {
            let pkg = MILFixture.package("mlprogram_random", name)
            var spec = try Spec.Model.load(contentsOf: pkg.path)
            var program = try XCTUnwrap(try spec.mlProgram())
            var function = try XCTUnwrap(program.functions["main"])
            var block = try XCTUnwrap(function.blockSpecializations[function.opset])
            let i = try XCTUnwrap(block.operations.firstIndex { $0.type == op })
            guard case let .name(n)? = block.operations[i].inputs[param]?.arguments.first?.binding,
                  let j = block.operations.firstIndex(where: { $0.outputs.first?.name == n }), var v = block.operations[j].attributes["val"] else {
                return XCTFail("\(name): \(param) is not a const")
            }
            v.value = .immediateValue(.init(value: .tensor(.init(value: value))))
            block.operations[j].attributes["val"] = v
            function.blockSpecializations[function.opset] = block
            program.functions["main"] = function
            try spec.setMLProgram(program)
            XCTAssertThrowsError(try MILFixture.importGraph(spec, package: pkg)) { e in
                guard case let CoreMLImportError.unsupportedLayers(_, problems) = e, let p = problems.first(where: { $0.type == op }) else {
                    return XCTFail("\(name): \(e)")
                }
                XCTAssertTrue(p.reason.contains(word), "\(name): \(p.reason)")
            }
        }
    }
}

/// The random ops: shape, dtype, range and statistics against the parameters recorded in each
/// case.json (bounds of 5 standard errors: a false alarm has probability < 1e-6 per check), and
/// determinism for a fixed seed.
final class MILRandomOpsTests: XCTestCase {
    private struct Case: Decodable {
        var inputs: [String: String]
        var outputs: [String: Output]
    }

    private struct Output: Decodable {
        var op: String
        var seed: Int
        var shape: [Int]
        var mean: Double?
        var stddev: Double?
        var low: Double?
        var high: Double?
        var prob: Double?
        var probabilities: [[Double]]?
    }

    private func load(_ name: String) throws -> (Case, Graph, [String: NDArray]) {
        let pkg = MILFixture.package("mlprogram_random", name)
        let dir = pkg.deletingLastPathComponent()
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: dir.appendingPathComponent("case.json")))
        var inputs: [String: NDArray] = [:]
        for (k, f) in c.inputs { inputs[k] = try NPY.read(contentsOf: dir.appendingPathComponent(f)) }
        let g = try MILFixture.graph(pkg)
        for i in g.inputs where inputs[i.name] == nil { inputs[i.name] = NDArray(shape: i.type.shape, repeating: 1) }
        return (c, g, inputs)
    }

    private func mean(_ v: [Float]) -> Double { v.reduce(0.0) { $0 + Double($1) } / Double(v.count) }
    private func variance(_ v: [Float]) -> Double {
        let m = mean(v)
        return v.reduce(0.0) { $0 + (Double($1) - m) * (Double($1) - m) } / Double(v.count - 1)
    }

    private func check(_ name: String, _ key: String, _ o: Output, _ y: NDArray) {
        let v = y.scalars, n = Double(v.count)
        let what = "\(name).\(key)"
        XCTAssertEqual(y.shape, o.shape, what)
        XCTAssertEqual(y.elementType, .float32, what)
        XCTAssertTrue(v.allSatisfy(\.isFinite), what)
        switch o.op {
        case "random_normal":
            guard let mu = o.mean, let sd = o.stddev else { return XCTFail("\(what): no mean / stddev") }
            XCTAssertEqual(mean(v), mu, accuracy: 5 * sd / n.squareRoot(), "\(what) mean")
            XCTAssertEqual(variance(v), sd * sd, accuracy: 5 * sd * sd * (2 / (n - 1)).squareRoot(), "\(what) variance")
            let p = 0.682689492  // P(|z| < 1)
            let inside = Double(v.filter { abs(Double($0) - mu) < sd }.count) / n
            XCTAssertEqual(inside, p, accuracy: 5 * (p * (1 - p) / n).squareRoot(), "\(what) mass within one stddev")
        case "random_uniform":
            guard let lo = o.low, let hi = o.high else { return XCTFail("\(what): no low / high") }
            XCTAssertTrue(v.allSatisfy { Double($0) >= lo && Double($0) < hi }, "\(what): a sample outside [\(lo), \(hi))")
            let w = hi - lo
            XCTAssertEqual(mean(v), (lo + hi) / 2, accuracy: 5 * w / (12 * n).squareRoot(), "\(what) mean")
            XCTAssertEqual(variance(v), w * w / 12, accuracy: 5 * w * w / (180 * n).squareRoot(), "\(what) variance")
            var bins = [Int](repeating: 0, count: 10)
            for x in v { bins[min(9, Int((Double(x) - lo) / w * 10))] += 1 }
            for (i, count) in bins.enumerated() {
                XCTAssertEqual(Double(count), n / 10, accuracy: 5 * (n * 0.09).squareRoot(), "\(what) decile \(i)")
            }
        case "random_bernoulli":
            guard let p = o.prob else { return XCTFail("\(what): no prob") }
            XCTAssertTrue(v.allSatisfy { $0 == 0 || $0 == 1 }, "\(what): a sample that is not 0 or 1")
            XCTAssertEqual(mean(v), p, accuracy: 5 * (p * (1 - p) / n).squareRoot(), "\(what) rate")
        case "random_categorical":
            guard let probs = o.probabilities, probs.count == o.shape[0] else { return XCTFail("\(what): no probabilities") }
            let size = o.shape[1]
            for (r, row) in probs.enumerated() {
                let samples = v[(r * size)..<((r + 1) * size)]
                XCTAssertTrue(samples.allSatisfy { $0 == $0.rounded() && $0 >= 0 && Int($0) < row.count }, "\(what) row \(r): not a class index")
                for (k, p) in row.enumerated() {
                    let f = Double(samples.filter { Int($0) == k }.count) / Double(size)
                    XCTAssertEqual(f, p, accuracy: 5 * (p * (1 - p) / Double(size)).squareRoot(), "\(what) row \(r) class \(k)")
                }
            }
        default:
            XCTFail("\(what): unknown op \(o.op)")
        }
    }

    private func checkCase(_ name: String) throws {
        let (c, g, inputs) = try load(name)
        let first = try Model(graph: g).prediction(from: inputs)
        for (key, o) in c.outputs.sorted(by: { $0.key < $1.key }) {
            guard let y = first[key] else { XCTFail("\(name): no output \(key)"); continue }
            check(name, key, o, y)
        }
        // A fixed seed gives the same numbers on every prediction and after a new import.
        let again = try Model(graph: try MILFixture.graph(MILFixture.package("mlprogram_random", name))).prediction(from: inputs)
        for key in c.outputs.keys { XCTAssertEqual(first[key]?.scalars, again[key]?.scalars, "\(name).\(key) is not deterministic") }
    }

    func testRandomNormal() throws {
        try checkCase("random_normal")
        // The two outputs differ only by their seed (7, 8): different numbers, same distribution.
        let (_, g, inputs) = try load("random_normal")
        let out = try Model(graph: g).prediction(from: inputs)
        let a = try XCTUnwrap(out["y_seed7"]).scalars, b = try XCTUnwrap(out["y_seed8"]).scalars
        XCTAssertLessThan(zip(a, b).filter { $0 == $1 }.count, a.count / 1000, "seeds 7 and 8 drew the same numbers")
    }

    func testRandomUniform() throws { try checkCase("random_uniform") }
    func testRandomUniformWithRunTimeShape() throws { try checkCase("random_uniform_dynamic") }
    func testRandomBernoulli() throws { try checkCase("random_bernoulli") }
    func testRandomCategorical() throws { try checkCase("random_categorical") }
}
