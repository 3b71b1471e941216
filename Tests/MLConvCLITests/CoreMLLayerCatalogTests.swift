// `mlconv ops --coreml` and docs/COREML_LAYERS.md: the status of every NeuralNetworkLayer type,
// generated from the importer's and writer's tables (CoreMLLayerCatalog).
import CoreMLFormat
import Foundation
import MLConvCLI
import TestSupport
import XCTest

final class CoreMLLayerCatalogTests: XCTestCase {
    struct Status: Decodable {
        var name: String
        var fieldNumber: UInt32
        var imported: Bool
        var irOps: [String]
        var limitations: String?
        var refusal: String?
        var exportedFrom: [String]
    }

    func testEveryLayerTypeHasAStatus() throws {
        let r = CLIRun(["ops", "--coreml", "--json"])
        XCTAssertEqual(r.status, 0, r.err)
        let list = try JSONDecoder().decode([Status].self, from: Data(r.out.utf8))
        XCTAssertEqual(list.count, Spec.LayerParameters.fieldNumbers.count)
        XCTAssertEqual(Set(list.map(\.name)).count, list.count, "duplicate layer types")
        for l in list {
            XCTAssertEqual(l.imported, !l.irOps.isEmpty, l.name)
            XCTAssertEqual(l.imported, l.refusal == nil, "\(l.name): a type is imported or refused with a reason")
            XCTAssertEqual(Spec.LayerParameters.typeName(fieldNumber: l.fieldNumber), l.name)
        }
        // Every row of the importer's table names a schema layer type (no typo drifts away).
        XCTAssertEqual(Set(CoreMLLayerOps.table.keys).subtracting(list.map(\.name)), [])
        // Refusals are only given for types that are not imported.
        XCTAssertEqual(Set(CoreMLLayerOps.refusals.keys).intersection(CoreMLLayerOps.table.keys), [])
        let byName = Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0) })
        XCTAssertEqual(byName["convolution"]?.irOps.contains("conv2d"), true)
        XCTAssertTrue(byName["convolution"]?.exportedFrom.contains("conv2d") ?? false, "\(byName["convolution"]?.exportedFrom ?? [])")
        XCTAssertEqual(byName["loop"]?.irOps.contains("whileLoop"), true)
        XCTAssertNotNil(byName["uniDirectionalLSTM"]?.limitations)
    }

    func testTextListingStartsWithTheCounts() {
        let r = CLIRun(["ops", "--coreml"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.hasPrefix(CoreMLLayerCatalog.summary()), r.out)
        XCTAssertTrue(r.out.contains("\nbranch "), r.out)
        XCTAssertEqual(CLIRun(["ops", "--markdown"]).status, 2)
    }

    /// docs/COREML_LAYERS.md is the output of `mlconv ops --coreml --markdown`.
    func testDocumentIsCurrent() throws {
        let url = TestPaths.repositoryRoot.appendingPathComponent("docs/COREML_LAYERS.md")
        let r = CLIRun(["ops", "--coreml", "--markdown"])
        XCTAssertEqual(r.status, 0, r.err)
        let doc = try String(contentsOf: url, encoding: .utf8)
        XCTAssertEqual(doc, r.out, "docs/COREML_LAYERS.md is stale: regenerate it with `mlconv ops --coreml --markdown > docs/COREML_LAYERS.md`")
    }
}
