import Foundation
import MLConvCLI
import MLGraph
import TestSupport
import XCTest

/// `mlconv ops` is generated from the registries: every op kind is listed with a reference
/// kernel, and the names that map to it come from the Keras and Core ML tables.
final class OpsCommandTests: XCTestCase {
    struct Entry: Decodable { var name, kind, summary: String; var kernels, keras, coreml, mil, onnx: [String] }

    func entries(_ args: [String]) throws -> [Entry] {
        let r = CLIRun(["ops", "--json"] + args)
        XCTAssertEqual(r.status, 0, r.err)
        return try JSONDecoder().decode([Entry].self, from: Data(r.out.utf8))
    }

    func testJSONListsEveryOpWithAReferenceKernel() throws {
        let ops = try entries([])
        XCTAssertGreaterThanOrEqual(ops.count, 80)
        XCTAssertEqual(Set(ops.map(\.kind)), Set(OpKind.allCases.map(\.rawValue)))
        for e in ops { XCTAssertTrue(e.kernels.contains("reference"), "\(e.name) has no reference kernel: \(e.kernels)") }
        XCTAssertEqual(Set(ops.map { "\($0.kind)/\($0.name)" }).count, ops.count, "duplicate entries")
        let byName = Dictionary(ops.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(byName["conv2d"]?.kernels, ["reference", "oneDNN"])
        XCTAssertTrue(byName["conv2d"]?.keras.contains("Conv2D") ?? false)
        XCTAssertEqual(byName["conv2d"]?.coreml, ["convolution"])
        XCTAssertEqual(byName["conv2d"]?.mil, ["conv"])
        XCTAssertEqual(byName["sqrt"]?.kind, "unary")
        XCTAssertTrue(byName["sqrt"]?.coreml.contains("unary") ?? false)
        XCTAssertEqual(byName["reduce_sum"]?.mil, ["reduce_sum"])
        XCTAssertEqual(byName["crop"]?.kernels, ["reference", "memcpy"])
        XCTAssertEqual(byName["lstm"] == nil, true)  // recurrent is one kind
        XCTAssertTrue(byName["recurrent"]?.keras.contains("LSTM") ?? false)
    }

    func testKindsListsOneEntryPerKind() throws {
        let kinds = try entries(["--kinds"])
        XCTAssertEqual(kinds.map(\.name), OpKind.allCases.map(\.rawValue))
    }

    func testTextListing() {
        let r = CLIRun(["ops"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.out.hasPrefix("\(r.out.split(separator: " ")[0]) ops in \(OpKind.allCases.count) op kinds"), r.out)
        XCTAssertTrue(r.out.contains("sqrt (unary)"))
        // Regression: long names overflowed a fixed 34-character column into the kernel list.
        XCTAssertTrue(r.out.contains("gelu_sigmoid_approximation (activation)  reference"), r.out)
        XCTAssertEqual(CLIRun(["ops", "extra"]).status, 2)
    }
}
