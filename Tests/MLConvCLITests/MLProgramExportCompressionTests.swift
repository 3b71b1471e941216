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

    func exportedPackage(_ fixture: String, precision: MLProgramExportOptions.Precision) throws -> String {
        let h5 = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/\(fixture)/model.h5")
        let graph = try KerasConverter().convert(modelAt: h5)
        let path = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("\(fixture).mlpackage").path
        try MLProgramExporter.write(graph, to: path, options: MLProgramExportOptions(precision: precision))
        return path
    }

    func testCompressionMatchesCoremltoolsSQNRPerTensor() throws {
        let check = try Self.check()
        let src = try exportedPackage(check.compression.fixture, precision: .float32)
        let modes: [String: MILCompressionMode] = [
            "linear_int8": .linear(bits: 8, blockSize: nil),
            "palettize4_kmeans": .palettize(bits: 4, kmeans: true, groupSize: nil),
            "palettize4_uniform": .palettize(bits: 4, kmeans: false, groupSize: nil),
            "prune_magnitude_0.5": .prune(sparsity: 0.5, nOfM: nil),
        ]
        XCTAssertEqual(Set(check.compression.modes.keys), Set(modes.keys))
        for (key, mode) in modes.sorted(by: { $0.key < $1.key }) {
            let recorded = try XCTUnwrap(check.compression.modes[key], key)
            let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("\(key).mlpackage").path
            let report = try MILWeightCompressor.compress(packageAt: src, to: out, mode: mode)
            XCTAssertEqual(Set(report.map(\.name)), Set(recorded.weights.map(\.weight)), "\(key): the same tensors as coremltools")
            for row in recorded.weights {
                guard let ours = report.first(where: { $0.name == row.weight }) else { continue }
                let theirs = try XCTUnwrap(row.sqnr_coremltools, "\(key) \(row.weight)")
                let decoded = try XCTUnwrap(row.sqnr_mlconv_decoded_by_coremltools, "\(key) \(row.weight)")
                print("\(key) \(row.weight): mlconv \(ours.sqnr) dB, coremltools \(theirs) dB")
                XCTAssertEqual(ours.shape, row.shape)
                XCTAssertGreaterThanOrEqual(ours.sqnr, theirs - 0.01, "\(key) \(row.weight)")
                if !key.contains("kmeans") { XCTAssertEqual(ours.sqnr, theirs, accuracy: 0.01, "\(key) \(row.weight)") }
                XCTAssertEqual(ours.sqnr, decoded, accuracy: 0.01, "\(key) \(row.weight): our reconstruction vs coremltools decoding our package")
            }
            // The compressed program reads back and names the iOS16 opset.
            let model = try Spec.Model.load(contentsOf: out)
            XCTAssertEqual(model.specificationVersion, 7)
            let program = try XCTUnwrap(try model.mlProgram())
            XCTAssertEqual(program.functions["main"]?.opset, "CoreML6")
        }
    }

    func testRefusesIOS18ModesWithTypedError() throws {
        let src = try exportedPackage("fer_cnn_k2", precision: .float32)
        let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("x.mlpackage").path
        for mode: MILCompressionMode in [.linear(bits: 4, blockSize: nil), .linear(bits: 8, blockSize: 32),
                                         .palettize(bits: 4, kmeans: true, groupSize: 16), .prune(sparsity: 0.5, nOfM: (2, 4))] {
            XCTAssertThrowsError(try MILWeightCompressor.compress(packageAt: src, to: out, mode: mode)) { error in
                guard case .unsupported = error as? MILCompressionError else { return XCTFail("\(error)") }
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: out))
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
}
