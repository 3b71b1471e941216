// ML program writing and compression against coremltools 8.3
// (Fixtures/mlprogram_export/coremltools_check.json, Scripts/check_mlprogram_export.py):
// - the compressed weights of `mlconv quantize X.mlpackage` reach coremltools.optimize.coreml's
//   SQNR per tensor (equal for linear int8, uniform LUT and magnitude pruning; k-means ≥), and
//   our own reconstruction equals what coremltools decoded from our package;
// - the written package has the layout and spec coremltools loads.
import CoreMLFormat
import Foundation
import KerasFrontend
import MLGraph
import MLPasses
import TestSupport
import XCTest

final class MLProgramExportCompressionTests: XCTestCase {
    struct Check: Decodable {
        struct Row: Decodable {
            var weight: String
            var shape: [Int]
            var sqnr_coremltools: Double?
            var sqnr_mlconv_decoded_by_coremltools: Double?
        }
        struct Mode: Decodable { var mlconv_args: [String]; var weights: [Row] }
        struct Compression: Decodable { var fixture: String; var modes: [String: Mode] }
        struct Export: Decodable { var fixture: String; var precision: String; var loaded: Bool }
        var compression: Compression
        var exports: [Export]
    }

    static func check() throws -> Check {
        let url = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/mlprogram_export/coremltools_check.json")
        return try JSONDecoder().decode(Check.self, from: Data(contentsOf: url))
    }

    func exportedPackage(_ fixture: String, precision: MLProgramExportOptions.Precision,
                         target: MLProgramExportOptions.Target = .iOS15) throws -> String {
        let h5 = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/\(fixture)/model.h5")
        let graph = try KerasConverter().convert(modelAt: h5)
        let path = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("\(fixture).mlpackage").path
        try MLProgramExporter.write(graph, to: path, options: MLProgramExportOptions(target: target, precision: precision))
        return path
    }

    static let modes: [String: MILCompressionMode] = [
        "linear_int8": .linear(bits: 8, blockSize: nil),
        "palettize4_kmeans": .palettize(bits: 4, kmeans: true, groupSize: nil),
        "palettize4_uniform": .palettize(bits: 4, kmeans: false, groupSize: nil),
        "prune_magnitude_0.5": .prune(sparsity: 0.5, nOfM: nil),
        "linear_int8_ios18": .linear(bits: 8, blockSize: nil),
        "linear_int4_block32_ios18": .linear(bits: 4, blockSize: 32),
        "palettize4_kmeans_ios18": .palettize(bits: 4, kmeans: true, groupSize: nil),
        "palettize4_kmeans_group16_ios18": .palettize(bits: 4, kmeans: true, groupSize: 16),
        "palettize2_uniform_ios18": .palettize(bits: 2, kmeans: false, groupSize: nil),
        "prune_2of4_ios18": .prune(sparsity: 0.5, nOfM: (2, 4)),
        "prune_magnitude_0.75_ios18": .prune(sparsity: 0.75, nOfM: nil),
    ]

    func testCompressionMatchesCoremltoolsSQNRPerTensor() throws {
        let check = try Self.check()
        let sources = [
            "iOS15": try exportedPackage(check.compression.fixture, precision: .float32, target: .iOS15),
            "iOS18": try exportedPackage(check.compression.fixture, precision: .float32, target: .iOS18),
        ]
        XCTAssertEqual(Set(check.compression.modes.keys), Set(Self.modes.keys))
        for (key, mode) in Self.modes.sorted(by: { $0.key < $1.key }) {
            let recorded = try XCTUnwrap(check.compression.modes[key], key)
            let ios18 = key.hasSuffix("_ios18")
            let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("\(key).mlpackage").path
            let report = try MILWeightCompressor.compress(packageAt: sources[ios18 ? "iOS18" : "iOS15"]!, to: out, mode: mode)
            // coremltools leaves a tensor uncompressed (exact, recorded as null) where the mode
            // does not apply (e.g. 16 input channels and blocks of 32); so must we.
            XCTAssertEqual(Set(report.map(\.name)), Set(recorded.weights.filter { $0.sqnr_coremltools != nil }.map(\.weight)),
                           "\(key): the same tensors as coremltools")
            for row in recorded.weights {
                guard let theirs = row.sqnr_coremltools else { continue }
                let ours = try XCTUnwrap(report.first { $0.name == row.weight }, "\(key) \(row.weight)")
                let decoded = try XCTUnwrap(row.sqnr_mlconv_decoded_by_coremltools, "\(key) \(row.weight)")
                print("\(key) \(row.weight): mlconv \(ours.sqnr) dB, coremltools \(theirs) dB")
                XCTAssertEqual(ours.shape, row.shape)
                XCTAssertGreaterThanOrEqual(ours.sqnr, theirs - 0.01, "\(key) \(row.weight)")
                if !key.contains("kmeans") { XCTAssertEqual(ours.sqnr, theirs, accuracy: 0.01, "\(key) \(row.weight)") }
                XCTAssertEqual(ours.sqnr, decoded, accuracy: 0.01, "\(key) \(row.weight): our reconstruction vs coremltools decoding our package")
            }
            // The compressed program reads back with the opset the ops need.
            let model = try Spec.Model.load(contentsOf: out)
            XCTAssertEqual(model.specificationVersion, ios18 ? 9 : 7, key)
            let program = try XCTUnwrap(try model.mlProgram())
            XCTAssertEqual(program.functions["main"]?.opset, ios18 ? "CoreML8" : "CoreML6", key)
        }
    }

    func testIOS18ModeMovesAnIOS15ProgramToIOS18() throws {
        let src = try exportedPackage("fer_cnn_k2", precision: .float16, target: .iOS15)
        let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("x.mlpackage").path
        let report = try MILWeightCompressor.compress(packageAt: src, to: out, mode: .palettize(bits: 3, kmeans: true, groupSize: nil))
        XCTAssertEqual(report.count, 4)
        let model = try Spec.Model.load(contentsOf: out)
        XCTAssertEqual(model.specificationVersion, 9)
        let ops = try XCTUnwrap(try model.mlProgram()?.functions["main"]?.blockSpecializations["CoreML8"]?.operations)
        XCTAssertEqual(ops.filter { $0.type == "constexpr_lut_to_dense" }.count, 4)
    }

    func testRefusesInvalidRequestsWithTypedError() throws {
        let src = try exportedPackage("fer_cnn_k2", precision: .float32, target: .iOS15)
        let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("x.mlpackage").path
        for mode: MILCompressionMode in [.linear(bits: 3, blockSize: nil), .linear(bits: 8, blockSize: 0),
                                         .palettize(bits: 5, kmeans: true, groupSize: nil), .palettize(bits: 4, kmeans: true, groupSize: 0),
                                         .prune(sparsity: 1.5, nOfM: nil), .prune(sparsity: 0.5, nOfM: (5, 4))] {
            XCTAssertThrowsError(try MILWeightCompressor.compress(packageAt: src, to: out, mode: mode)) { error in
                guard case .unsupported = error as? MILCompressionError else { return XCTFail("\(error)") }
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
        }
        // Not an ML program.
        let nn = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("nn.mlpackage").path
        try MLPackageWriter.write(model: Spec.Model(specificationVersion: 4), weights: nil, to: nn)
        XCTAssertThrowsError(try MILWeightCompressor.compress(packageAt: nn, to: out, mode: .linear(bits: 8, blockSize: nil))) { error in
            guard case .invalidModel = error as? MILCompressionError else { return XCTFail("\(error)") }
        }
    }

    func testExportedPackagesAreTheOnesCoremltoolsLoaded() throws {
        let check = try Self.check()
        XCTAssertFalse(check.exports.isEmpty)
        for e in check.exports where e.precision == "fp16" {
            XCTAssertTrue(e.loaded, e.fixture)
            let path = try exportedPackage(e.fixture, precision: .float16)
            let pkg = try MLPackage.read(at: path)
            XCTAssertEqual(pkg.model.specificationVersion, 6)
            let program = try XCTUnwrap(try pkg.model.mlProgram())
            let main = try XCTUnwrap(program.functions["main"])
            XCTAssertEqual(main.opset, "CoreML5")
            let ops = main.blockSpecializations["CoreML5"]?.operations ?? []
            // fp16: the first op on each float input is a cast to fp16, the outputs cast back.
            XCTAssertTrue(ops.contains { $0.type == "cast" }, e.fixture)
            XCTAssertEqual(main.blockSpecializations["CoreML5"]?.outputs, pkg.model.description?.output.map(\.name))
        }
    }

    /// Regression: coremltools' layer_norm type inference fails on a beta without gamma
    /// (Keras LayerNormalization(scale=False)); the writer adds gamma = 1.
    func testLayerNormWithBetaAlsoHasGamma() throws {
        let path = try exportedPackage("norm_layers_k2", precision: .float32)
        let program = try XCTUnwrap(try MLPackage.read(at: path).model.mlProgram())
        let ops = program.functions["main"]?.blockSpecializations["CoreML5"]?.operations ?? []
        let norms = ops.filter { $0.type == "layer_norm" }
        XCTAssertFalse(norms.isEmpty)
        for op in norms where op.inputs["beta"] != nil {
            XCTAssertNotNil(op.inputs["gamma"], "layer_norm \(op.outputs.first?.name ?? "")")
        }
    }
}
