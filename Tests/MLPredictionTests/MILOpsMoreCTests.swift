// The MIL ops of MILOpsMoreC.swift (quantize, dequantize, scaled_dot_product_attention,
// slice_update) beyond the parity fixtures Fixtures/mlprogram/opc_* that MILProgramRunTests runs:
// a stateful KV cache written with slice_update at a run-time position
// (Fixtures/mlprogram_state_kv, Scripts/make_mlprogram_fixtures_c.py), the `ops --mil` table, and
// typed errors for bad attributes (a fixture's program edited with Spec.Model.setMLProgram).
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

final class MILOpsMoreCTests: XCTestCase {
    private let ops = ["quantize", "dequantize", "scaled_dot_product_attention", "slice_update"]

    private func fixture(_ name: String) -> URL {
        TestPaths.repositoryRoot.appendingPathComponent("Fixtures/\(name)")
    }

    private func load(_ pkg: URL) throws -> (Spec.Model, String) {
        let spec = try Spec.Model.load(contentsOf: pkg.path)
        let root = try MLPackage.read(at: pkg.path).rootModelPath
        return (spec, (root as NSString).deletingLastPathComponent)
    }

    func testOpsAreListedAsImported() {
        let status = Dictionary(MILOpTable.status.map { ($0.op, $0.supported) }, uniquingKeysWith: { a, _ in a })
        for op in ops {
            XCTAssertTrue(MILOpTable.opsetOps.contains(op), op)
            XCTAssertEqual(status[op], true, op)
        }
        XCTAssertEqual(Set(MILOpTable.opsetOps).count, MILOpTable.opsetOps.count, "opsetOps lists an op twice")
    }

    /// cache[:, :, pos:pos+1, :] = kv in a state, three predictions at positions 0, 2, 1; then
    /// resetStates() starts again from zeros.
    func testStatefulKVCacheWithSliceUpdate() throws {
        let d = fixture("mlprogram_state_kv")
        let (spec, path) = try load(d.appendingPathComponent("model.mlpackage"))
        let graph = try MILImporter.importModel(spec, fileName: "state_kv", modelPath: path).graph
        let states = MILStates.states(of: graph)
        XCTAssertEqual(states.map(\.input), ["cache"])
        let model = try StatefulModel(graph: graph, states: states)
        for pass in 0..<2 {
            for t in 0..<3 {
                let kv = try NPY.read(contentsOf: d.appendingPathComponent("input_kv_\(t).npy"))
                let pos = try NPY.read(contentsOf: d.appendingPathComponent("input_pos_\(t).npy"))
                let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_y_\(t).npy"))
                let y = try XCTUnwrap(model.prediction(from: ["kv": kv, "pos": pos])["y"])
                XCTAssertEqual(y.shape, expected.shape)
                let err = zip(y.scalars, expected.scalars).map { abs($0 - $1) }.max() ?? .infinity
                XCTAssertLessThanOrEqual(err, 1e-3, "pass \(pass) step \(t)")
            }
            model.resetStates()
        }
    }

    // MARK: typed errors

    private func tensorValue(_ type: Spec.MILSpec.DataType, shape: [Int], _ v: Spec.MILSpec.TensorValue.ValueOneof) -> Spec.MILSpec.Value {
        let tt = Spec.MILSpec.TensorType(dataType: type, rank: Int64(shape.count),
                                          dimensions: shape.map { .init(dimension: .constant(.init(size: UInt64($0)))) })
        return .init(type: .init(type: .tensorType(tt)), value: .immediateValue(.init(value: .tensor(.init(value: v)))))
    }

    /// Imports fixture `name` after `edit` changed its `opType` op; returns the error's text.
    private func importError(_ name: String, _ opType: String, _ edit: (inout Spec.MILSpec.Operation) -> Void) throws -> String {
        let (spec0, path) = try load(fixture("mlprogram/\(name)/model.mlpackage"))
        var spec = spec0
        var program = try XCTUnwrap(spec.mlProgram())
        var fn = try XCTUnwrap(program.functions["main"])
        let key = try XCTUnwrap(fn.blockSpecializations.keys.first)
        var block = try XCTUnwrap(fn.blockSpecializations[key])
        let i = try XCTUnwrap(block.operations.firstIndex { $0.type == opType }, "\(name) has no \(opType)")
        edit(&block.operations[i])
        fn.blockSpecializations[key] = block
        program.functions["main"] = fn
        try spec.setMLProgram(program)
        do {
            _ = try MILImporter.importModel(spec, fileName: name, modelPath: path)
        } catch {
            return "\(error)"
        }
        XCTFail("\(name): the edited \(opType) imported")
        return ""
    }

    private func set(_ op: inout Spec.MILSpec.Operation, _ param: String, _ v: Spec.MILSpec.Value) {
        op.inputs[param] = .init(arguments: [.init(binding: .value(v))])
    }

    func testBadQuantizationAttributesAreTypedErrors() throws {
        var msg = try importError("opc_quantize_int8_tensor", "quantize") { op in
            set(&op, "output_dtype", tensorValue(.string, shape: [], .strings(.init(values: ["int16"]))))
        }
        XCTAssertTrue(msg.contains("quantize") && msg.contains("output_dtype 'int16'; expected 'int8' or 'uint8'"), msg)
        msg = try importError("opc_quantize_int8_tensor", "quantize") { op in
            set(&op, "scale", tensorValue(.float32, shape: [], .floats(.init(values: [0]))))
        }
        XCTAssertTrue(msg.contains("scale of zero"), msg)
        msg = try importError("opc_quantize_int8_axis", "quantize") { op in op.inputs["axis"] = nil }
        XCTAssertTrue(msg.contains("vector scale but no axis"), msg)
        msg = try importError("opc_quantize_int8_axis", "dequantize") { op in
            set(&op, "scale", tensorValue(.float32, shape: [2], .floats(.init(values: [0.1, 0.2]))))
        }
        XCTAssertTrue(msg.contains("dequantize") && msg.contains("has 2 scales for axis 1 of size 3"), msg)
        msg = try importError("opc_quantize_uint8_tensor", "quantize") { op in
            set(&op, "zero_point", tensorValue(.int8, shape: [], .bytes(.init(values: [3]))))
        }
        XCTAssertTrue(msg.contains("zero_point of type int8 and output_dtype 'uint8'"), msg)
    }

    func testBadAttentionAndSliceUpdateArgumentsAreTypedErrors() throws {
        var msg = try importError("opc_sdpa_bool_mask", "scaled_dot_product_attention") { op in
            set(&op, "attn_mask", tensorValue(.bool, shape: [4, 5], .bools(.init(values: [Bool](repeating: true, count: 20)))))
        }
        XCTAssertTrue(msg.contains("scaled_dot_product_attention") && msg.contains("last axis must be the key sequence length"), msg)
        msg = try importError("opc_sdpa_no_mask", "scaled_dot_product_attention") { op in
            op.inputs["key"] = op.inputs["value"]
        }
        XCTAssertTrue(msg.contains("query embedding 8 and key embedding 5"), msg)
        msg = try importError("opc_slice_update_strided_masks", "slice_update") { op in
            set(&op, "stride", tensorValue(.int32, shape: [3], .ints(.init(values: [1, 1, 1]))))
        }
        XCTAssertTrue(msg.contains("slice_update") && msg.contains("has an update of shape [2, 2, 2]"), msg)
        msg = try importError("opc_slice_update_squeeze", "slice_update") { op in
            set(&op, "stride", tensorValue(.int32, shape: [3], .ints(.init(values: [1, 0, 1]))))
        }
        XCTAssertTrue(msg.contains("stride [1, 0, 1]"), msg)
    }
}
