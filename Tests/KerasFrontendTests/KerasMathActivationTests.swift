// MARK: elementwise math ops — Keras 3 activation names added with issue 9.
import KerasFrontend
import MLGraph
import XCTest

final class KerasMathActivationTests: XCTestCase {
    func testKeras3ActivationNamesMapToTheNewActivations() {
        let v = KerasVersion("3.3.3")
        XCTAssertEqual(KerasActivationKind(name: "mish", version: v), .fused(.mish))
        XCTAssertEqual(KerasActivationKind(name: "hard_silu", version: v), .fused(.hardSwish))
        XCTAssertEqual(KerasActivationKind(name: "hard_swish", version: v), .fused(.hardSwish))
        XCTAssertEqual(KerasActivationKind(name: "log_sigmoid", version: v), .fused(.logSigmoid))
        for name in ["mish", "hard_silu", "hard_swish", "log_sigmoid"] {
            XCTAssertTrue(KerasActivationKind.supportedNames.contains(name), name)
        }
        // Keras 3 hard_silu(x) = x·hard_sigmoid(x) with hard_sigmoid = relu6(x + 3)/6.
        for x: Float in [-4, -3, -1, 0, 0.5, 2, 3, 5] {
            let hardSigmoid = Activation.hardSigmoid(alpha: 1.0 / 6.0, beta: 0.5).apply(x)
            XCTAssertEqual(Activation.hardSwish.apply(x), x * hardSigmoid, accuracy: 1e-6, "\(x)")
        }
    }
}
