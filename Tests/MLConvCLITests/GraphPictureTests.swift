import Foundation
@testable import MLConvCLI
import TestSupport
import XCTest

/// `mlconv inspect MODEL --graph FILE`: the DOT structure for each kind of model, and the
/// Graphviz rendering.
final class GraphPictureTests: XCTestCase {
    private func dotText(_ model: URL, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let out = dir.appendingPathComponent("g.dot")
        let r = CLIRun(["inspect", model.path, "--graph", out.path])
        XCTAssertEqual(r.status, 0, r.err, file: file, line: line)
        XCTAssertTrue(r.out.contains("graph: \(out.path)"), r.out, file: file, line: line)
        return try String(contentsOf: out, encoding: .utf8)
    }

    private func labels(_ dot: String) -> [String] {
        dot.split(separator: "\n").compactMap { l -> String? in
            guard let a = l.range(of: "[label=\""), let b = l.range(of: "\", ", range: a.upperBound..<l.endIndex) else { return nil }
            return String(l[a.upperBound..<b.lowerBound])
        }
    }

    private func edgeCount(_ dot: String) -> Int { dot.split(separator: "\n").filter { $0.contains(" -> ") }.count }

    /// Keras: one node per layer with its IR type, output shape and weight precision; inputs and
    /// outputs as feature nodes; one edge per tensor read.
    func testKerasModelLayersWithTypesShapesAndPrecision() throws {
        let dot = try dotText(TestPaths.repositoryRoot.appendingPathComponent("Fixtures/keras/dense_ranks_k2/model.h5"))
        XCTAssertTrue(dot.hasPrefix("digraph \"model.h5 (Keras)\" {"), dot)
        let l = labels(dot)
        XCTAssertTrue(l.contains("dense_rank2\\ndense\\n→ float32[1×8]\\nweights: fp32"), "\(l)")
        XCTAssertTrue(l.contains("dense_rank4\\ndense\\n→ float32[1×3×4×5]\\nweights: fp32"), "\(l)")
        XCTAssertTrue(l.contains("grid\\nfloat32[1×3×4×6]"), "\(l)")
        // 3 inputs + 4 layers + 4 outputs; each layer reads one tensor and feeds one output.
        XCTAssertEqual(l.count, 11)
        XCTAssertEqual(edgeCount(dot), 8)
        XCTAssertFalse(dot.contains("subgraph"))
    }

    /// A pipeline whose first stage is a pipeline: nested clusters, one node per classical model
    /// naming its kind, edges labelled with the features passed between stages.
    func testNestedPipelineIsNestedClusters() throws {
        let dot = try dotText(TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical/pipeline_nested/model.mlmodel"))
        let lines = dot.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let clusterLabels = lines.filter { $0.hasPrefix("label=\"stage") }
        XCTAssertEqual(clusterLabels, ["label=\"stage 0: pipeline\"; style=\"rounded\"; color=\"#7a8aa6\";",
                                       "label=\"stage 0: imputer\"; style=\"rounded\"; color=\"#7a8aa6\";",
                                       "label=\"stage 1: scaler\"; style=\"rounded\"; color=\"#7a8aa6\";",
                                       "label=\"stage 1: normalizer\"; style=\"rounded\"; color=\"#7a8aa6\";"])
        // The inner stages sit inside the outer stage 0's cluster: it closes after both.
        let outer = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("label=\"stage 0: pipeline\"") })
        let scaler = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("label=\"stage 1: scaler\"") })
        let normalizer = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("label=\"stage 1: normalizer\"") })
        XCTAssertEqual(lines[outer..<normalizer].filter { $0 == "}" }.count, 3, "imputer, scaler, then the outer stage close")
        XCTAssertLessThan(scaler, normalizer)
        let l = labels(dot)
        for kind in ["imputer", "scaler", "normalizer"] { XCTAssertTrue(l.contains(kind), "\(l)") }
        // input → imputer → scaler → normalizer → output
        XCTAssertEqual(edgeCount(dot), 4)
    }

    /// A neural network stage inside a pipeline: its layers with Core ML layer types and the
    /// output types of mlconv's import, then the k-NN stage as one node.
    func testPipelineWithNeuralNetworkStage() throws {
        let dot = try dotText(TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical/pipeline_neural_network_knn/model.mlmodel"))
        let l = labels(dot)
        XCTAssertTrue(l.contains { $0.contains("innerProduct") && $0.contains("weights: fp32") && $0.contains("→ float32[") }, "\(l)")
        XCTAssertTrue(l.contains { $0.hasPrefix("kNearestNeighborsClassifier") }, "\(l)")
        XCTAssertTrue(dot.contains("stage 0: neuralNetwork") && dot.contains("stage 1: kNearestNeighborsClassifier"), dot)
    }

    /// Core ML branch layers are drawn from mlconv's import: the cond op with then / else clusters.
    func testBranchLayerBlocksAreClusters() throws {
        let dot = try dotText(TestPaths.repositoryRoot.appendingPathComponent("Fixtures/coreml_layers/branch_if_taken/model.mlmodel"))
        let clusters = dot.split(separator: "\n").filter { $0.contains("subgraph cluster_") }
        XCTAssertEqual(clusters.count, 2, dot)
        XCTAssertTrue(dot.contains(": then\"") && dot.contains(": else\""), dot)
        XCTAssertTrue(labels(dot).contains { $0.contains("\\ncond\\n") }, dot)
    }

    /// A compiled bundle: the IR's ops with their output types.
    func testBundleOpsWithTypes() throws {
        let dot = try dotText(TestPaths.repositoryRoot.appendingPathComponent("Fixtures/bundles/digits_cnn_format1.0.mlbundle"))
        XCTAssertTrue(dot.hasPrefix("digraph \"digits_cnn_format1.0.mlbundle (mlbundle)\" {"), dot)
        let l = labels(dot)
        XCTAssertTrue(l.contains("conv1\\nconv2d\\n→ float32[1×8×8×16]\\nweights: fp32"), "\(l)")
        XCTAssertTrue(l.contains("pool\\npool2d\\n→ float32[1×4×4×32]"), "\(l)")
        // digit → conv1 → conv2 → pool → flatten → dense → probabilities → softmax → output
        XCTAssertEqual(edgeCount(dot), 8)
    }

    /// A Core ML loop compiled to a bundle: the whileLoop op with its cond and body blocks as
    /// clusters, each with the loop variables it binds (typed) and what it yields.
    func testWhileLoopBlocksAreClustersWithTypedInputs() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let bundle = dir.appendingPathComponent("loop.mlbundle")
        let model = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/coreml_layers/loop_while_condition/model.mlmodel")
        let c = CLIRun(["compile", model.path, "-o", bundle.path])
        XCTAssertEqual(c.status, 0, c.err)
        let dot = try dotText(bundle)
        XCTAssertTrue(dot.contains("label=\"loop: cond\";") && dot.contains("label=\"loop: body\";"), dot)
        let l = labels(dot)
        XCTAssertTrue(l.contains { $0.hasPrefix("body inputs\\n") && $0.contains("v: float32[1]") }, "\(l)")
        XCTAssertTrue(l.contains { $0.hasPrefix("cond yields\\n") }, "\(l)")
        XCTAssertTrue(dot.contains("[label=\"body\"];") && dot.contains("[label=\"cond\"];"), dot)
    }

    /// A corpus network with 4-bit LUT weights: every layer drawn with its precision.
    func testCorpusQuantizedNetwork() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/kingreza_food_kmeans_lut_4bit.mlmodel")
        let dot = try dotText(url)
        let l = labels(dot)
        let convs = l.filter { $0.contains("\\nconvolution\\n") }
        XCTAssertFalse(convs.isEmpty)
        XCTAssertTrue(convs.allSatisfy { $0.contains("weights: 4-bit LUT") && $0.contains("→ float32[1×") }, "\(convs)")
        XCTAssertTrue(l.contains("data\\nImage (BGR 227 × 227)"), "\(l.prefix(3))")
    }

    /// A corpus ML program (in a pipeline): the function as a cluster, drawn op by op by the MIL
    /// reader `inspect` installs (MILPicture), or with its op counts when no reader reads it.
    func testCorpusProgramInPipeline() throws {
        let url = try TestPaths.sharedFile("corpus/mlmodel/mzietera_yolov8n_nms_pipeline_specOnly.mlmodel")
        let dot = try dotText(url)
        XCTAssertTrue(dot.contains("label=\"function main (CoreML5)\""), dot)
        XCTAssertEqual(labels(dot).filter { $0.contains("\\nconv\\n") }.count, 64, dot)
        XCTAssertTrue(labels(dot).contains { $0.hasPrefix("nonMaximumSuppression") }, dot)
        let reader = ModelPicture.programReader
        defer { ModelPicture.programReader = reader }
        ModelPicture.programReader = { _, _ in nil }
        let summary = try dotText(url)
        XCTAssertTrue(summary.contains("conv × 64"), summary)
    }

    /// .svg and .png are drawn by Graphviz when `dot` is installed.
    func testSVGAndPNGAreDrawnByGraphviz() throws {
        guard GraphFileWriter.dotExecutable() != nil else {
            throw XCTSkip("skipped: Graphviz `dot` not on PATH (Debian package graphviz, installed by Scripts/setup)")
        }
        let dir = try TestPaths.temporaryDirectory(for: self)
        let model = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical/pipeline_nested/model.mlmodel").path
        let svg = dir.appendingPathComponent("p.svg"), png = dir.appendingPathComponent("p.png")
        XCTAssertEqual(CLIRun(["inspect", model, "--graph", svg.path]).status, 0)
        XCTAssertEqual(CLIRun(["inspect", model, "--graph", png.path]).status, 0)
        let s = try String(contentsOf: svg, encoding: .utf8)
        XCTAssertTrue(s.contains("<svg") && s.contains("normalizer"), String(s.prefix(200)))
        XCTAssertEqual(Array(try Data(contentsOf: png).prefix(4)), [0x89, 0x50, 0x4E, 0x47])
    }

    func testUnknownExtensionAndMissingDotAreTypedErrors() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let model = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/classical/pipeline_nested/model.mlmodel").path
        let r = CLIRun(["inspect", model, "--graph", dir.appendingPathComponent("g.pdf").path])
        XCTAssertEqual(r.status, 2)  // usage (issue 13 exit codes)
        XCTAssertTrue(r.err.contains("'.pdf'") && r.err.contains(".svg, .png or .dot"), r.err)
        let old = ProcessInfo.processInfo.environment["PATH"] ?? ""
        setenv("PATH", dir.path, 1)
        defer { setenv("PATH", old, 1) }
        let out = dir.appendingPathComponent("g.svg").path
        XCTAssertThrowsError(try GraphFileWriter.write(dotText: "digraph g {}", to: out)) { e in
            XCTAssertEqual(e as? GraphDrawingError, .dotNotFound(path: out))
            XCTAssertTrue("\(e)".contains("graphviz"), "\(e)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: out))
    }

    /// Labels are DOT-escaped: quotes, backslashes and line breaks in names cannot break the file.
    func testLabelsAreEscaped() {
        var d = DotDocument(title: "a \"quoted\" \\ name")
        let a = d.addNode(["x\"y", "back\\slash"], style: .op)
        let c = d.addCluster("block \"b\"")
        let b = d.addNode(["line1\nline2"], style: .feature, in: c)
        d.addEdge(from: a, to: b, label: "t\"")
        let t = d.text
        XCTAssertTrue(t.contains("digraph \"a \\\"quoted\\\" \\\\ name\" {"), t)
        XCTAssertTrue(t.contains("n0 [label=\"x\\\"y\\nback\\\\slash\""), t)
        XCTAssertTrue(t.contains("label=\"block \\\"b\\\"\";"), t)
        XCTAssertTrue(t.contains("n2 [label=\"line1\\nline2\""), t)
        XCTAssertTrue(t.contains("n0 -> n2 [label=\"t\\\"\"];"), t)
    }
}
