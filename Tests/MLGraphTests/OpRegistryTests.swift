import Foundation
import MLGraph
import TestSupport
import XCTest

/// Every op kind has a definition with a shape rule, a sample that infers, and correspondences.
final class OpRegistryTests: XCTestCase {
    func testEveryKindHasAShapeRuleThatAcceptsItsSamples() throws {
        for kind in OpKind.allCases {
            let samples = OpSamples.samples(for: kind)
            XCTAssertFalse(samples.isEmpty, "\(kind) has no sample")
            for (node, inputs) in samples {
                XCTAssertEqual(node.op.kind, kind)
                let outs = try node.inferOutputTypes(inputs)
                XCTAssertEqual(outs.count, node.outputs.count, "\(kind)")
                XCTAssertTrue(outs.allSatisfy { $0.shapeProblem == nil }, "\(kind): \(outs)")
            }
        }
    }

    func testEveryKindHasASummaryAndUniqueName() {
        for kind in OpKind.allCases {
            XCTAssertTrue(kind.definition.kind == kind, "\(kind)'s definition names \(kind.definition.kind)")
            XCTAssertFalse(kind.definition.summary.isEmpty, "\(kind)")
        }
        XCTAssertEqual(Set(OpKind.allCases.map(\.rawValue)).count, OpKind.allCases.count)
    }

    func testWeightRolesCoverSampleWeights() {
        for kind in OpKind.allCases where kind != .custom {
            let roles = Set(kind.definition.weightRoles.map(\.name))
            for (node, _) in OpSamples.samples(for: kind) {
                XCTAssertTrue(Set(node.weights.keys).isSubset(of: roles), "\(kind): weights \(node.weights.keys.sorted()) not all in roles \(roles.sorted())")
            }
        }
    }

    func testAttributeChecksRejectOutOfRangeValuesWithoutTrapping() {
        let bad: [Op] = [
            .conv2d(Conv2DAttributes(kernel: [3], padding: .valid, outputChannels: 1)),
            .conv2d(Conv2DAttributes(kernel: [3, Int.max], padding: .valid, outputChannels: 1)),
            .reshape(targetShape: [Int.max, 2]),
            .pad(PadAttributes(mode: .constant, pads: [[0, -1]])),
            .repeatVector(n: 0),
            .activation(.linear(alpha: .nan, beta: 0)),
        ]
        for op in bad {
            let node = Node(name: "n", op: op, inputs: ["x"], outputs: ["y"])
            XCTAssertThrowsError(try node.inferOutputTypes([TensorType([1, 4, 4, 2])]), "\(op)") { error in
                guard case let GraphError.invalidNode(name, _, _) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(name, "n")
            }
        }
    }
}

/// The explicit attribute encoding (the bundle's graph encoding) round-trips every sample.
final class OpCodecTests: XCTestCase {
    func testEverySampleRoundTripsThroughJSON() throws {
        for kind in OpKind.allCases {
            for (node, _) in OpSamples.samples(for: kind) {
                let attributes = node.op.attributes
                let json = try JSONEncoder().encode(attributes)
                let back = try JSONDecoder().decode([String: AttributeValue].self, from: json)
                let op = try kind.decodeOp(back)
                XCTAssertEqual(op, node.op, "\(kind): \(String(decoding: json, as: UTF8.self))")
            }
        }
    }

    func testMissingAndMistypedAttributesAreTypedErrors() {
        XCTAssertThrowsError(try OpKind.conv2d.decodeOp([:])) { error in
            guard case let GraphError.invalidAttribute(op, attribute, _, found) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(op, "conv2d"); XCTAssertEqual(attribute, "kernel"); XCTAssertEqual(found, "nothing")
        }
        XCTAssertThrowsError(try OpKind.softmax.decodeOp(["axis": .string("1")])) { error in
            XCTAssertEqual("\(error)", "op 'softmax': attribute 'axis' should be an integer, found string; the file is damaged or was written by another mlconv version")
        }
        XCTAssertThrowsError(try OpKind.pool2d.decodeOp(["kind": .string("median"), "kernel": .ints([2, 2]), "strides": .ints([2, 2]), "padding": .string("same")])) { error in
            XCTAssertTrue("\(error)".contains("one of \"max\", \"average\""), "\(error)")
        }
        XCTAssertThrowsError(try OpKind.activation.decodeOp(["function": .object(["function": .string("relu7")])]))
    }

    func testNonFiniteFloatsSurviveJSON() throws {
        let op = Op.pad(PadAttributes(mode: .constant, pads: [[1, 1]], value: -.infinity))
        let json = try JSONEncoder().encode(op.attributes)
        XCTAssertEqual(try OpKind.pad.decodeOp(try JSONDecoder().decode([String: AttributeValue].self, from: json)), op)
        let nan = Op.sequenceMask(value: .nan)
        let back = try OpKind.sequenceMask.decodeOp(try JSONDecoder().decode([String: AttributeValue].self, from: try JSONEncoder().encode(nan.attributes)))
        guard case let .sequenceMask(v) = back else { return XCTFail() }
        XCTAssertTrue(v.isNaN)
    }
}

extension OpCodecTests {
    /// Regression: "-0" in the JSON read back as the integer 0, so a rewritten bundle differed.
    func testNegativeZeroKeepsItsSign() throws {
        let v = try JSONDecoder().decode(AttributeValue.self, from: Data("-0".utf8))
        guard case let .float(f) = v else { return XCTFail("\(v)") }
        XCTAssertEqual(f.sign, .minus)
        XCTAssertEqual(try JSONDecoder().decode(AttributeValue.self, from: Data("0".utf8)), .int(0))
        XCTAssertEqual(try JSONDecoder().decode(AttributeValue.self, from: Data("9007199254740993".utf8)), .int(9007199254740993))
    }
}

extension OpRegistryTests {
    /// The function examples `mlconv ops` lists are valid nodes with distinct names per kind.
    func testFunctionExamplesInferAndAreNamedUniquely() throws {
        for kind in OpKind.allCases {
            let fs = kind.definition.functions
            XCTAssertEqual(Set(fs.map(\.name)).count, fs.count, "\(kind): duplicate function names")
            for f in fs {
                XCTAssertEqual(f.op.kind, kind)
                let node = Node(name: f.name, op: f.op, inputs: f.inputs.indices.map { "x\($0)" }, outputs: ["y"])
                XCTAssertNoThrow(try node.inferOutputTypes(f.inputs), "\(kind) \(f.name)")
            }
        }
    }
}
