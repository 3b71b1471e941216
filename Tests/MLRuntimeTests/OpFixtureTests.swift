import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Runs every case in Fixtures/ops/ (made by Scripts/make_op_fixtures.py from NumPy formulas):
/// the op is decoded from the case's stored attributes (the bundle encoding), its output types are
/// inferred, and the reference kernel — and the optimized kernel, where one covers the case — must
/// match NumPy's outputs within the case's tolerance (relative to max(1, |expected|)); integer and
/// bool outputs exactly. Inputs and outputs keep their `.npy` dtypes (int32, int64, bool, …), and
/// the inferred output element types must be the stored ones.
final class OpFixtureTests: XCTestCase {
    struct Case: Decodable {
        var group: String
        var op: String
        var attributes: [String: AttributeValue]
        var inputs: Int
        var outputs: Int
        var weights: [String]
        var tolerance: Float
    }

    static var root: URL { TestPaths.repositoryRoot.appendingPathComponent("Fixtures/ops") }

    static func caseNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.path)
            .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent($0).appendingPathComponent("case.json").path) }
            .sorted()
    }

    func testEveryFixtureMatchesNumPy() throws {
        let names = try Self.caseNames()
        XCTAssertGreaterThan(names.count, 0, "no cases in Fixtures/ops: run Scripts/make_op_fixtures.py")
        var checked = 0
        for name in names {
            do { try check(name); checked += 1 } catch { XCTFail("\(name): \(error)") }
        }
        XCTAssertEqual(checked, names.count)
    }

    /// Every op kind with an `OpFixtures` group must have at least one case (a kind's NumPy
    /// references are not silently dropped when the fixtures are regenerated).
    func testFixtureKindsAreKnown() throws {
        for name in try Self.caseNames() {
            let c = try loadCase(name)
            XCTAssertNotNil(OpKind(rawValue: c.op), "\(name): unknown op kind '\(c.op)'")
        }
    }

    func loadCase(_ name: String) throws -> Case {
        let dir = Self.root.appendingPathComponent(name)
        return try JSONDecoder().decode(Case.self, from: Data(contentsOf: dir.appendingPathComponent("case.json")))
    }

    func check(_ name: String) throws {
        let dir = Self.root.appendingPathComponent(name)
        let c = try loadCase(name)
        let kind = try XCTUnwrap(OpKind(rawValue: c.op), "\(name): unknown op '\(c.op)'")
        let op = try kind.decodeOp(c.attributes)
        // Compared as JSON reads them back: a whole-number float (1.0) is stored as a JSON number that reads as an integer.
        let reencoded = try JSONDecoder().decode([String: AttributeValue].self, from: JSONEncoder().encode(op.attributes))
        XCTAssertEqual(reencoded, c.attributes, "\(name): attributes do not re-encode identically")
        let ins = try (0..<c.inputs).map { try NPY.read(contentsOf: dir.appendingPathComponent("in\($0).npy")) }
        let expected = try (0..<c.outputs).map { try NPY.read(contentsOf: dir.appendingPathComponent("out\($0).npy")) }
        var weights: [String: ConstantTensor] = [:]
        for role in c.weights {
            let w = try NPY.read(contentsOf: dir.appendingPathComponent("w_\(role).npy"))
            weights[role] = ConstantTensor(shape: w.shape, floats: w.scalars)
        }
        let node = Node(name: name, op: op, inputs: (0..<c.inputs).map { "in\($0)" }, outputs: (0..<c.outputs).map { "out\($0)" },
                        weights: weights)
        let inTypes = ins.map { TensorType($0.shape, $0.elementType) }
        let outTypes = try node.inferOutputTypes(inTypes)
        if !outTypes.allSatisfy(\.isFullyKnown) {
            // Run-time shapes (dynamic fill): the static type must admit NumPy's output; the
            // kernels then get the actual shapes, as Model's dynamic executor gives them.
            for (t, e) in zip(outTypes, expected) {
                XCTAssertTrue(t.admits(TensorType(e.shape, e.elementType)), "\(name): inferred \(t) does not admit \(e.shape)")
            }
            var g = Graph(inputs: zip(node.inputs, inTypes).map { ValueInfo(name: $0, type: $1) }, outputs: node.outputs, nodes: [node])
            try g.inferShapes()
            for referenceOnly in [true, false] {
                let got = try Model(graph: g, configuration: .init(referenceOnly: referenceOnly))
                    .prediction(from: Dictionary(uniqueKeysWithValues: zip(node.inputs, ins)))
                for (o, e) in zip(node.outputs, expected) {
                    XCTAssertEqual(got[o], e, "\(name) output \(o) (referenceOnly \(referenceOnly)) differs from NumPy")
                }
            }
            return
        }
        XCTAssertEqual(outTypes.map(\.shape), expected.map(\.shape), "\(name): inferred output shapes")
        XCTAssertEqual(outTypes.map(\.elementType), expected.map(\.elementType), "\(name): inferred output element types")
        guard outTypes.map(\.shape) == expected.map(\.shape), outTypes.map(\.elementType) == expected.map(\.elementType) else { return }
        let ctx = KernelContext(node: node, inputTypes: inTypes, outputTypes: outTypes, threadCount: 2)
        var kernels = [("reference", try KernelRegistry.makeKernel(ctx, referenceOnly: true))]
        if let f = KernelRegistry.optimized[kind], let fast = try f(ctx) { kernels.append(("optimized", fast)) }
        for (label, kernel) in kernels {
            let got = try runTypedKernel(kernel, ins, outputTypes: outTypes).map(\.scalars)
            for (i, (g, e)) in zip(got, expected).enumerated() {
                if e.elementType.isInteger || e.elementType == .bool {  // integer and bool outputs: exact
                    let gi = try runTypedKernel(kernel, ins, outputTypes: outTypes)[i].int64s
                    XCTAssertEqual(gi, e.int64s, "\(name) \(label) output \(i) (\(e.elementType)) differs from NumPy")
                    continue
                }
                var worst: Float = 0, at = 0
                for j in 0..<e.count {
                    let a = g[j], b = e.scalars[j]
                    if a.isNaN && b.isNaN { continue }
                    if a == b { continue }  // equal infinities
                    let d = abs(a - b) / max(1, abs(b))
                    if !(d <= worst) { worst = d.isNaN ? .infinity : d; at = j }
                }
                XCTAssertLessThanOrEqual(worst, c.tolerance,
                    "\(name) \(label) output \(i): worst relative error \(worst) at \(at) (got \(g[at]), NumPy \(e.scalars[at]))")
            }
        }
    }
}
