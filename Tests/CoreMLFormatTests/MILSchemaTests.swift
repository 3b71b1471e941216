// The generated MIL.proto types (Spec.MILSpec.*): decoding the corpus ML programs against what
// coremltools' classes recorded in ../shared/corpus/MANIFEST.md, and encode → decode round trips
// of every message kind.
@testable import CoreMLFormat
import Foundation
import TestSupport
import XCTest

final class MILSchemaTests: XCTestCase {
    /// Counts the operations of `block` by type, nested blocks included.
    private func histogram(_ block: Spec.MILSpec.Block, into h: inout [String: Int]) {
        for op in block.operations {
            h[op.type, default: 0] += 1
            for b in op.blocks { histogram(b, into: &h) }
        }
    }

    /// "141 ops [const×107, conv×12, …]" of a MANIFEST.md row → (141, listed counts).
    private func manifestOps(_ name: String) throws -> (Int, [String: Int]) {
        let manifest = try String(contentsOf: TestPaths.sharedFile("corpus/MANIFEST.md"), encoding: .utf8)
        let row = try XCTUnwrap(manifest.split(separator: "\n").first { $0.hasPrefix("| `\(name)`") }, name)
        let re = try NSRegularExpression(pattern: #"main\(CoreML5\); (\d+) ops \[([^\]]*)\]"#)
        let s = String(row)
        let m = try XCTUnwrap(re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)), "no op list for \(name)")
        let total = Int(s[Range(m.range(at: 1), in: s)!])!
        var h: [String: Int] = [:]
        for item in s[Range(m.range(at: 2), in: s)!].split(separator: ",") {
            let parts = item.trimmingCharacters(in: .whitespaces).split(separator: "×")
            if parts.count == 2, let n = Int(parts[1]) { h[String(parts[0])] = n }
        }
        return (total, h)
    }

    func testCorpusProgramsDecodeAsCoremltoolsSaw() throws {
        for name in ["autonerf_superpoint.mlpackage", "ekgapp_rhythm_lstm.mlpackage"] {
            let url = try TestPaths.sharedFile("corpus/mlmodel/\(name)")
            let package = try MLPackage.read(at: url.path)
            XCTAssertTrue(package.model.unknownFieldWarnings.isEmpty, "\(name): \(package.model.unknownFieldWarnings)")
            let program = try XCTUnwrap(package.model.mlProgram(file: name), name)
            XCTAssertEqual(Array(program.functions.keys), ["main"], name)
            let main = try XCTUnwrap(program.functions["main"])
            XCTAssertEqual(main.opset, "CoreML5", name)
            let block = try XCTUnwrap(main.blockSpecializations["CoreML5"], name)
            var h: [String: Int] = [:]
            histogram(block, into: &h)
            let (total, listed) = try manifestOps(name)
            XCTAssertEqual(h.values.reduce(0, +), total, name)
            for (op, n) in listed { XCTAssertEqual(h[op], n, "\(name): \(op)") }
            // Every function input and op output is typed; blob values name the weights file.
            XCTAssertFalse(main.inputs.isEmpty)
            var blobs = 0
            for op in block.operations {
                for out in op.outputs { XCTAssertNotNil(out.type?.type, "\(name): \(out.name)") }
                if op.type == "const", case let .blobFileValue(b)? = op.attributes["val"]?.value {
                    XCTAssertEqual(b.fileName, "@model_path/weights/weight.bin")
                    XCTAssertEqual(b.offset % 64, 0, "blob metadata records are 64-byte aligned")
                    blobs += 1
                }
            }
            XCTAssertGreaterThan(blobs, 0, name)
            // Decoded → encoded → decoded is the same program.
            let again = try Spec.MILSpec.Program.decode(program.encode(), file: name)
            XCTAssertEqual(again.program, program, name)
            XCTAssertTrue(again.warnings.isEmpty)
        }
    }

    /// A program that uses every message and oneof member of MIL.proto.
    static func everyKindProgram() -> Spec.MILSpec.Program {
        typealias M = Spec.MILSpec
        func dim(_ n: UInt64) -> M.Dimension { M.Dimension(dimension: .constant(.init(size: n))) }
        let fp32 = M.ValueType(type: .tensorType(M.TensorType(dataType: .float32, rank: 2,
                                                              dimensions: [dim(1), M.Dimension(dimension: .unknown(.init(variadic: false)))])))
        let scalarInt = M.ValueType(type: .tensorType(M.TensorType(dataType: .int32, rank: 0)))
        func tensor(_ t: M.TensorValue.ValueOneof, _ type: M.ValueType) -> M.Value {
            M.Value(type: type, value: .immediateValue(.init(value: .tensor(M.TensorValue(value: t)))))
        }
        let values: [M.Value] = [
            tensor(.floats(.init(values: [1.5, -2])), fp32),
            tensor(.ints(.init(values: [3])), scalarInt),
            tensor(.bools(.init(values: [true, false])), scalarInt),
            tensor(.strings(.init(values: ["same", "valid"])), scalarInt),
            tensor(.longInts(.init(values: [Int64.min, 7])), scalarInt),
            tensor(.doubles(.init(values: [0.25])), scalarInt),
            tensor(.bytes(.init(values: [0, 60, 255])), scalarInt),
            M.Value(docString: "blob", type: fp32, value: .blobFileValue(.init(fileName: "@model_path/weights/weight.bin", offset: 64))),
            M.Value(value: .immediateValue(.init(value: .tuple(.init(values: [tensor(.ints(.init(values: [1])), scalarInt)]))))),
            M.Value(value: .immediateValue(.init(value: .list(.init(values: [tensor(.floats(.init(values: [2])), fp32)]))))),
            M.Value(value: .immediateValue(.init(value: .dictionary(.init(values: [
                .init(key: tensor(.strings(.init(values: ["k"])), scalarInt), value: tensor(.ints(.init(values: [9])), scalarInt)),
            ]))))),
        ]
        let listType = M.ValueType(type: .listType(M.ListType(type: fp32, length: M.Dimension(dimension: .unknown(.init(variadic: true))))))
        let otherTypes: [M.ValueType] = [
            listType,
            M.ValueType(type: .tupleType(M.TupleType(types: [fp32, scalarInt]))),
            M.ValueType(type: .dictionaryType(M.DictionaryType(keyType: scalarInt, valueType: fp32))),
            M.ValueType(type: .stateType(M.StateType(wrappedType: fp32))),
        ]
        var ops: [M.Operation] = values.enumerated().map { i, v in
            M.Operation(type: "const", outputs: [M.NamedValueType(name: "c\(i)", type: v.type ?? fp32)],
                        attributes: ["name": tensor(.strings(.init(values: ["c\(i)"])), scalarInt), "val": v])
        }
        let body = M.Block(inputs: [M.NamedValueType(name: "x_in", type: fp32)], outputs: ["x_in"],
                           operations: [], attributes: ["note": values[1]])
        ops.append(M.Operation(type: "while_loop",
                               inputs: ["loop_vars": M.Argument(arguments: [.init(binding: .name("x")), .init(binding: .value(values[0]))])],
                               outputs: otherTypes.enumerated().map { M.NamedValueType(name: "o\($0.offset)", type: $0.element) },
                               blocks: [body, body]))
        let block = M.Block(outputs: ["o0"], operations: ops)
        let main = M.Function(inputs: [M.NamedValueType(name: "x", type: fp32)], opset: "CoreML8",
                              blockSpecializations: ["CoreML8": block], attributes: ["a": values[3]])
        return M.Program(version: 1, functions: ["main": main, "second": main], docString: "doc",
                         attributes: ["buildInfo": values[10]])
    }

    func testEveryMessageKindRoundTrips() throws {
        let program = Self.everyKindProgram()
        let bytes = try program.encode()
        let (decoded, warnings) = try Spec.MILSpec.Program.decode(bytes)
        XCTAssertEqual(decoded, program)
        XCTAssertEqual(warnings, [])
        // Maps are written in key order: encoding is deterministic.
        XCTAssertEqual(try decoded.encode(), bytes)
    }

    func testModelCarriesTheProgram() throws {
        var model = Spec.Model(specificationVersion: 9)
        let program = Self.everyKindProgram()
        try model.setMLProgram(program)
        XCTAssertEqual(model.kind, .mlProgram)
        let decoded = try Spec.Model.decode(model.encode())
        XCTAssertEqual(decoded.unknownFieldWarnings, [])
        XCTAssertEqual(try decoded.mlProgram(), program)
        XCTAssertNil(try Spec.Model(specificationVersion: 4).mlProgram())
    }

    func testTruncatedProgramIsATypedError() throws {
        let bytes = try Self.everyKindProgram().encode()
        XCTAssertThrowsError(try Spec.MILSpec.Program.decode(Array(bytes.prefix(bytes.count / 2)), file: "cut.mlmodel")) { error in
            guard case let CoreMLFormatError.invalidValue(file, what, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(file, "cut.mlmodel")
            XCTAssertTrue(what.contains("ML program"))
        }
    }
}
