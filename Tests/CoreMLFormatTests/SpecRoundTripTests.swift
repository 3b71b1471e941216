// Repo-only tests: specs built in Swift, encoded with protobuf-c and decoded back.
@testable import CoreMLFormat
import Foundation
import TestSupport
import XCTest

final class SpecRoundTripTests: XCTestCase {
    func testClassifierRoundTrips() throws {
        let model = SampleSpecs.classifier
        let bytes = try model.encode()
        let decoded = try Spec.Model.decode(bytes, fileName: "classifier")
        XCTAssertEqual(decoded.unknownFieldWarnings, [])
        XCTAssertEqual(decoded, model)
        XCTAssertEqual(try decoded.encode(), bytes, "encoding is deterministic")
    }

    func testEveryDeclaredLayerTypeHasATypedCaseThatRoundTrips() throws {
        let layers = SampleSpecs.everyLayer
        let covered = Set(layers.map(\.fieldNumber))
        let declared = Spec.NeuralNetworkLayer.declaredLayerFieldNumbers
        XCTAssertGreaterThan(declared.count, 90)
        XCTAssertEqual(declared, Spec.LayerParameters.fieldNumbers, "the generated enum has one case per oneof member")
        XCTAssertEqual(Set(covered).subtracting(declared), [], "samples of undeclared layer types")
        // The declared types without a case of their own decode to `.other` (next test).
        for layer in layers {
            let p = try XCTUnwrap(layer.parameters, layer.typeName)
            XCTAssertEqual(Spec.NeuralNetworkLayer.Layer(p), layer, "the case <-> generated parameters mapping")
            XCTAssertEqual(p.fieldNumber, layer.fieldNumber)
            XCTAssertNotNil(Spec.LayerParameters.typeName(fieldNumber: layer.fieldNumber), "\(layer.typeName)")
            let model = Spec.Model(specificationVersion: 4, type: .neuralNetwork(SampleSpecs.network([layer])))
            let back = try Spec.Model.decode(try model.encode(), fileName: layer.typeName)
            XCTAssertEqual(back.neuralNetwork?.layers.first?.layer, layer, layer.typeName)
            XCTAssertEqual(back.unknownFieldWarnings, [], layer.typeName)
        }
    }

    func testPipelineWithOpaqueStageRoundTrips() throws {
        let model = SampleSpecs.pipeline
        let decoded = try Spec.Model.decode(try model.encode(), fileName: "pipeline")
        XCTAssertEqual(decoded.kind, .pipelineRegressor)
        XCTAssertEqual(decoded.pipelineModels.map { $0.kind }, [.neuralNetworkRegressor, .glmRegressor])
        // The GLM stage is kept verbatim and decodes on demand (no "recognised by name" warning).
        XCTAssertEqual(decoded.unknownFieldWarnings, [])
        XCTAssertEqual(try decoded.pipelineModels[1].classicalParameters(),
                       .glmRegressor(Spec.GLMRegressor(weights: [.init(value: [1])], offset: [2])))
        XCTAssertEqual(decoded, model)
    }

    func testUnknownTopLevelFieldIsReportedAndKept() throws {
        var bytes = try SampleSpecs.pipeline.encode()
        bytes += [0xE8, 0x04, 0x05]  // field 77, varint 5
        let decoded = try Spec.Model.decode(bytes, fileName: "extra-field")
        XCTAssertEqual(decoded.unknownFields, [Spec.UnknownField(fieldNumber: 77, wireType: .varint, data: [5])])
        XCTAssertTrue(decoded.unknownFieldWarnings.contains { $0.hasPrefix("Model (CoreML.Specification.Model): unknown field 77 (varint)") },
                      "\(decoded.unknownFieldWarnings)")
        XCTAssertEqual(try decoded.encode(), bytes)
    }

    func testUnknownFieldsInALayerNameTheLayer() throws {
        var net = SampleSpecs.network([.softmax, .add(alpha: 0)])
        net.layers[1].unknownFields = [Spec.UnknownField(fieldNumber: 99, wireType: .lengthDelimited, data: [2, 0x61, 0x62])]
        let model = Spec.Model(specificationVersion: 4, type: .neuralNetwork(net))
        let decoded = try Spec.Model.decode(try model.encode(), fileName: "layer-field")
        XCTAssertEqual(decoded.neuralNetwork, net)
        let warning = try XCTUnwrap(decoded.unknownFieldWarnings.first)
        XCTAssertTrue(warning.contains("layers[1] \"layer1_add\""), warning)
        XCTAssertTrue(warning.contains("field 99 (length-delimited, 2 bytes)"), warning)
    }

    func testUnsupportedLayerTypeIsReportedByNameAndKept() throws {
        // Field 1999 is no member of the layer oneof (coremltools 7.2): a layer type newer than
        // our schema, kept as an unknown field.
        let params: [UInt8] = [5, 0x0d, 0x00, 0x00, 0x00, 0x3f]  // field 1 (fixed32) = 0.5
        var net = SampleSpecs.network([.softmax, .softmax])
        net.layers[1].layer = .unsupported(fieldNumber: 1999)
        net.layers[1].unknownFields = [Spec.UnknownField(fieldNumber: 1999, wireType: .lengthDelimited, data: params)]
        let model = Spec.Model(specificationVersion: 4, type: .neuralNetwork(net))
        let bytes = try model.encode()
        let decoded = try Spec.Model.decode(bytes, fileName: "new-layer")
        let layer = try XCTUnwrap(decoded.neuralNetwork?.layers[1])
        XCTAssertEqual(layer.layer, .unsupported(fieldNumber: 1999))
        XCTAssertEqual(layer.layer.typeName, "field 1999")
        XCTAssertEqual(decoded.unknownFieldWarnings.count, 1)
        let warning = decoded.unknownFieldWarnings[0]
        XCTAssertTrue(warning.contains("\"layer1_softmax\""), warning)
        XCTAssertTrue(warning.contains("(field 1999)"), warning)
        XCTAssertEqual(try decoded.encode(), bytes)
    }

    func testLayerTypesWithoutACaseDecodeToGeneratedParameters() throws {
        // Apple's NonMaximumSuppression layer (field 1400): iouThreshold (1) = 0.5, maxBoxes (3) = 7.
        let params: [UInt8] = [7, 0x0d, 0x00, 0x00, 0x00, 0x3f, 0x18, 0x07]
        var net = SampleSpecs.network([.softmax, .softmax])
        net.layers[1].layer = .unsupported(fieldNumber: 1400)
        net.layers[1].unknownFields = [Spec.UnknownField(fieldNumber: 1400, wireType: .lengthDelimited, data: params)]
        let bytes = try Spec.Model(specificationVersion: 4, type: .neuralNetwork(net)).encode()
        let decoded = try Spec.Model.decode(bytes, fileName: "nms-layer")
        let layer = try XCTUnwrap(decoded.neuralNetwork?.layers[1])
        XCTAssertEqual(layer.layer, .other(.nonMaximumSuppression(.init(iouThreshold: 0.5, maxBoxes: 7))))
        XCTAssertEqual(layer.layer.typeName, "NonMaximumSuppression")
        XCTAssertEqual(layer.unknownFields, [])
        XCTAssertEqual(decoded.unknownFieldWarnings, [])
        XCTAssertEqual(try decoded.encode(), bytes)

        // Every member without a case of its own: an empty message decodes to `.other` with the
        // proto3 defaults and re-encodes to the same bytes.
        let typed = Set(SampleSpecs.everyLayer.map(\.fieldNumber))
        let others = Spec.LayerParameters.fieldNumbers.filter { !typed.contains($0) }
        XCTAssertGreaterThan(others.count, 60)
        for n in others {
            var net = SampleSpecs.network([.softmax])
            net.layers[0].layer = .unsupported(fieldNumber: n)
            net.layers[0].unknownFields = [Spec.UnknownField(fieldNumber: n, wireType: .lengthDelimited, data: [0])]
            let bytes = try Spec.Model(specificationVersion: 4, type: .neuralNetwork(net)).encode()
            let back = try Spec.Model.decode(bytes, fileName: "layer-\(n)")
            let layer = try XCTUnwrap(back.neuralNetwork?.layers.first)
            guard case let .other(p) = layer.layer else { XCTFail("field \(n): \(layer.layer)"); continue }
            XCTAssertEqual(p.fieldNumber, n)
            XCTAssertEqual(layer.layer.typeName, p.typeName)
            XCTAssertEqual(try back.encode(), bytes, p.typeName)
        }
    }

    func testNestedNetworksOfBranchLayersRoundTrip() throws {
        let inner = SampleSpecs.network([.add(alpha: 2), .other(.topK(.init(axis: -1, k: 3, useBottomK: true)))])
        let branch = Spec.LayerParameters.branch(.init(ifBranch: inner, elseBranch: SampleSpecs.network([.softmax])))
        let net = SampleSpecs.network([.other(branch), .other(.scatter(.init(axis: 1, mode: .scatterMax)))])
        let model = Spec.Model(specificationVersion: 4, type: .neuralNetwork(net))
        let bytes = try model.encode()
        let back = try Spec.Model.decode(bytes, fileName: "branch")
        XCTAssertEqual(back.neuralNetwork, net)
        XCTAssertEqual(back.unknownFieldWarnings, [])
        XCTAssertEqual(try back.encode(), bytes)
    }

    func testTruncatedBufferThrowsTypedError() throws {
        let bytes = try SampleSpecs.classifier.encode()
        for cut in [1, 10, bytes.count / 2, bytes.count - 1] {
            let truncated = Array(bytes.prefix(cut))
            XCTAssertThrowsError(try Spec.Model.decode(truncated, fileName: "cut.mlmodel"), "cut at \(cut)") { error in
                guard case let .notAModel(file, count, found)? = error as? CoreMLFormatError else {
                    return XCTFail("unexpected error \(error)")
                }
                XCTAssertEqual(file, "cut.mlmodel")
                XCTAssertEqual(count, cut)
                XCTAssertTrue(found.contains("truncated") || found.contains("remain"), found)
                XCTAssertTrue("\(error)".hasPrefix("cut.mlmodel: expected a Core ML model"), "\(error)")
            }
        }
    }

    func testMalformedInputsThrowTypedErrors() {
        let cases: [(String, [UInt8], String)] = [
            ("empty", [], "empty"),
            ("lfs", Array("version https://git-lfs.github.com/spec/v1\noid sha256:abc\n".utf8), "Git LFS"),
            ("hdf5", [0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a], "HDF5"),
            ("wrong wire type", [0x10, 0x01], "Model.description (field 2) at byte offset 0 has wire type varint"),
            ("field zero", [0x00, 0x01], "invalid field number 0"),
            ("no model fields", [0x98, 0x06, 0x01], "without any Core ML Model field"),
            ("nested", [0x12, 0x04, 0x0a, 0x02, 0x0a, 0x05], "Model.description.input"),
        ]
        for (name, bytes, expected) in cases {
            XCTAssertThrowsError(try Spec.Model.decode(bytes, fileName: name), name) { error in
                guard case let .notAModel(_, _, found)? = error as? CoreMLFormatError else {
                    return XCTFail("\(name): unexpected error \(error)")
                }
                XCTAssertTrue(found.contains(expected), "\(name): \(found)")
            }
        }
    }

    func testDeeplyNestedPipelinesAreRejectedBeforeProtobufC() throws {
        // 5000 nested pipelines: Model{pipeline{models{Model{pipeline{…}}}}}, built inside-out.
        var bytes: [UInt8] = [0x08, 0x01]
        func lengthDelimited(_ key: UInt8..., payload: [UInt8]) -> [UInt8] {
            var len = payload.count, varint: [UInt8] = []
            repeat { varint.append(UInt8(len & 0x7f) | (len > 0x7f ? 0x80 : 0)); len >>= 7 } while len > 0
            return key + varint + payload
        }
        for _ in 0..<5000 {
            let pipeline = lengthDelimited(0x0a, payload: bytes)      // Pipeline.models = 1
            bytes = lengthDelimited(0xd2, 0x0c, payload: pipeline)     // Model.pipeline = 202
        }
        XCTAssertThrowsError(try Spec.Model.decode(bytes, fileName: "deep")) { error in
            guard case let .notAModel(_, _, found)? = error as? CoreMLFormatError else { return XCTFail("\(error)") }
            XCTAssertTrue(found.contains("nested more than"), found)
        }
    }

    func testCorruptedBytesNeverCrash() throws {
        let original = try SampleSpecs.classifier.encode()
        var rng = SeededGenerator(seed: 7)
        var decodedCount = 0
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            do {
                let model = try Spec.Model.decode(bytes, fileName: "fuzz")
                _ = try? model.encode()
                decodedCount += 1
            } catch is CoreMLFormatError {
            } catch {
                XCTFail("untyped error \(error)")
            }
        }
        XCTAssertGreaterThan(decodedCount, 0)
    }

    func testFloat16ConversionMatchesSwiftFloat16() {
        #if arch(x86_64) || arch(arm64)
        for h in 0...UInt16.max {
            let ours = Spec.halfToFloat(h)
            let swift = Float(Float16(bitPattern: h))
            if swift.isNaN { XCTAssertTrue(ours.isNaN); continue }
            XCTAssertEqual(ours.bitPattern, swift.bitPattern, "half 0x\(String(h, radix: 16))")
        }
        var rng = SeededGenerator(seed: 3)
        let samples = (0..<20_000).map { _ in Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)) }
            + [0, -0, 1, 65504, 65519.99, 65520, 1e-8, 5.96e-8, 2.98e-8, -3.1e-5, .infinity, -.infinity]
        for f in samples where !f.isNaN {
            XCTAssertEqual(Spec.floatToHalf(f), Float16(f).bitPattern, "\(f)")
        }
        #endif
        XCTAssertEqual(Spec.encodeFloat16([1, -2, 0.5]), [0x00, 0x3c, 0x00, 0xc0, 0x00, 0x38])
        XCTAssertEqual(Spec.decodeFloat16([0x00, 0x3c, 0xff, 0x7b]), [1, 65504])
    }

    func testDequantization() {
        // 4-bit look-up table, MSB first: codes 1, 15, 0 → bytes 0x1f, 0x00.
        let lut = (0..<16).map { Float($0) * 0.5 }
        let w4 = Spec.WeightParams(rawValue: [0x1f, 0x00],
                                   quantization: .init(numberOfBits: 4, scheme: .lookupTable(lut)))
        XCTAssertEqual(w4.storage, .quantized)
        XCTAssertEqual(w4.dequantized(count: 3), [0.5, 7.5, 0])
        XCTAssertNil(w4.dequantized(count: 5), "too few bytes")
        // 8-bit linear, per channel (2 channels × 2 values).
        let w8 = Spec.WeightParams(rawValue: [0, 255, 10, 20],
                                   quantization: .init(numberOfBits: 8, scheme: .linear(scale: [1, 0.5], bias: [-1, 2])))
        XCTAssertEqual(w8.dequantized(count: 4), [-1, 254, 7, 12])
        // 3-bit values straddle byte boundaries: 5, 3, 7 → 101 011 11|1 → 0xaf, 0x80.
        let w3 = Spec.WeightParams(rawValue: [0xaf, 0x80],
                                   quantization: .init(numberOfBits: 3, scheme: .linear(scale: [1], bias: [])))
        XCTAssertEqual(w3.dequantized(count: 3), [5, 3, 7])
        let i8 = Spec.WeightParams(int8RawValue: [0xff, 0x02],
                                   quantization: .init(numberOfBits: 8, scheme: .linear(scale: [0.5], bias: [])))
        XCTAssertEqual(i8.dequantized(count: 2), [-0.5, 1])
        XCTAssertEqual(Spec.WeightParams([1, 2]).dequantized(count: 2), [1, 2])
        XCTAssertEqual(Spec.WeightParams(float16Value: Spec.encodeFloat16([1, 2])).floats, [1, 2])
    }

    func testEncodingRejectsNulInStrings() {
        let model = Spec.Model(specificationVersion: 1, description: .init(input: [.init(name: "a\u{0}b", type: nil)]))
        XCTAssertThrowsError(try model.encode()) { error in
            guard case let .cannotEncode(what, _)? = error as? CoreMLFormatError else { return XCTFail("\(error)") }
            XCTAssertTrue(what.contains("Model.description.input[0].name"), what)
        }
    }

    func testMLPackageErrors() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let pkg = dir.appendingPathComponent("m.mlpackage")
        try FileManager.default.createDirectory(at: pkg, withIntermediateDirectories: true)
        XCTAssertThrowsError(try Spec.Model.load(contentsOf: pkg.path)) { error in
            guard case .invalidPackage? = error as? CoreMLFormatError else { return XCTFail("\(error)") }
        }
        let manifest = #"{"fileFormatVersion":"1.0.0","itemInfoEntries":{"A":{"name":"model.mlmodel","path":"com.apple.CoreML/model.mlmodel"}},"rootModelIdentifier":"A"}"#
        try Data(manifest.utf8).write(to: pkg.appendingPathComponent("Manifest.json"))
        XCTAssertThrowsError(try Spec.Model.load(contentsOf: pkg.path)) { error in
            guard case let .invalidPackage(_, expected, _)? = error as? CoreMLFormatError else { return XCTFail("\(error)") }
            XCTAssertTrue(expected.contains("Data/com.apple.CoreML/model.mlmodel"), expected)
        }
        let modelDir = pkg.appendingPathComponent("Data/com.apple.CoreML")
        try FileManager.default.createDirectory(at: modelDir, withIntermediateDirectories: true)
        try SampleSpecs.pipeline.write(toFile: modelDir.appendingPathComponent("model.mlmodel").path)
        let read = try MLPackage.read(at: pkg.path)
        XCTAssertEqual(read.model.kind, .pipelineRegressor)
        XCTAssertNil(read.weightsPath)
    }
}
