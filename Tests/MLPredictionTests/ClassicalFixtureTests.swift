// Parity of the numeric classical models (GLM, tree ensembles, SVM, kNN) with the fixtures of
// Scripts/make_classical_fixtures.py (scikit-learn 1.5.1 through coremltools 7.2; NumPy references
// where Core ML's .proto semantics differ), batch and single-row, plus real corpus models.
import CoreMLFormat
import Foundation
import TestSupport
import XCTest
@testable import MLPrediction

final class ClassicalFixtureTests: XCTestCase {
    /// The model types this suite covers (pipelines and feature engineering have their own suites).
    static let numericKinds: Set<String> = [
        "glmRegressor", "glmClassifier", "treeEnsembleRegressor", "treeEnsembleClassifier",
        "supportVectorRegressor", "supportVectorClassifier", "kNearestNeighborsClassifier",
    ]

    private struct Fixture {
        let name: String
        let model: any FeatureModel
        let inputs: [FeatureProvider]
        let expected: [[String: Any]]
        let relative: Double
        let absolute: Double
        /// Row → labels any of which is right (vote ties Core ML leaves unspecified).
        let ties: [Int: [String]]
    }

    /// Feature engineering, NMS, the recommender and pipelines (Models/*Model.swift of the
    /// `features` branch).
    static let featureKinds: Set<String> = [
        "oneHotEncoder", "featureVectorizer", "dictVectorizer", "arrayFeatureExtractor", "categoricalMapping",
        "normalizer", "scaler", "imputer", "identity", "nonMaximumSuppression", "itemSimilarityRecommender",
        "pipeline", "pipelineClassifier", "pipelineRegressor",
    ]

    /// Fixtures whose expected values contradict the .proto semantics of their own model file
    /// (none today: the one-hot and item-similarity fixtures were regenerated with Core ML's
    /// semantics; see their case.json notes).
    static let protoDisagreements: [String: String] = [:]

    /// Every fixture folder has a model type one of the two parity tests compares.
    func testEveryFixtureModelTypeIsCompared() throws {
        let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical")
        var seen = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() {
            guard let data = try? Data(contentsOf: root.appendingPathComponent(name).appendingPathComponent("case.json")) else { continue }
            let info = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
            let kind = try XCTUnwrap(info["model_type"] as? String, name)
            XCTAssertTrue(Self.numericKinds.contains(kind) || Self.featureKinds.contains(kind), "\(name): model type \(kind) is compared by no test")
            XCTAssertNil(Self.protoDisagreements[name], name)
            seen += 1
        }
        XCTAssertGreaterThanOrEqual(seen, 56)
    }

    private func fixtures(kinds: Set<String> = numericKinds) throws -> [Fixture] {
        let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical")
        let names = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
        var out: [Fixture] = []
        for name in names {
            let dir = root.appendingPathComponent(name)
            guard let caseData = try? Data(contentsOf: dir.appendingPathComponent("case.json")),
                  let info = try JSONSerialization.jsonObject(with: caseData) as? [String: Any],
                  let kind = info["model_type"] as? String, kinds.contains(kind),
                  Self.protoDisagreements[name] == nil else { continue }
            let spec = try Spec.Model.decode(Data(contentsOf: dir.appendingPathComponent("model.mlmodel")), fileName: name)
            let model = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: name))
            let inputs = try FeatureJSON.rows(from: Data(contentsOf: dir.appendingPathComponent("inputs.json")),
                                              description: spec.description, model: name)
            let expected = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("expected.json"))) as? [[String: Any]])
            let tol = info["tolerance"] as? [String: Any] ?? [:]
            var ties: [Int: [String]] = [:]
            for t in info["vote_ties"] as? [[String: Any]] ?? [] {
                if let r = t["row"] as? Int, let l = t["tied_labels"] as? [Any] { ties[r] = l.map { "\($0)" } }
            }
            out.append(Fixture(name: name, model: model, inputs: inputs, expected: expected,
                               relative: (tol["relative"] as? NSNumber)?.doubleValue ?? 1e-6,
                               absolute: (tol["absolute"] as? NSNumber)?.doubleValue ?? 1e-9, ties: ties))
        }
        return out
    }

    private func close(_ got: Double, _ want: Double, _ f: Fixture) -> Bool {
        if want.isNaN { return got.isNaN }
        return abs(got - want) <= f.absolute + f.relative * abs(want)
    }

    private func number(_ v: Any) -> Double? {
        if let s = v as? String { return Double(s) }
        return (v as? NSNumber)?.doubleValue
    }

    /// Compares every output the fixture records (others the model returns are not checked).
    private func compare(_ got: FeatureProvider, _ want: [String: Any], _ f: Fixture, row: Int, path: String) {
        let at = "\(f.name) \(path) row \(row)"
        for (key, w) in want {
            guard let g = got[key] else { XCTFail("\(at): output '\(key)' missing (got \(got.keys.sorted()))"); continue }
            switch g {
            case let .string(s):
                if let tied = f.ties[row] { XCTAssert(tied.contains(s), "\(at): \(key) = \(s), tied labels \(tied)") } else {
                    XCTAssertEqual(s, w as? String, "\(at): \(key)")
                }
            case let .int64(i):
                if let tied = f.ties[row] { XCTAssert(tied.contains(String(i)), "\(at): \(key) = \(i), tied labels \(tied)") } else {
                    XCTAssertEqual(i, (w as? NSNumber)?.int64Value, "\(at): \(key)")
                }
            case let .double(d):
                XCTAssert(number(w).map { close(d, $0, f) } ?? false, "\(at): \(key) = \(d), expected \(w)")
            case let .multiArray(a):
                let e = (w as? [Any]).map { flatten($0) } ?? number(w).map { [$0] } ?? []
                XCTAssertEqual(a.values.count, e.count, "\(at): \(key) count")
                for (x, y) in zip(a.values, e) { XCTAssert(close(x, y, f), "\(at): \(key) = \(a.values), expected \(e)") }
            case let .dictionary(d):
                guard let o = w as? [String: Any] else { XCTFail("\(at): \(key) expected \(w)"); continue }
                var gd: [String: Double] = [:]
                switch d {
                case let .stringKeys(s): gd = s
                case let .int64Keys(s): for (k, v) in s { gd[String(k)] = v }
                }
                XCTAssertEqual(Set(gd.keys), Set(o.keys), "\(at): \(key) keys")
                for (k, v) in o {
                    let e = number(v) ?? .nan
                    XCTAssert(close(gd[k] ?? .nan, e, f), "\(at): \(key)[\(k)] = \(gd[k] ?? .nan), expected \(e)")
                }
            case let .sequence(.string(q)):
                XCTAssertEqual(q, w as? [String], "\(at): \(key)")
            case let .sequence(.int64(q)):
                XCTAssertEqual(q, (w as? [NSNumber])?.map(\.int64Value), "\(at): \(key)")
            default:
                XCTFail("\(at): \(key) has unexpected type \(g.typeName)")
            }
        }
    }

    private func flatten(_ v: Any) -> [Double] {
        if let l = v as? [Any] { return l.flatMap(flatten) }
        return [number(v) ?? .nan]
    }

    func testNumericFixturesBatchAndSingleRow() throws {
        let all = try fixtures()
        let kinds = Set(all.map { "\(type(of: $0.model))" })
        XCTAssertGreaterThanOrEqual(all.count, 20, "numeric fixtures found: \(all.map(\.name))")
        XCTAssertEqual(kinds.count, 7, "every numeric model type has a fixture: \(kinds.sorted())")
        for f in all {
            XCTAssertEqual(f.inputs.count, f.expected.count, f.name)
            let batch = try f.model.predictions(from: f.inputs)
            XCTAssertEqual(batch.count, f.inputs.count, f.name)
            for (i, want) in f.expected.enumerated() where i < batch.count {
                compare(batch[i], want, f, row: i, path: "batch")
                compare(try f.model.prediction(from: f.inputs[i]), want, f, row: i, path: "single")
            }
        }
    }

    func testFeatureFixturesBatchAndSingleRow() throws {
        let all = try fixtures(kinds: Self.featureKinds)
        XCTAssertGreaterThanOrEqual(all.count, 20, "feature fixtures found: \(all.map(\.name))")
        for (name, reason) in Self.protoDisagreements.sorted(by: { $0.key < $1.key }) {
            print("ClassicalFixtureTests: fixture \(name) not compared: \(reason)")
        }
        for f in all {
            XCTAssertEqual(f.inputs.count, f.expected.count, f.name)
            let batch = try f.model.predictions(from: f.inputs)
            XCTAssertEqual(batch.count, f.inputs.count, f.name)
            for (i, want) in f.expected.enumerated() where i < batch.count {
                compare(batch[i], want, f, row: i, path: "batch")
                compare(try f.model.prediction(from: f.inputs[i]), want, f, row: i, path: "single")
            }
        }
    }

    // MARK: - Real models (../shared corpus)

    func testCorpusIrisSVMPredictsSetosaForASetosaRow() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/gavi_iris.mlmodel")
        let spec = try Spec.Model.decode(Data(contentsOf: url), fileName: url.lastPathComponent)
        XCTAssertEqual(spec.kind, .supportVectorClassifier)
        let model = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: url.lastPathComponent))
        // The input is declared with INVALID_ARRAY_DATA_TYPE: FeatureJSON reads it as double.
        let rows = try FeatureJSON.rows(from: Data(#"[{"data": [5.1, 3.5, 1.4, 0.2]}, {"data": [6.7, 3.0, 5.2, 2.3]}, {"data": [5.9, 2.8, 4.3, 1.3]}]"#.utf8),
                                        description: spec.description, model: "gavi_iris")
        let out = try model.predictions(from: rows)
        let labels = out.map { r -> String in if case let .string(s)? = r["Species"] { return s }; return "?" }
        XCTAssert(labels[0].lowercased().contains("setosa"), "iris row [5.1, 3.5, 1.4, 0.2] → \(labels[0])")
        XCTAssert(labels[1].lowercased().contains("virginica"), "iris row [6.7, 3.0, 5.2, 2.3] → \(labels[1])")
        XCTAssert(labels[2].lowercased().contains("versicolor"), "iris row [5.9, 2.8, 4.3, 1.3] → \(labels[2])")
        XCTAssertEqual(try model.prediction(from: rows[0])["Species"], out[0]["Species"])
    }

    func testCorpusEmptyUpdatableKNNReturnsItsDefaultLabel() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/cfinker_UpdatableKNN.mlmodel")
        let spec = try Spec.Model.decode(Data(contentsOf: url), fileName: url.lastPathComponent)
        guard case let .kNearestNeighborsClassifier(p)? = try spec.classicalParameters() else { return XCTFail("not a kNN") }
        guard case let .defaultStringLabel(label)? = p.defaultClassLabel else { return XCTFail("no default string label") }
        XCTAssertEqual(p.nearestNeighborsIndex?.floatSamples.count, 0)
        let model = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: url.lastPathComponent))
        let out = try model.prediction(from: ["input": .multiArray(MultiArray(vector: [Double](repeating: 0.5, count: 21), dataType: .float32))])
        XCTAssertEqual(out["output"], .string(label))
        XCTAssertEqual(out["outputProbs"], .dictionary(.stringKeys([:])))
    }
}
