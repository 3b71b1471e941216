// MIL ops of issue 11, group A (Scripts/make_mlprogram_fixtures_a.py): the classify op's label
// and probability dictionary through the feature API (Fixtures/mlprogram_classifier: a Keras
// softmax model converted by coremltools with string labels, and a Builder program with int64
// classes), the ops' fixtures present in Fixtures/mlprogram (MILProgramRunTests checks their
// parity), options mlconv refuses reported as typed errors (Fixtures/mlprogram_refused_a), and
// corrupted packages of these ops refused or run, never trapping.
import CoreMLFormat
import Foundation
import MLGraph
import MLPrediction
import MLRuntime
import TestSupport
import XCTest

final class MILMoreATests: XCTestCase {
    private struct ClassifierCase: Decodable {
        var inputs: [String]
        var label_output: String
        var probabilities_output: String
        var labels: [String]
        var expected_label: String
    }

    private func root(_ dir: String) -> URL { TestPaths.repositoryRoot.appendingPathComponent(dir) }

    private func load(_ package: URL) throws -> any FeatureModel {
        let spec = try Spec.Model.load(contentsOf: package.path)
        return try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: package.lastPathComponent, threadCount: 1,
                                                                          modelPath: try ModelLoadContext.modelDirectory(of: package)))
    }

    func testClassifyGivesTheLabelAndTheProbabilityDictionary() throws {
        for name in ["keras_strings", "builder_int64"] {
            let d = root("Fixtures/mlprogram_classifier/\(name)")
            let c = try JSONDecoder().decode(ClassifierCase.self, from: Data(contentsOf: d.appendingPathComponent("case.json")))
            let model = try load(d.appendingPathComponent("model.mlpackage"))
            var inputs: FeatureProvider = [:]
            for i in c.inputs {
                let a = try NPY.read(contentsOf: d.appendingPathComponent("input_\(i).npy"))
                inputs[i] = .multiArray(try MultiArray(shape: a.shape, dataType: .float32, values: a.scalars.map(Double.init)))
            }
            let out = try model.prediction(from: inputs)
            let expected = try NPY.read(contentsOf: d.appendingPathComponent("expected_probabilities.npy")).scalars
            XCTAssertEqual(expected.count, c.labels.count, name)
            let scale = Double(expected.max() ?? 1)
            switch (out[c.label_output], out[c.probabilities_output]) {
            case let (.string(label)?, .dictionary(.stringKeys(probs))?):
                XCTAssertEqual(name, "keras_strings")
                XCTAssertEqual(label, c.expected_label, name)
                XCTAssertEqual(Set(probs.keys), Set(c.labels), name)
                for (l, p) in zip(c.labels, expected) { XCTAssertLessThanOrEqual(abs((probs[l] ?? -1) - Double(p)) / scale, 1e-4, "\(name) \(l)") }
            case let (.int64(label)?, .dictionary(.int64Keys(probs))?):
                XCTAssertEqual(name, "builder_int64")
                XCTAssertEqual(String(label), c.expected_label, name)
                XCTAssertEqual(Set(probs.keys.map(String.init)), Set(c.labels), name)
                for (l, p) in zip(c.labels, expected) {
                    XCTAssertLessThanOrEqual(abs((probs[Int64(l) ?? -1] ?? -1) - Double(p)) / scale, 1e-4, "\(name) \(l)")
                }
            default:
                XCTFail("\(name): outputs \(out.keys.sorted()) are not a label and a probability dictionary of the labels' type")
            }
        }
    }

    /// The importer's graph describes the classifier as the NeuralNetwork importer does.
    func testClassifyFillsTheGraphsClassifierDescription() throws {
        let d = root("Fixtures/mlprogram_classifier/keras_strings")
        let c = try JSONDecoder().decode(ClassifierCase.self, from: Data(contentsOf: d.appendingPathComponent("case.json")))
        let pkg = d.appendingPathComponent("model.mlpackage")
        let g = try MILImporter.importModel(try Spec.Model.load(contentsOf: pkg.path), fileName: "keras_strings",
                                            modelPath: try ModelLoadContext.modelDirectory(of: pkg)).graph
        XCTAssertEqual(g.description.classLabels, c.labels)
        XCTAssertEqual(g.description.probabilitiesOutput, c.probabilities_output)
        XCTAssertEqual(g.description.metadata.userDefined["mlconv.classLabelOutput"], c.label_output)
        XCTAssertEqual(g.outputs, [c.probabilities_output])
    }

    func testOpFixturesArePresent() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: root("Fixtures/mlprogram").path)
        for n in ["opa_gru_seq", "opa_gru_reverse_last", "opa_gru_relu_seq_reverse", "opa_rnn_seq", "opa_rnn_reverse_last",
                  "opa_l2_pool_2d_custom", "opa_l2_pool_2d_valid", "opa_l2_pool_1d_same", "opa_resize_bilinear_offset_corners",
                  "opa_resize_bilinear_rank3", "opa_resize_ios17_linear", "opa_resize_ios17_offset_keep", "opa_resize_ios17_nearest_1d",
                  "opa_crop_resize_strict", "opa_crop_resize_align_index", "opa_resample_minus_one_zero_pad", "opa_resample_unnormalized_border",
                  "opa_resample_zero_to_one_pad_value", "opa_affine_shared", "opa_affine_per_image",
                  // MARK: crop_resize pad_value, resample nearest / reflection / symmetric
                  "opa_crop_resize_pad_value_align", "opa_crop_resize_ios17_indices", "opa_crop_resize_ios17_pad_value", "opa_crop_resize_ios17_default_indices",
                  "opa_crop_resize_pad_value_strict_pixels", "opa_resample_nearest_constant",
                  "opa_resample_nearest_border", "opa_resample_nearest_reflection", "opa_resample_nearest_symmetric",
                  "opa_resample_bilinear_reflection", "opa_resample_bilinear_symmetric"] {
            XCTAssertTrue(names.contains(n), n)
        }
        let table = Dictionary(MILOpTable.status.map { ($0.op, $0.supported) }, uniquingKeysWith: { a, _ in a })
        for op in ["gru", "rnn", "l2_pool", "resize", "resize_bilinear", "classify", "crop_resize", "resample", "affine"] { XCTAssertEqual(table[op], true, op) }
    }

    func testRefusedOptionsAreTypedErrors() throws {
        let dir = root("Fixtures/mlprogram_refused_a")
        let cases = [("l2_pool_ceil_mode", "l2_pool", "ceil_mode"), ("resize_nearest_align_corners", "resize", "NEAREST_NEIGHBOR"),
                     ("crop_resize", "crop_resize", "sampling_mode DEFAULT"), ("resize_bilinear_offset_huge", "resize_bilinear", "exceed")]
        for (name, op, words) in cases {
            let pkg = dir.appendingPathComponent("\(name)/model.mlpackage")
            let spec = try Spec.Model.load(contentsOf: pkg.path)
            XCTAssertThrowsError(try MILImporter.importModel(spec, fileName: name, modelPath: try ModelLoadContext.modelDirectory(of: pkg))) { e in
                guard case let CoreMLImportError.unsupportedLayers(file, problems) = e else { return XCTFail("\(name): \(e)") }
                XCTAssertEqual(file, name)
                let p = problems.first { $0.type == op }
                XCTAssertNotNil(p, "\(name): \(problems)")
                XCTAssertTrue(p?.reason.contains(words) ?? false, "\(name): \(p?.reason ?? "")")
            }
        }
    }

    /// Corrupted program bytes of these ops' packages import with a typed error or run.
    func testCorruptedPackagesNeverCrash() throws {
        var random = MutationRandom(state: 777)
        for (dir, inputs) in [("mlprogram/opa_gru_seq", ["x_in", "h_in"]), ("mlprogram/opa_l2_pool_2d_custom", ["x_in"]),
                              ("mlprogram/opa_resize_ios17_offset_keep", ["x_in"]), ("mlprogram_classifier/keras_strings", ["features"]),
                              ("mlprogram/opa_resample_minus_one_zero_pad", ["x_in", "coords_in"]), ("mlprogram/opa_affine_per_image", ["x_in", "m_in"]),
                              ("mlprogram/opa_crop_resize_strict", ["x_in", "roi_in"])] {
            let src = root("Fixtures/\(dir)/model.mlpackage")
            var feeds: [String: NDArray] = [:]
            for i in inputs { feeds[i] = try NPY.read(contentsOf: src.deletingLastPathComponent().appendingPathComponent("input_\(i).npy")) }
            let outcomes = try runMutatedPackages(src, files: ["Data/com.apple.CoreML/model.mlmodel"], iterations: 25, random: &random, feeds: feeds)
            XCTAssertEqual(outcomes.ran + outcomes.refused, 25, dir)
        }
    }
}
