import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// The ops around recurrent layers: embedding, sequenceMask, applyMask (reference kernels; the
// default configuration runs the same kernels, checked once each).

final class RecurrentSequenceOpsTests: XCTestCase {
    /// weight [D 2, vocab 3] = [[1, 2, 3], [10, 20, 30]]: index i gives column i.
    func testEmbeddingGathersColumns() throws {
        let w = ["weight": const([2, 3], [1, 2, 3, 10, 20, 30])]
        let x = nd([2, 3], [0, 2, 1, 1, 1, 0])
        for referenceOnly in [true, false] {
            let y = try runOp(.embedding(outputChannels: 2), [x], weights: w, referenceOnly: referenceOnly)
            XCTAssertEqual(y.shape, [2, 3, 2])
            XCTAssertEqual(y.scalars, [1, 10, 3, 30, 2, 20, 2, 20, 2, 20, 1, 10])
        }
    }

    /// Out of range, negative, NaN and infinite indices give zeros; fractions truncate toward
    /// zero as TF's float → int cast (2.9 → 2, −0.5 → 0).
    func testEmbeddingOutOfRangeAndFractions() throws {
        let w = ["weight": const([2, 3], [1, 2, 3, 10, 20, 30])]
        let x = nd([1, 7], [3, -1, .nan, .infinity, -.infinity, 2.9, -0.5])
        let y = try runOp(.embedding(outputChannels: 2), [x], weights: w)
        XCTAssertEqual(y.scalars, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 30, 1, 10])
    }

    func testSequenceMask() throws {
        // [N 2, T 3, 2]: a step is masked only when all its values equal the mask value.
        let x = nd([2, 3, 2], [0, 0, 1, 0, 0, 0,
                               .nan, 0, 0, -0.0, 0, 2])
        XCTAssertEqual(try runOp(.sequenceMask(value: 0), [x]).scalars, [0, 1, 0, 1, 0, 1])
        XCTAssertEqual(try runOp(.sequenceMask(value: 1), [x]).scalars, [1, 1, 1, 1, 1, 1])
        // Rank 2 (Embedding mask_zero on token ids).
        let tokens = nd([1, 4], [5, 0, 3, 0])
        XCTAssertEqual(try runOp(.sequenceMask(value: 0), [tokens], referenceOnly: false).scalars, [1, 0, 1, 0])
    }

    func testApplyMask() throws {
        let x = nd([1, 3, 2], [1, 2, 3, 4, 5, 6])
        let m = nd([1, 3], [1, 0, 1])
        for referenceOnly in [true, false] {
            XCTAssertEqual(try runOp(.applyMask, [x, m], referenceOnly: referenceOnly).scalars, [1, 2, 0, 0, 5, 6])
        }
    }

    /// Masking → LSTM in one graph, as the Keras frontend lowers `Masking` (mask computed from the
    /// input; the recurrent layer consumes it).
    func testMaskingFeedsRecurrentLayer() throws {
        let a = RecurrentAttributes(kind: .simpleRNN, units: 1, activation: .relu, returnSequences: true, hasMask: true)
        let graph = Graph(inputs: [ValueInfo(name: "x", type: TensorType([1, 3, 1]))], outputs: ["y"], nodes: [
            Node(name: "mask", op: .sequenceMask(value: 0), inputs: ["x"], outputs: ["m"]),
            Node(name: "rnn", op: .recurrent(a), inputs: ["x", "m"], outputs: ["y"],
                 weights: ["kernel": const([1, 1], [2]), "recurrentKernel": const([1, 1], [0.5]), "bias": const([1], [1])]),
        ])
        for referenceOnly in [true, false] {
            let model = try Model(graph: graph, configuration: .init(referenceOnly: referenceOnly))
            let y = try model.prediction(from: ["x": nd([1, 3, 1], [1, 0, 3])])["y"]!
            // Step 2 (x = 0) is masked: h stays 3; step 3: 2·3 + 0.5·3 + 1 = 8.5.
            XCTAssertEqual(y.scalars, [3, 3, 8.5])
        }
    }
}
