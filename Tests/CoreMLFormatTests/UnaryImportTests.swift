// MARK: elementwise math ops — Core ML unary layers import exactly per NeuralNetwork.proto.
@testable import CoreMLFormat
import MLGraph
import TestSupport
import XCTest

final class UnaryImportTests: XCTestCase {
    typealias U = Spec.UnaryFunctionLayerParams

    /// Each unary type becomes one `unary` node: scale 0 (unset) reads as 1, epsilon 0 (unset)
    /// as 1e-6 for RSQRT and INVERSE, LOG takes no epsilon, alpha only for POWER and THRESHOLD.
    func testEveryUnaryTypeImportsWithProtoDefaults() throws {
        let cases: [(U, UnaryAttributes)] = [
            (U(type: .sqrt, alpha: 7, epsilon: 0.5, shift: 1, scale: 0), UnaryAttributes(.sqrt, shift: 1)),
            (U(type: .rsqrt), UnaryAttributes(.rsqrt, epsilon: 1e-6)),
            (U(type: .rsqrt, epsilon: 1e-3, shift: 0.5, scale: 2), UnaryAttributes(.rsqrt, epsilon: 1e-3, scale: 2, shift: 0.5)),
            (U(type: .inverse), UnaryAttributes(.inverse, epsilon: 1e-6)),
            (U(type: .inverse, epsilon: 0.25, scale: -1), UnaryAttributes(.inverse, epsilon: 0.25, scale: -1)),
            (U(type: .power, alpha: 3, shift: -1), UnaryAttributes(.power, alpha: 3, shift: -1)),
            (U(type: .exp, scale: 0.5), UnaryAttributes(.exp, scale: 0.5)),
            (U(type: .log, epsilon: 0.1), UnaryAttributes(.log)),
            (U(type: .abs, alpha: 2), UnaryAttributes(.abs)),
            (U(type: .threshold, alpha: 0.3, scale: 2), UnaryAttributes(.threshold, alpha: 0.3, scale: 2)),
        ]
        for (params, want) in cases {
            let m = ImportSpecs.model([ImportSpecs.array("x", [4])], [ImportSpecs.array("y", [4])],
                                      [ImportSpecs.layer("u", ["x"], ["y"], .unary(params))])
            let g = try CoreMLImporter.graph(from: m, fileName: "unary.mlmodel")
            let ops = g.nodes.map(\.op)
            XCTAssertEqual(ops, [.unary(want)], "\(params)")
            // 1/(x + 1e-6) at 0 is finite, per the proto's default epsilon.
            if params.type == .inverse && params.epsilon == 0, case let .unary(a)? = ops.first {
                XCTAssertEqual(a.apply(0), 1e6, accuracy: 1)
            }
        }
    }

    func testUnknownUnaryTypeIsRefused() {
        let m = ImportSpecs.model([ImportSpecs.array("x", [4])], [ImportSpecs.array("y", [4])],
                                  [ImportSpecs.layer("u", ["x"], ["y"], .unary(U(type: .init(rawValue: 9))))])
        XCTAssertThrowsError(try CoreMLImporter.graph(from: m, fileName: "unary.mlmodel")) { error in
            XCTAssertTrue("\(error)".contains("unary function 9 is unknown"), "\(error)")
        }
    }
}
