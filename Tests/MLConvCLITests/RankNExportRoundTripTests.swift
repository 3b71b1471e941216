// MARK: rank-N export (issue 10)
// Every op fixture (Fixtures/ops, NumPy references made by Scripts/make_op_fixtures.py) whose
// single-node graph the Core ML writer exports is written to .mlmodel bytes, read back with
// CoreMLImporter and run: the outputs must match NumPy within the case's tolerance (relative to
// max(1, |expected|); integer and bool outputs exactly, as the float values Core ML blobs hold).
import CoreMLFormat
import Foundation
import MLGraph
import MLRuntime
import TestSupport
import XCTest

extension CoreMLExportOptions {
    /// The writer restricted to classic (spec 1–3) networks.
    static var classicOnly: CoreMLExportOptions {
        var o = CoreMLExportOptions()
        o.writesRankNLayers = false
        return o
    }
}

final class RankNExportRoundTripTests: XCTestCase {
    struct Case: Decodable {
        var op: String
        var attributes: [String: AttributeValue]
        var inputs: Int
        var outputs: Int
        var weights: [String]
        var tolerance: Float
    }

    static let root = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/ops")

    /// Raise as ops gain a lowering; fewer round-tripped cases means an export regressed.
    static let minimumRoundTripped = 400

    /// Op kinds the writer still refuses on every fixture (each states why in its definition or
    /// in the writer): any other kind with fixtures must export at least one of them.
    static let refusedKinds: Set<OpKind> = [
        .cond, .whileLoop, .makeList, .listRead, .listWrite, .listGather, .listScatter, .listLength, .shape,
        .random, .resize, .nonMaximumSuppression, .conv3d, .pool3d, .deconv3d,
    ]

    struct Outcome { var exported = false; var kind: OpKind }

    func testExportedOpFixturesRoundTripThroughCoreML() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.root.path)
            .filter { FileManager.default.fileExists(atPath: Self.root.appendingPathComponent($0).appendingPathComponent("case.json").path) }
            .sorted()
        guard !names.isEmpty else { throw XCTSkip("no cases in \(Self.root.path): run Scripts/make_op_fixtures.py") }
        var roundTripped = 0, rankN = 0
        var exportedKinds = Set<OpKind>(), seenKinds = Set<OpKind>()
        var refused: [String: String] = [:]
        for name in names {
            do {
                guard let (kind, exported, isRankN) = try check(name, refused: &refused) else { continue }
                seenKinds.insert(kind)
                if exported { exportedKinds.insert(kind); roundTripped += 1; if isRankN { rankN += 1 } }
            } catch {
                XCTFail("\(name): \(error)")
            }
        }
        XCTAssertGreaterThanOrEqual(roundTripped, Self.minimumRoundTripped,
                                    "only \(roundTripped) of \(names.count) op fixtures export and round-trip; refused: \(refused.keys.sorted())")
        XCTAssertGreaterThan(rankN, 0, "no fixture needed the rank-N writer")
        for kind in seenKinds.subtracting(exportedKinds).subtracting(Self.refusedKinds).sorted(by: { $0.rawValue < $1.rawValue }) {
            let why = refused.filter { $0.key.hasPrefix(kind.rawValue) }.values.first ?? ""
            XCTFail("\(kind.rawValue): no fixture exports (\(why))")
        }
        if ProcessInfo.processInfo.environment["MLCONV_LIST_REFUSED"] != nil {
            for (k, v) in refused.sorted(by: { $0.key < $1.key }) { print("refused \(k): \(v)") }
        }
        print("RankNExportRoundTripTests: \(roundTripped) of \(names.count) op fixtures round-trip (\(rankN) as rank-N networks); "
              + "refused: \(refused.count) (\(Set(refused.keys.map { $0.split(separator: "_").first.map(String.init) ?? $0 }).sorted().joined(separator: ", ")))")
    }

    /// Returns (kind, exported, written as rank-N) or nil for cases with run-time shapes.
    func check(_ name: String, refused: inout [String: String]) throws -> (OpKind, Bool, Bool)? {
        let dir = Self.root.appendingPathComponent(name)
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: dir.appendingPathComponent("case.json")))
        let kind = try XCTUnwrap(OpKind(rawValue: c.op))
        let op = try kind.decodeOp(c.attributes)
        let ins = try (0..<c.inputs).map { try NPY.read(contentsOf: dir.appendingPathComponent("in\($0).npy")) }
        let expected = try (0..<c.outputs).map { try NPY.read(contentsOf: dir.appendingPathComponent("out\($0).npy")) }
        var weights: [String: ConstantTensor] = [:]
        for role in c.weights {
            let w = try NPY.read(contentsOf: dir.appendingPathComponent("w_\(role).npy"))
            weights[role] = ConstantTensor(shape: w.shape, floats: w.scalars)
        }
        let inputNames = (0..<c.inputs).map { "in\($0)" }, outputNames = (0..<c.outputs).map { "out\($0)" }
        let node = Node(name: "node", op: op, inputs: inputNames, outputs: outputNames, weights: weights)
        var g = Graph(inputs: zip(inputNames, ins).map { ValueInfo(name: $0, type: TensorType($1.shape, $1.elementType)) },
                      outputs: outputNames, nodes: [node])
        try g.inferShapes()
        guard g.tensorTypes.values.allSatisfy(\.isFullyKnown) else { return nil }
        let result: CoreMLExportResult
        do {
            result = try CoreMLExporter.export(g, options: CoreMLExportOptions(arrayDataType: .float32))
        } catch let e as CoreMLExportError {
            refused[name] = e.problems.map(\.reason).joined(separator: "; ")
            return (kind, false, false)
        }
        let isRankN = result.model.neuralNetwork?.arrayInputShapeMapping == .exact
        if isRankN { XCTAssertGreaterThanOrEqual(result.model.specificationVersion, 4, name) }
        let bytes = try result.model.encode()
        if let dir = ProcessInfo.processInfo.environment["MLCONV_EXPORT_DIR"], !dir.isEmpty, isRankN {
            // For Scripts/check_mlmodel_export.py load (coremltools 8.3).
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try result.model.write(toFile: URL(fileURLWithPath: dir).appendingPathComponent("op_\(name).mlmodel").path)
        }
        let back = try Spec.Model.decode(bytes, fileName: name + ".mlmodel")
        let imported = try CoreMLImporter.graph(from: back, fileName: name + ".mlmodel")
        let got = try isRankN ? Self.runExact(imported, inputNames, ins) : Self.runClassic(imported, inputNames, ins, outputNames)
        for (o, e) in zip(outputNames, expected) {
            let g = try XCTUnwrap(got[o], "\(name): output \(o) missing after the round trip")
            _ = g.shape
            XCTAssertEqual(g.count, e.count, "\(name) output \(o): shape \(g.shape), NumPy \(e.shape)")
            guard g.count == e.count else { continue }
            let exact = e.elementType.isInteger || e.elementType == .bool
            var worst: Float = 0, at = 0
            for j in 0..<e.count {
                let a = g.scalars[j], b = e.scalars[j]
                if (a.isNaN && b.isNaN) || a == b { continue }
                let d = exact ? Float.infinity : abs(a - b) / max(1, abs(b))
                if !(d <= worst) { worst = d.isNaN ? .infinity : d; at = j }
            }
            XCTAssertLessThanOrEqual(worst, c.tolerance,
                "\(name) (\(isRankN ? "rank-N" : "classic")) output \(o): worst relative error \(worst) at \(at) (got \(g.scalars[at]), NumPy \(e.scalars[at]))")
        }
        return (kind, true, isRankN)
    }

    /// An EXACT network's inputs are the fixture's arrays (as floats).
    static func runExact(_ g: Graph, _ names: [String], _ ins: [NDArray]) throws -> [String: NDArray] {
        var feeds: [String: NDArray] = [:]
        for (n, a) in zip(names, ins) { feeds[n] = try NDArray(shape: a.shape, scalars: a.scalars) }
        return try Model(graph: g).prediction(from: feeds)
    }

    /// The NHWC view of an IR shape in the classic writer's layout (rank 3 [N, S, D] is [N, S, 1, D]).
    static func view(_ s: [Int]) -> [Int]? {
        switch s.count {
        case 4: return s
        case 3: return [s[0], s[1], 1, s[2]]
        case 2: return [s[0], 1, 1, s[1]]
        default: return nil
        }
    }

    /// [H, W, C] ↔ [C, H, W] of one batch item.
    static func permute(_ v: ArraySlice<Float>, h: Int, w: Int, c: Int, toCHW: Bool) -> [Float] {
        let v = Array(v)
        var o = [Float](repeating: 0, count: v.count)
        for y in 0..<h { for x in 0..<w { for k in 0..<c {
            let hwc = (y * w + x) * c + k, chw = (k * h + y) * w + x
            if toCHW { o[chw] = v[hwc] } else { o[hwc] = v[chw] }
        } } }
        return o
    }

    /// A classic network has no batch axis and NCHW [1, C, H, W] (or vector [1, D]) features: runs
    /// each batch item of the fixture separately, in that layout, and gives the outputs back as
    /// flat NHWC values of the whole batch.
    static func runClassic(_ g: Graph, _ names: [String], _ ins: [NDArray], _ outputs: [String]) throws -> [String: NDArray] {
        let n = ins.first?.shape.first ?? 1
        var collected: [String: [Float]] = [:]
        for item in 0..<n {
            var feeds: [String: NDArray] = [:]
            for (name, a) in zip(names, ins) {
                guard let v = view(a.shape), let t = g.inputs.first(where: { $0.name == name })?.type else {
                    throw XCTSkip("input \(name) of shape \(a.shape) has no classic layout")
                }
                let per = v[1] * v[2] * v[3]
                let slice = a.scalars[(item * per)..<((item + 1) * per)]
                let values = t.rank == 4 ? permute(slice, h: v[1], w: v[2], c: v[3], toCHW: true) : Array(slice)
                feeds[name] = try NDArray(shape: t.shape, scalars: values)
            }
            let got = try Model(graph: g).prediction(from: feeds)
            for o in outputs {
                guard let r = got[o] else { continue }
                let values = r.shape.count == 4 ? permute(r.scalars[...], h: r.shape[2], w: r.shape[3], c: r.shape[1], toCHW: false) : r.scalars
                collected[o, default: []] += values
            }
        }
        return try collected.mapValues { try NDArray(shape: [$0.count], scalars: $0) }
    }
}
