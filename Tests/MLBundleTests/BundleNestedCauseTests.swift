// MARK: errors (issue 13): a bundle's model section that does not verify keeps the GraphError.
import Diagnostics
import Foundation
import MLGraph
@testable import MLBundle
import XCTest

final class BundleNestedCauseTests: XCTestCase {
    func testModelSectionThatDoesNotVerifyKeepsTheGraphError() throws {
        let dir = try makeTemporaryDirectory(self)
        let graph = try makeTestGraph()
        let bytes = try BundleWriter.serialize(graph, producer: "mlconv test", source: "test")
        let l = Layout(bytes)
        let model = String(decoding: bytes[l.model], as: UTF8.self)
        // The graph's outputs (sorted keys: right before "tensorTypes"): the first one renamed to
        // a tensor no node produces. The JSON still decodes; the graph does not verify.
        let outputs = "\"outputs\":[" + graph.outputs.map { "\"\($0)\"" }.joined(separator: ",") + "],\"tensorTypes\""
        XCTAssertTrue(model.contains(outputs), "the model section's layout changed")
        let renamed = ["no_such_tensor"] + graph.outputs.dropFirst()
        let broken = model.replacingOccurrences(
            of: outputs, with: "\"outputs\":[" + renamed.map { "\"\($0)\"" }.joined(separator: ",") + "],\"tensorTypes\"")
        let b = assembleBundle(info: Array(bytes[l.info]), model: Array(broken.utf8), weights: Array(bytes[l.weights]))
        guard case let .failure(error) = load(b, in: dir) else { return XCTFail("a graph that does not verify was loaded") }
        guard case let .corrupted(file, reason, cause)? = error as? BundleError else { return XCTFail("\(error)") }
        XCTAssertTrue(file.hasSuffix("fuzz.mlbundle"), file)
        XCTAssertEqual(reason, "the model section does not hold a valid graph")
        guard let g = cause?.error as? GraphError else { return XCTFail("the GraphError is not kept: \(error)") }
        XCTAssertTrue(g.description.contains("no_such_tensor"), g.description)
        let e = error as? BundleError
        XCTAssertEqual(e?.diagnosticCauses.first as? GraphError, g)
        XCTAssertEqual(Diagnostic.category(of: error), .inputFile)
        // The text: before, the GraphError was pasted after the reason; it still is in
        // `description`, and the renderer prints it on a "caused by:" line instead.
        XCTAssertTrue("\(error)".contains("is corrupted: the model section does not hold a valid graph: \(g.description):"), "\(error)")
        let text = DiagnosticRenderer.render(error)
        XCTAssertTrue(text.contains("\n  caused by: \(g.description)"), text)
        XCTAssertFalse(Diagnostic(error).summary.contains(g.description), Diagnostic(error).summary)
    }
}
