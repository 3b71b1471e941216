// The numeric classical models on hand-built parameters against Fixtures/numeric-reference/cases.json
// (Scripts/make_numeric_reference.py: NumPy evaluations of the .proto formulas, scikit-learn's
// LibSVM for SVMs), plus the load-time validation of damaged parameters.
import CoreMLFormat
import Foundation
import TestSupport
import XCTest
@testable import MLPrediction

final class NumericModelTests: XCTestCase {
    private struct Case {
        let name: String
        let kind: String
        let params: [String: Any]
        let inputs: [[Double]]
        let expected: [[String: Any]]
    }

    private static func number(_ v: Any?) -> Double {
        if let s = v as? String, s == "nan" { return .nan }
        return (v as? NSNumber)?.doubleValue ?? .nan
    }

    private func cases() throws -> [Case] {
        let url = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/numeric-reference/cases.json")
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return try XCTUnwrap(root["cases"] as? [[String: Any]]).map { c in
            Case(name: c["name"] as? String ?? "?", kind: c["kind"] as? String ?? "?",
                 params: c["params"] as? [String: Any] ?? [:],
                 inputs: (c["inputs"] as? [[Any]] ?? []).map { $0.map(Self.number) },
                 expected: c["expected"] as? [[String: Any]] ?? [])
        }
    }

    private func doubles(_ v: Any?) -> [Double] { (v as? [Any] ?? []).map(Self.number) }
    private func matrix(_ v: Any?) -> [[Double]] { (v as? [Any] ?? []).map(doubles) }
    private func labels(_ v: Any?) -> ClassLabels? {
        if let s = v as? [String] { return .strings(s) }
        if let n = v as? [NSNumber] { return .int64s(n.map(\.int64Value)) }
        return nil
    }

    /// Input "x": a double multiArray of `width`; outputs "y" (regressors) or "label" + "probs".
    private func signature(width: Int, labels: ClassLabels?, outputs: Int = 1) -> FeatureSignature {
        var out: [Spec.FeatureDescription]
        switch labels {
        case nil:
            out = [.init(name: "y", type: outputs == 1 ? .init(.double) : .init(.multiArray(.init(shape: [Int64(outputs)], dataType: .double))))]
        case .strings?:
            out = [.init(name: "label", type: .init(.string)), .init(name: "probs", type: .init(.dictionary(.init(keyType: .string))))]
        case .int64s?:
            out = [.init(name: "label", type: .init(.int64)), .init(name: "probs", type: .init(.dictionary(.init(keyType: .int64))))]
        }
        let d = Spec.ModelDescription(input: [.init(name: "x", type: .init(.multiArray(.init(shape: [Int64(width)], dataType: .double))))],
                                      output: out, predictedFeatureName: labels == nil ? "y" : "label",
                                      predictedProbabilitiesName: labels == nil ? "" : "probs")
        return FeatureSignature(modelName: "reference", description: d)
    }

    private func kernel(_ j: [String: Any]) -> SVMKernel {
        let g = Self.number(j["gamma"]), c = Self.number(j["c"])
        switch j["type"] as? String {
        case "rbf": return .rbf(gamma: g)
        case "poly": return .polynomial(gamma: g, c: c, degree: Int32((j["degree"] as? NSNumber)?.intValue ?? 0))
        case "sigmoid": return .sigmoid(gamma: g, c: c)
        default: return .linear
        }
    }

    private func vectors(_ p: [String: Any]) -> SVMSupportVectors {
        let v = matrix(p["vectors"])
        guard p["sparse"] as? Bool == true else { return .dense(v) }
        return .sparse(v.map { r in r.enumerated().compactMap { $1 == 0 ? nil : SVMSparseEntry(index: Int32($0 + 1), value: $1) } })
    }

    private func treeParameters(_ p: [String: Any]) -> TreeEnsembleParameters {
        let behaviors: [String: TreeEnsembleParameters.Behavior] = [
            "lessThanEqual": .lessThanEqual, "lessThan": .lessThan, "greaterThanEqual": .greaterThanEqual,
            "greaterThan": .greaterThan, "equal": .equal, "notEqual": .notEqual, "leaf": .leaf]
        let transforms: [String: TreeEnsembleParameters.Transform] = [
            "none": .none, "softmax": .softmax, "logistic": .logistic, "softmaxWithZeroClassReference": .softmaxWithZeroClassReference]
        let nodes = (p["nodes"] as? [[Any]] ?? []).map { n -> TreeEnsembleParameters.Node in
            let u = { (i: Int) in UInt64((n[i] as? NSNumber)?.intValue ?? 0) }
            let ev = (n[8] as? [[Any]] ?? []).map { TreeEnsembleParameters.Evaluation(index: UInt64(($0[0] as? NSNumber)?.intValue ?? 0), value: Self.number($0[1])) }
            return .init(treeId: u(0), nodeId: u(1), behavior: behaviors[n[2] as? String ?? ""] ?? .leaf, featureIndex: u(3),
                         threshold: Self.number(n[4]), trueChild: u(5), falseChild: u(6),
                         missingTracksTrue: (n[7] as? Bool) ?? false, evaluation: ev)
        }
        return TreeEnsembleParameters(nodes: nodes, numPredictionDimensions: UInt64((p["dims"] as? NSNumber)?.intValue ?? 0),
                                      basePrediction: doubles(p["base"]), transform: transforms[p["transform"] as? String ?? ""] ?? .none)
    }

    private func model(_ c: Case) throws -> any FeatureModel {
        let p = c.params
        let width = c.inputs.first?.count ?? 0
        switch c.kind {
        case "glmRegressor":
            let t: GLMRegressorParameters.Transform = ["logit": .logit, "probit": .probit][p["transform"] as? String ?? ""] ?? .none
            let w = matrix(p["weights"])
            return try GLMRegressorModel(.init(weights: w, offsets: doubles(p["offsets"]), transform: t),
                                         signature: signature(width: width, labels: nil, outputs: w.count))
        case "glmClassifier":
            let l = try XCTUnwrap(labels(p["labels"]))
            return try GLMClassifierModel(.init(weights: matrix(p["weights"]), offsets: doubles(p["offsets"]),
                                                transform: p["transform"] as? String == "probit" ? .probit : .logit,
                                                encoding: p["encoding"] as? String == "oneVsRest" ? .oneVsRest : .referenceClass, labels: l),
                                          signature: signature(width: width, labels: l))
        case "treeEnsembleRegressor":
            let tp = treeParameters(p)
            return try TreeEnsembleRegressorModel(tp, signature: signature(width: width, labels: nil, outputs: Int(tp.numPredictionDimensions)))
        case "treeEnsembleClassifier":
            let l = try XCTUnwrap(labels(p["labels"]))
            return try TreeEnsembleClassifierModel(treeParameters(p), labels: l, signature: signature(width: width, labels: l))
        case "supportVectorRegressor":
            return try SupportVectorRegressorModel(.init(kernel: kernel(p["kernel"] as? [String: Any] ?? [:]), supportVectors: vectors(p),
                                                         coefficients: doubles(p["coefficients"]), rho: Self.number(p["rho"])),
                                                   signature: signature(width: width, labels: nil))
        case "supportVectorClassifier":
            let l = try XCTUnwrap(labels(p["labels"]))
            let sp = SupportVectorClassifierParameters(
                kernel: kernel(p["kernel"] as? [String: Any] ?? [:]),
                supportVectorsPerClass: (p["perClass"] as? [NSNumber] ?? []).map(\.int32Value),
                supportVectors: vectors(p), coefficients: matrix(p["coefficients"]), rho: doubles(p["rho"]),
                probA: doubles(p["probA"]), probB: doubles(p["probB"]), labels: l)
            let sig = signature(width: width, labels: l)
            return try SupportVectorClassifierModel(sp, signature: sp.probA.isEmpty ? FeatureSignature(modelName: "reference", description: Spec.ModelDescription(input: sig.inputs, output: [sig.outputs[0]], predictedFeatureName: "label")) : sig)
        case "kNearestNeighborsClassifier":
            let l = try XCTUnwrap(labels(p["labels"]))
            let samples = matrix(p["samples"]).map { $0.map(Float.init) }
            return try KNearestNeighborsClassifierModel(
                .init(dimensions: Int32(width), samples: samples, labels: l,
                      index: p["index"] as? String == "kdTree" ? .kdTree(leafSize: 4) : .linear,
                      numberOfNeighbors: Int64((p["k"] as? NSNumber)?.intValue ?? 0),
                      weighting: p["weighting"] as? String == "inverseDistance" ? .inverseDistance : .uniform),
                signature: signature(width: width, labels: l))
        default:
            throw XCTSkip("unknown case kind \(c.kind)")
        }
    }

    private func check(_ got: FeatureProvider, _ want: [String: Any], tolerance: Double, _ what: String) {
        if let values = want["values"] {
            let e = doubles(values)
            let g: [Double]
            switch got["y"] {
            case let .double(d)?: g = [d]
            case let .multiArray(a)?: g = a.values
            default: return XCTFail("\(what): no y output in \(got)")
            }
            XCTAssertEqual(g.count, e.count, what)
            for (a, b) in zip(g, e) {
                XCTAssert(abs(a - b) <= tolerance * max(1, abs(b)), "\(what): \(g) vs \(e)")
            }
            return
        }
        switch (got["label"], want["label"]) {
        case let (.string(g)?, e as String): XCTAssertEqual(g, e, what)
        case let (.int64(g)?, e as NSNumber): XCTAssertEqual(g, e.int64Value, what)
        default: XCTFail("\(what): label \(String(describing: got["label"])) vs \(String(describing: want["label"]))")
        }
        guard let probs = want["probs"] as? [String: Any] else { return }
        var g: [String: Double] = [:]
        switch got["probs"] {
        case let .dictionary(.stringKeys(d))?: g = d
        case let .dictionary(.int64Keys(d))?: for (k, v) in d { g[String(k)] = v }
        default: return XCTFail("\(what): no probability output")
        }
        XCTAssertEqual(Set(g.keys), Set(probs.keys), what)
        for (k, v) in probs {
            let e = Self.number(v)
            XCTAssert(abs((g[k] ?? .nan) - e) <= tolerance, "\(what): P(\(k)) = \(g[k] ?? .nan), reference \(e)")
        }
    }

    func testReferenceCasesBatchAndSingleRow() throws {
        let all = try cases()
        XCTAssertGreaterThanOrEqual(all.count, 30)
        var kinds = Set<String>()
        for c in all {
            let m = try model(c)
            kinds.insert(c.kind)
            let tolerance = c.kind.hasPrefix("support") ? 1e-6 : 1e-9
            let rows: [FeatureProvider] = c.inputs.map { ["x": .multiArray(MultiArray(vector: $0))] }
            let batch = try m.predictions(from: rows)
            XCTAssertEqual(batch.count, rows.count, c.name)
            for (i, (row, want)) in zip(rows, c.expected).enumerated() {
                check(batch[i], want, tolerance: tolerance, "\(c.name) batch row \(i)")
                check(try m.prediction(from: row), want, tolerance: tolerance, "\(c.name) row \(i)")
            }
        }
        XCTAssertEqual(kinds.count, 7, "every model family has reference cases: \(kinds.sorted())")
    }

    // MARK: - Validation of damaged parameters

    private func invalidReason(_ f: () throws -> Any) -> String? {
        do { _ = try f(); return nil } catch let FeatureError.invalidModel(_, reason) { return reason } catch { return "\(error)" }
    }

    func testTreeArenaRejectsDamagedTrees() {
        typealias N = TreeEnsembleParameters.Node
        func arena(_ nodes: [N], dims: UInt64 = 1, width: Int? = 2, base: [Double] = []) -> String? {
            invalidReason { try TreeEnsembleArena(.init(nodes: nodes, numPredictionDimensions: dims, basePrediction: base), inputWidth: width, model: "m") }
        }
        let ok: [N] = [.branch(tree: 3, id: 0, .lessThan, feature: 1, 0, true: 1, false: 2), .leaf(tree: 3, id: 1, [1]), .leaf(tree: 3, id: 2, [2])]
        XCTAssertNil(arena(ok))
        XCTAssertNil(arena([]), "an empty ensemble predicts its base values")
        XCTAssertEqual(arena(ok, dims: 0), "numPredictionDimensions is 0; it must be between 1 and 16777216")
        XCTAssertEqual(arena(ok, base: [1, 2]), "basePredictionValue has 2 values for 1 prediction dimensions")
        XCTAssertEqual(arena(ok + [.leaf(tree: 3, id: 1, [1])]), "tree 3 node 1 is declared twice")
        XCTAssertEqual(arena([.branch(tree: 3, id: 0, .lessThan, feature: 1, 0, true: 1, false: 9), .leaf(tree: 3, id: 1, [1])]),
                       "tree 3 node 0: its false child node 9 does not exist in tree 3")
        XCTAssertEqual(arena([.branch(tree: 3, id: 0, .lessThan, feature: 1, 0, true: 0, false: 1), .leaf(tree: 3, id: 1, [1])]),
                       "tree 3 node 0 is its own true child")
        XCTAssertEqual(arena([.branch(tree: 3, id: 0, .lessThan, feature: 2, 0, true: 1, false: 2)] + ok.dropFirst()),
                       "tree 3 node 0 branches on feature 2, but the inputs describe 2 features")
        XCTAssertEqual(arena([.leaf(tree: 1, id: 0, [1]), .leaf(tree: 1, id: 5, [1])]), "tree 1 has 2 root nodes (nodes 0, 5); a tree has one")
        // A two-node cycle next to a real root: every node has one parent, but 7 and 8 are unreachable.
        XCTAssertEqual(arena(ok + [.branch(tree: 3, id: 7, .lessThan, feature: 0, 0, true: 8, false: 1),
                                   .branch(tree: 3, id: 8, .lessThan, feature: 0, 0, true: 7, false: 2)]),
                       "tree 3 node 7: its false child node 1 already has a parent (a node may have one)")
        XCTAssertEqual(arena([.leaf(tree: 3, id: 0, [1]),
                              .branch(tree: 3, id: 7, .lessThan, feature: 0, 0, true: 8, false: 9), .leaf(tree: 3, id: 9, [1]),
                              .branch(tree: 3, id: 8, .lessThan, feature: 0, 0, true: 7, false: 10), .leaf(tree: 3, id: 10, [1])]),
                       "tree 3 node 7 is not reachable from the root (nodes form a cycle)")
        XCTAssertEqual(arena([.branch(tree: 2, id: 7, .lessThan, feature: 0, 0, true: 8, false: 8)]),
                       "tree 2 node 7: its true child node 8 does not exist in tree 2")
        XCTAssertEqual(arena([.branch(tree: 2, id: 7, .lessThan, feature: 0, 0, true: 8, false: 9), .leaf(tree: 2, id: 9, [1]),
                              .branch(tree: 2, id: 8, .lessThan, feature: 0, 0, true: 7, false: 10), .leaf(tree: 2, id: 10, [1])]),
                       "tree 2 has no root node (its nodes form a cycle)")
        XCTAssertEqual(arena([.leaf(tree: 3, id: 0, [1, 2])]), "tree 3 node 0 adds to prediction dimension 1, but there are 1 (numPredictionDimensions)")
        XCTAssertEqual(arena([.init(treeId: 0, nodeId: 0, behavior: .leaf)]), "tree 0 node 0 is a leaf without evaluation values")
        XCTAssertEqual(arena([.init(treeId: 0, nodeId: 0, behavior: .leaf, evaluation: [.init(index: 0, value: 1), .init(index: 0, value: 2)])]),
                       "tree 0 node 0 adds to prediction dimension 0 twice")
    }

    func testTreeClassifierClassCountsAndDefaultLabels() throws {
        let sig = signature(width: 2, labels: .int64s([0, 1]))
        let p = TreeEnsembleParameters(nodes: [.leaf(tree: 0, id: 0, [0.7])], numPredictionDimensions: 1)
        let m = try TreeEnsembleClassifierModel(p, labels: nil, signature: sig)
        XCTAssertEqual(m.labels, .int64s([0, 1]), "Core ML numbers the classes of a model without labels")
        let out = try m.prediction(from: ["x": .multiArray(MultiArray(vector: [0, 0]))])
        XCTAssertEqual(out["label"], .int64(1))
        XCTAssertEqual(out["probs"], .dictionary(.int64Keys([0: 1 - 0.7, 1: 0.7])))
        XCTAssertNotNil(invalidReason { try TreeEnsembleClassifierModel(p, labels: .strings(["a", "b", "c"]), signature: sig) })
        // The described width is checked at load and per row.
        XCTAssertThrowsError(try m.prediction(from: ["x": .multiArray(MultiArray(vector: [0, 0, 0]))]))
    }

    func testGLMValidation() {
        let s = signature(width: 2, labels: .strings(["a", "b", "c"]))
        XCTAssertEqual(invalidReason { try GLMClassifierModel(.init(weights: [[1, 2]], offsets: [0], encoding: .referenceClass, labels: .strings(["a", "b", "c"])), signature: s) },
                       "ReferenceClass encoding of 3 classes needs 2 weight rows, found 1")
        XCTAssertEqual(invalidReason { try GLMClassifierModel(.init(weights: [[1, 2], [1, 2]], offsets: [0, 0], encoding: .oneVsRest, labels: .strings(["a", "b", "c"])), signature: s) },
                       "OneVsRest encoding of 3 classes needs 3 weight rows, found 2")
        XCTAssertEqual(invalidReason { try GLMClassifierModel(.init(weights: [[1, 2], [1, 2]], offsets: [0, 0], transform: .probit, encoding: .referenceClass, labels: .strings(["a", "b", "c"])), signature: s) },
                       "the Probit transform is only defined for 2 classes (GLMClassifier.proto), found 3")
        XCTAssertEqual(invalidReason { try GLMRegressorModel(.init(weights: [[1, 2, 3]], offsets: [0]), signature: s) },
                       "GLM weight rows have 3 values but the inputs describe a 2-value feature vector")
        XCTAssertEqual(invalidReason { try GLMRegressorModel(.init(weights: [[1, 2], [1]], offsets: [0, 0]), signature: s) },
                       "GLM weight row 1 has 1 values, row 0 has 2")
        XCTAssertEqual(invalidReason { try GLMRegressorModel(.init(weights: [[1, 2]], offsets: []), signature: s) },
                       "1 weight rows but 0 offsets (they must match)")
    }

    func testSVMValidation() {
        let l = ClassLabels.int64s([1, 2, 3])
        let s = signature(width: 2, labels: l)
        func svc(_ perClass: [Int32] = [1, 1, 1], coef: [[Double]] = [[1, 1, 1], [1, 1, 1]], rho: [Double] = [0, 0, 0],
                 probA: [Double] = [], kernel: SVMKernel = .linear, vectors: SVMSupportVectors = .dense([[0, 0], [1, 1], [2, 2]])) -> String? {
            invalidReason { try SupportVectorClassifierModel(.init(kernel: kernel, supportVectorsPerClass: perClass, supportVectors: vectors,
                                                                   coefficients: coef, rho: rho, probA: probA, probB: probA, labels: l), signature: s) }
        }
        XCTAssertNil(svc())
        XCTAssertEqual(svc([1, 1, 2]), "numberOfSupportVectorsPerClass sums to 4, but there are 3 support vectors")
        XCTAssertEqual(svc(coef: [[1, 1, 1]]), "1 coefficient rows for 3 classes (need 2)")
        XCTAssertEqual(svc(coef: [[1, 1, 1], [1, 1]]), "coefficient row 1 has 2 values for 3 support vectors")
        XCTAssertEqual(svc(rho: [0]), "1 rho values for 3 class pairs")
        XCTAssertEqual(svc(probA: [1]), "probA has 1 and probB 1 values; both must be empty or have 3 (one per class pair)")
        XCTAssertEqual(svc(kernel: .rbf(gamma: -1)), "kernel gamma is -1.0; it must be ≥ 0")
        XCTAssertEqual(svc(kernel: .polynomial(gamma: 1, c: 0, degree: -2)), "polynomial kernel degree is -2; it must be ≥ 0")
        XCTAssertEqual(svc(vectors: .dense([[0, 0, 0], [1, 1, 1], [2, 2, 2]])), "support vectors have 3 values but the inputs describe 2 features")
        XCTAssertEqual(svc(vectors: .sparse([[.init(index: 2, value: 1), .init(index: 1, value: 1)], [], []])),
                       "sparse support vector 0: index 1 after 2 (indices are 1-based and increasing)")
        XCTAssertEqual(svc(vectors: .sparse([[.init(index: 3, value: 1)], [], []])),
                       "sparse support vector 0 uses feature index 3, but the inputs describe 2 features")
    }

    func testKNNDefaultLabelKAndValidation() throws {
        let sig = signature(width: 2, labels: .strings([]))
        let empty = try KNearestNeighborsClassifierModel(.init(dimensions: 2, samples: [], labels: .strings([]), defaultLabel: .string("none"),
                                                               index: .kdTree(leafSize: 30), numberOfNeighbors: 3), signature: sig)
        let out = try empty.predictions(from: [["x": .multiArray(MultiArray(vector: [1, 2]))], ["x": .multiArray(MultiArray(vector: [3, 4]))]])
        XCTAssertEqual(out.map { $0["label"] }, [.string("none"), .string("none")])
        XCTAssertEqual(out[0]["probs"], .dictionary(.stringKeys([:])))
        // k larger than the sample count uses every sample; the override must be allowed.
        let p = KNearestNeighborsParameters(dimensions: 1, samples: [[0], [1], [5]], labels: .int64s([7, 7, 9]), numberOfNeighbors: 10,
                                            allowedNeighbors: .range(min: 1, max: 10))
        let s1 = signature(width: 1, labels: .int64s([]))
        let all = try KNearestNeighborsClassifierModel(p, signature: s1)
        XCTAssertEqual(all.k, 3)
        XCTAssertEqual(try all.prediction(from: ["x": .multiArray(MultiArray(vector: [5]))])["label"], .int64(7))
        let one = try KNearestNeighborsClassifierModel(p, signature: s1, numberOfNeighbors: 1)
        XCTAssertEqual(try one.prediction(from: ["x": .multiArray(MultiArray(vector: [4]))])["label"], .int64(9))
        // Equal distances: the earlier sample is nearer; vote ties go to the smallest label.
        let tie = try KNearestNeighborsClassifierModel(.init(dimensions: 1, samples: [[2], [0]], labels: .int64s([9, 7]), numberOfNeighbors: 1), signature: s1)
        XCTAssertEqual(try tie.prediction(from: ["x": .multiArray(MultiArray(vector: [1]))])["label"], .int64(9))
        let tie2 = try KNearestNeighborsClassifierModel(.init(dimensions: 1, samples: [[2], [0]], labels: .int64s([9, 7]), numberOfNeighbors: 2), signature: s1)
        XCTAssertEqual(try tie2.prediction(from: ["x": .multiArray(MultiArray(vector: [1]))])["label"], .int64(7))
        XCTAssertEqual(invalidReason { try KNearestNeighborsClassifierModel(p, signature: s1, numberOfNeighbors: 11) },
                       "numberOfNeighbors 11 is outside the allowed range 1…10")
        XCTAssertEqual(invalidReason { try KNearestNeighborsClassifierModel(.init(dimensions: 1, samples: [[0]], labels: .int64s([1, 2]), numberOfNeighbors: 1), signature: s1) },
                       "2 labels for 1 samples (one label per sample)")
        XCTAssertEqual(invalidReason { try KNearestNeighborsClassifierModel(.init(dimensions: 1, samples: [], labels: .int64s([]), numberOfNeighbors: 1), signature: s1) },
                       "the model has no samples and no default label")
        XCTAssertEqual(invalidReason { try KNearestNeighborsClassifierModel(.init(dimensions: 1, samples: [[0]], labels: .int64s([1]), defaultLabel: .string("a"), numberOfNeighbors: 1), signature: s1) },
                       "the default label is a String but the class labels are Int64")
        XCTAssertEqual(invalidReason { try KNearestNeighborsClassifierModel(.init(dimensions: 1, samples: [[0]], labels: .int64s([1]), numberOfNeighbors: 1,
                                                                                 allowedNeighbors: .set([3, 5])), signature: s1) },
                       "numberOfNeighbors 1 is not one of the allowed values [3, 5]")
    }

    func testSVMProbabilityCouplingMatchesTheClosedFormForConsistentPairs() {
        // Pairwise probabilities derived from p = (0.5, 0.3, 0.2): r_ij = p_i / (p_i + p_j). Method 2's
        // minimum is then p itself (Qp = 0), so the iteration must return it within its tolerance.
        let p = [0.5, 0.3, 0.2]
        var r = [Double](repeating: 0, count: 9)
        for i in 0..<3 { for j in 0..<3 where i != j { r[i * 3 + j] = p[i] / (p[i] + p[j]) } }
        let q = SVMProbability.multiclass(r, classes: 3)
        for (a, b) in zip(q, p) { XCTAssertEqual(a, b, accuracy: 2e-3) }
        XCTAssertEqual(q.reduce(0, +), 1, accuracy: 1e-12)
    }
}
