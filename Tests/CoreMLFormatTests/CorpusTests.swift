// Decodes every model in ../shared/corpus/mlmodel and checks it against MANIFEST.md (which
// coremltools' own protobuf classes produced). Skipped, visibly, when the corpus is absent.
@testable import CoreMLFormat
import Foundation
import TestSupport
import XCTest

/// What MANIFEST.md says about one corpus entry.
struct CorpusExpectation {
    var name: String
    var notAModel = false
    var specVersion: Int32?
    var kind: String?
    var isUpdatable = false
    /// Layer type histogram of a neural network (from "N layers [a×n, …]").
    var layers: [String: Int]?
    var layerCount: Int?
    /// Kinds of pipeline stages in pre-order (nested pipelines included), from "kind(spec N)".
    var stages: [(kind: String, spec: Int32)] = []

    /// Parses the Core ML table of MANIFEST.md.
    static func parse(_ manifest: String) -> [String: CorpusExpectation] {
        var out: [String: CorpusExpectation] = [:]
        var inCoreML = false
        for line in manifest.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inCoreML = line.contains("Core ML") }
            guard inCoreML, line.hasPrefix("| `") else { continue }
            let cols = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cols.count > 9 else { continue }
            let name = cols[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let what = cols[8]
            var e = CorpusExpectation(name: name)
            e.notAModel = what.contains("NOT a Core ML protobuf")
            if let v = firstMatch(#"specVersion \*\*(\d+)\*\*"#, in: what) { e.specVersion = Int32(v) }
            e.kind = firstMatch(#"type \*\*(\w+)\*\*"#, in: what)
            e.isUpdatable = what.contains("**, isUpdatable")
            if let n = firstMatch(#"(?:neuralNetwork|neuralNetworkClassifier|neuralNetworkRegressor): (\d+) layers"#, in: what),
               let list = firstMatch(#"\d+ layers \[([^\]]*)\]"#, in: what), !list.contains("…") {
                e.layerCount = Int(n)
                var h: [String: Int] = [:]
                for item in list.components(separatedBy: ", ") {
                    let parts = item.components(separatedBy: "×")
                    if parts.count == 2, let c = Int(parts[1]) { h[parts[0]] = c }
                }
                e.layers = h
            }
            let re = try! NSRegularExpression(pattern: #"(\w+)\(spec (\d+)\)"#)
            for m in re.matches(in: what, range: NSRange(what.startIndex..., in: what)) {
                let kind = String(what[Range(m.range(at: 1), in: what)!])
                let spec = Int32(what[Range(m.range(at: 2), in: what)!])!
                e.stages.append((kind, spec))
            }
            out[name] = e
        }
        return out
    }

    private static func firstMatch(_ pattern: String, in s: String) -> String? {
        let re = try! NSRegularExpression(pattern: pattern)
        guard let m = re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)), m.numberOfRanges > 1,
              let r = Range(m.range(at: 1), in: s) else { return nil }
        return String(s[r])
    }
}

final class CorpusTests: XCTestCase {
    private func corpus() throws -> (URL, [String: CorpusExpectation]) {
        let dir = try TestPaths.sharedFile("corpus/mlmodel")
        let manifestURL = dir.deletingLastPathComponent().appendingPathComponent("MANIFEST.md")
        let manifest = (try? String(contentsOf: manifestURL, encoding: .utf8)) ?? ""
        return (dir, CorpusExpectation.parse(manifest))
    }

    /// Pre-order list of (kind, spec version) of all pipeline stages below `model`.
    private func stages(_ model: Spec.Model) -> [(String, Int32)] {
        model.pipelineModels.flatMap { [($0.kind?.name ?? "none", $0.specificationVersion)] + stages($0) }
    }

    func testEveryCorpusFileDecodesOrFailsCleanly() throws {
        let (dir, expectations) = try corpus()
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertGreaterThanOrEqual(names.count, 30)
        var report: [String] = []
        var checked = 0, checkedLayers = 0, checkedStages = 0
        for name in names {
            let path = dir.appendingPathComponent(name).path
            let e = expectations[name]
            if e == nil { report.append("\(name): not in MANIFEST.md, only decoded") }
            do {
                let model = try Spec.Model.load(contentsOf: path)
                let original = try? Data(contentsOf: URL(fileURLWithPath: name.hasSuffix(".mlpackage")
                    ? path + "/Data/com.apple.CoreML/model.mlmodel" : path))
                let identical = try original.map { [UInt8]($0) == (try model.encode()) } ?? false
                XCTAssertFalse(e?.notAModel ?? false, "\(name): MANIFEST says it is not a model, yet it decoded")
                let kind = model.kind?.name ?? "none"
                report.append("\(name): spec \(model.specificationVersion), \(kind), "
                    + "\(model.unknownFieldWarnings.count) warning(s), "
                    + (identical ? "re-encodes byte-identical" : "re-encodes equal (bytes differ)")
                    + model.unknownFieldWarnings.prefix(3).map { "\n      " + $0 }.joined())
                guard let e else { continue }
                XCTAssertTrue(identical, "\(name): re-encoding changed the bytes")
                checked += 1
                if e.layers != nil { checkedLayers += 1 }
                if !e.stages.isEmpty { checkedStages += 1 }
                if let v = e.specVersion { XCTAssertEqual(model.specificationVersion, v, name) }
                if let k = e.kind { XCTAssertEqual(kind, k, name) }
                XCTAssertEqual(model.isUpdatable, e.isUpdatable, name)
                if let expected = e.layers {
                    let layers = try XCTUnwrap(model.neuralNetwork?.layers, name)
                    var h: [String: Int] = [:]
                    for l in layers { h[l.layer.typeName, default: 0] += 1 }
                    XCTAssertEqual(h, expected, name)
                    XCTAssertEqual(layers.count, e.layerCount, name)
                    for l in layers {
                        if case let .unsupported(n) = l.layer { XCTFail("\(name): layer \(l.name) unsupported (\(n))") }
                    }
                }
                if !e.stages.isEmpty {
                    let got = stages(model)
                    XCTAssertEqual(got.map(\.0), e.stages.map(\.kind), "\(name) pipeline stages")
                    XCTAssertEqual(got.map(\.1), e.stages.map(\.spec), "\(name) pipeline stage versions")
                }
                // Re-encoding keeps everything, including content mlconv does not interpret.
                let again = try Spec.Model.decode(try model.encode(), fileName: name + " (re-encoded)")
                XCTAssertEqual(again, model, "\(name): decode(encode(model)) != model")
            } catch let error as CoreMLFormatError {
                report.append("\(name): \(error)")
                XCTAssertTrue(e?.notAModel ?? false, "\(name): unexpected error \(error)")
                guard case let .notAModel(file, _, found) = error else {
                    XCTFail("\(name): expected notAModel, got \(error)")
                    continue
                }
                XCTAssertEqual(file, path)
                XCTAssertFalse(found.isEmpty)
            }
        }
        print("corpus report:\n  " + report.joined(separator: "\n  "))
        print("checked against MANIFEST.md: \(checked) models, \(checkedLayers) layer histograms, "
            + "\(checkedStages) pipelines")
        if !expectations.isEmpty {
            XCTAssertGreaterThanOrEqual(checked, 29, "MANIFEST.md rows not matched to files")
            XCTAssertGreaterThanOrEqual(checkedLayers, 10, "MANIFEST.md layer lists not parsed")
            XCTAssertGreaterThanOrEqual(checkedStages, 8, "MANIFEST.md pipeline stages not parsed")
        }
    }

    func testMLPackagesFindTheRootModel() throws {
        let (dir, _) = try corpus()
        let packages = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".mlpackage") }
        XCTAssertEqual(packages.count, 2)
        for name in packages {
            let pkg = try MLPackage.read(at: dir.appendingPathComponent(name).path)
            XCTAssertTrue(pkg.rootModelPath.hasSuffix("Data/com.apple.CoreML/model.mlmodel"), pkg.rootModelPath)
            XCTAssertEqual(pkg.model.kind, .mlProgram, name)
            XCTAssertEqual(pkg.model.specificationVersion, 6, name)
            XCTAssertNotNil(pkg.weightsPath, name)
            // The ML program is decoded in full (MIL.proto): nothing is left unknown.
            XCTAssertFalse(pkg.model.unknownFieldWarnings.contains { $0.contains("mlProgram") }, name)
            XCTAssertNotNil(try pkg.model.mlProgram(file: name), name)
        }
    }

    func testBookmarkFileIsRejectedWithItsCause() throws {
        let (dir, _) = try corpus()
        let path = dir.appendingPathComponent("nbnitin_ObjectDetector.mlmodel").path
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("skipped: \(path) not found") }
        XCTAssertThrowsError(try Spec.Model.load(contentsOf: path)) { error in
            guard case let .notAModel(file, count, found)? = error as? CoreMLFormatError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(file, path)
            XCTAssertEqual(count, 932)
            XCTAssertTrue(found.contains("bookmark"), found)
            XCTAssertTrue("\(error)".contains("Re-export"), "\(error)")
        }
    }

    func testUnknownLayerContentIsReportedForNeuralNetworksOnlyWhenPresent() throws {
        let (dir, _) = try corpus()
        // Updatable networks carry NetworkUpdateParameters: kept verbatim, decoded on demand
        // (updateParameters()), so no warning.
        let path = dir.appendingPathComponent("jacopo_keras_model_personalization.mlmodel").path
        guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("skipped: \(path) not found") }
        let model = try Spec.Model.load(contentsOf: path)
        XCTAssertNotNil(model.neuralNetwork?.updateParams)
        XCTAssertFalse(model.unknownFieldWarnings.contains { $0.contains("updateParams") }, "\(model.unknownFieldWarnings)")
        XCTAssertEqual(try model.neuralNetwork?.updateParameters()?.lossLayers.count, 1)
    }

    /// The same network stored as fp16, 8-bit linear and 4-bit look-up-table weights: our
    /// dequantization (MSB-first bit unpacking, per-channel scale/bias, LUT) must agree with the
    /// fp16 values to within the quantization step.
    func testQuantizedWeightsDequantizeToTheFp16Values() throws {
        let (dir, _) = try corpus()
        func convWeights(_ file: String) throws -> [(String, Spec.WeightParams, Int)] {
            let path = dir.appendingPathComponent(file).path
            guard FileManager.default.fileExists(atPath: path) else { throw XCTSkip("skipped: \(path) not found") }
            let layers = try XCTUnwrap(Spec.Model.load(contentsOf: path).neuralNetwork?.layers)
            return layers.compactMap { l in
                guard case let .convolution(c) = l.layer, let w = c.weights else { return nil }
                let count = Int(c.outputChannels * c.kernelChannels * c.kernelSize.reduce(1, *))
                return (l.name, w, count)
            }
        }
        let fp16 = try convWeights("kingreza_food_fp16.mlmodel")
        XCTAssertEqual(fp16.count, 26)
        for (file, levels) in [("kingreza_food_linear_8bit.mlmodel", 255), ("kingreza_food_kmeans_lut_4bit.mlmodel", 15)] {
            let quantized = try convWeights(file)
            XCTAssertEqual(quantized.map(\.0), fp16.map(\.0), file)
            for ((name, ref, count), (_, q, qCount)) in zip(fp16, quantized) {
                XCTAssertEqual(count, qCount)
                XCTAssertEqual(q.storage, .quantized, "\(file) \(name)")
                let expected = try XCTUnwrap(ref.floats, name)
                XCTAssertEqual(expected.count, count, name)
                let got = try XCTUnwrap(q.dequantized(count: count), "\(file) \(name): inconsistent quantization")
                if case let .lookupTable(lut)? = q.quantization?.scheme {
                    // k-means assigns each weight its nearest centroid: with the right bit order
                    // nearly every dequantized value is the table entry nearest the fp16 value
                    // (fp16 rounding of the reference may flip a few ties).
                    let nearest = expected.map { v in lut.min { abs($0 - v) < abs($1 - v) }! }
                    let agree = zip(nearest, got).filter { abs($0 - $1) <= 1e-3 * max(1, abs($0)) }.count
                    XCTAssertGreaterThanOrEqual(Double(agree) / Double(count), 0.99, "\(file) \(name)")
                    XCTAssertEqual(lut.count, 1 << Int(q.quantization?.numberOfBits ?? 0), "\(file) \(name)")
                } else {
                    // Linear: at most half a step of the widest channel (plus fp16 rounding).
                    let range = expected.max()! - expected.min()!
                    XCTAssertLessThanOrEqual(maxAbsDiff(got, expected), range / Float(levels) + 1e-3, "\(file) \(name)")
                }
            }
        }
    }
}
