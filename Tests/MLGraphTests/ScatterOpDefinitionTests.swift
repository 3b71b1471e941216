// Attribute and shape validation of scatter, scatterND, scatterAlongAxis, reverse,
// reverseSequence, argsort, einsum (equation parser), slidingWindows, nonMaximumSuppression:
// hostile values are typed errors naming the node, never traps.
import Foundation
import MLGraph
import XCTest

final class ScatterOpDefinitionTests: XCTestCase {
    func infer(_ op: Op, _ ins: [TensorType], outputs: Int = 1) throws -> [TensorType] {
        try Node(name: "n", op: op, inputs: (0..<ins.count).map { "i\($0)" }, outputs: (0..<outputs).map { "o\($0)" }).inferOutputTypes(ins)
    }

    func assertInvalid(_ op: Op, _ ins: [TensorType], outputs: Int = 1, _ fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try infer(op, ins, outputs: outputs), "\(op)", file: file, line: line) { error in
            guard case let GraphError.invalidNode(name, _, message) = error else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertEqual(name, "n", file: file, line: line)
            XCTAssertTrue(message.contains(fragment), "\(message) lacks '\(fragment)'", file: file, line: line)
        }
    }

    // MARK: scatter

    func testScatterShapes() throws {
        let d = TensorType([2, 4, 3])
        XCTAssertEqual(try infer(.scatter(ScatterAttributes(axis: 1)), [d, TensorType([2, 5], .int32), TensorType([2, 2, 5, 3])]), [d])
        XCTAssertEqual(try infer(.scatter(ScatterAttributes(axis: -1, mode: .update)), [d, TensorType([6], .int64), TensorType([2, 4, 6])]), [d])
        assertInvalid(.scatter(ScatterAttributes(axis: 1)), [d, TensorType([5], .int32), TensorType([2, 4, 3])], "updates (input 2) should have shape (2, 5, 3)")
        assertInvalid(.scatter(ScatterAttributes(axis: 3)), [d, TensorType([5], .int32), TensorType([2, 5, 3])], "out of range")
        assertInvalid(.scatter(ScatterAttributes(axis: Int.min)), [d, TensorType([5], .int32), TensorType([2, 5, 3])], "axis")
        assertInvalid(.scatter(ScatterAttributes()), [d, TensorType([2]), TensorType([2, 4, 3])], "int32 or int64")
        assertInvalid(.scatter(ScatterAttributes()), [TensorType([2], .bool), TensorType([2], .int32), TensorType([2], .bool)], "bool")
        assertInvalid(.scatter(ScatterAttributes()), [d, TensorType([2], .int32), TensorType([2, 4, 3], .int32)], "one element type")
        assertInvalid(.scatter(ScatterAttributes()), [d, TensorType([2], .int32)], "expects 3 input(s)")
    }

    func testScatterNDAndAlongAxisShapes() throws {
        let d = TensorType([3, 4, 5])
        XCTAssertEqual(try infer(.scatterND(mode: .add), [d, TensorType([2, 2], .int32), TensorType([2, 5])]), [d])
        XCTAssertEqual(try infer(.scatterND(mode: .min), [d, TensorType([6, 3], .int64), TensorType([6])]), [d])
        assertInvalid(.scatterND(mode: .add), [d, TensorType([2, 4], .int32), TensorType([2])], "must be in 1…3")
        assertInvalid(.scatterND(mode: .add), [d, TensorType([3], .int32), TensorType([1])], "scalar")
        assertInvalid(.scatterND(mode: .add), [d, TensorType([2, 1], .int32), TensorType([2, 4])], "should have shape (2, 4, 5)")
        XCTAssertEqual(try infer(.scatterAlongAxis(ScatterAttributes(axis: 1)), [d, TensorType([3, 7, 5], .int32), TensorType([3, 7, 5])]), [d])
        assertInvalid(.scatterAlongAxis(ScatterAttributes(axis: 1)), [d, TensorType([3, 7, 4], .int32), TensorType([3, 7, 4])], "except on axis 1")
        assertInvalid(.scatterAlongAxis(ScatterAttributes(axis: 1)), [d, TensorType([3, 7, 5], .int32), TensorType([3, 7, 4])], "should have shape (3, 7, 5)")
    }

    func testScatterModeCodecNamesAreMIL() throws {
        XCTAssertEqual(ScatterMode.allCases.map(\.rawValue), ["update", "add", "sub", "mul", "div", "max", "min"])
        XCTAssertThrowsError(try OpKind.scatter.decodeOp(["axis": .int(0), "mode": .string("mean")])) { error in
            XCTAssertTrue("\(error)".contains("mode"), "\(error)")
        }
    }

    // MARK: reverse, reverseSequence, argsort, slidingWindows

    func testReorderOpValidation() throws {
        let x = TensorType([2, 5, 3])
        XCTAssertEqual(try infer(.reverse(axes: []), [x]), [x])
        assertInvalid(.reverse(axes: [1, -2]), [x], "twice")
        assertInvalid(.reverse(axes: [Int.max]), [x], "axes")
        XCTAssertEqual(try infer(.reverseSequence(seqAxis: 1, batchAxis: 0), [x, TensorType([2], .int64)]), [x])
        assertInvalid(.reverseSequence(seqAxis: 1, batchAxis: -2), [x, TensorType([2], .int32)], "must differ")
        assertInvalid(.reverseSequence(seqAxis: 1, batchAxis: 0), [x, TensorType([5], .int32)], "lengths (input 1) should have shape (2)")
        assertInvalid(.reverseSequence(seqAxis: 1, batchAxis: 0), [x, TensorType([2])], "int32 or int64")
        XCTAssertEqual(try infer(.argsort(axis: -1, ascending: false), [x]), [TensorType([2, 5, 3], .int32)])
        assertInvalid(.argsort(axis: 3, ascending: false), [x], "out of range")
        XCTAssertEqual(try infer(.slidingWindows(SlidingWindowsAttributes(axis: 1, size: 2, stride: 2)), [x]), [TensorType([2, 2, 2, 3])])
        XCTAssertEqual(try infer(.slidingWindows(SlidingWindowsAttributes(axis: -1, size: 3)), [TensorType([4], .int32)]), [TensorType([2, 3], .int32)])
        assertInvalid(.slidingWindows(SlidingWindowsAttributes(axis: 1, size: 6)), [x], "exceeds the size 5")
        assertInvalid(.slidingWindows(SlidingWindowsAttributes(axis: 1, size: 0)), [x], "size must be in 1…")
        assertInvalid(.slidingWindows(SlidingWindowsAttributes(axis: 1, size: 2, stride: -1)), [x], "stride must be in 1…")
        assertInvalid(.slidingWindows(SlidingWindowsAttributes(axis: 1, size: 2, stride: Int.max)), [x], "stride")
    }

    // MARK: nonMaximumSuppression

    func testNonMaximumSuppressionValidation() throws {
        let a = NonMaximumSuppressionAttributes(iouThreshold: 0.5, scoreThreshold: 0, maxBoxes: 7)
        let outs = try infer(.nonMaximumSuppression(a), [TensorType([2, 9, 4]), TensorType([2, 9, 3])], outputs: 4)
        XCTAssertEqual(outs, [TensorType([2, 7, 4]), TensorType([2, 7, 3]), TensorType([2, 7], .int32), TensorType([2], .int32)])
        assertInvalid(.nonMaximumSuppression(a), [TensorType([2, 9, 5]), TensorType([2, 9, 3])], outputs: 4, "[B, N, 4]")
        assertInvalid(.nonMaximumSuppression(a), [TensorType([2, 9, 4]), TensorType([2, 8, 3])], outputs: 4, "scores (input 1) must be [2, 9, K]")
        assertInvalid(.nonMaximumSuppression(a), [TensorType([9, 4]), TensorType([2, 9, 3])], outputs: 4, "rank-3")
        assertInvalid(.nonMaximumSuppression(a), [TensorType([2, 9, 4], .float16), TensorType([2, 9, 3])], outputs: 4, "float32")
        var bad = a
        bad.maxBoxes = 0
        assertInvalid(.nonMaximumSuppression(bad), [TensorType([2, 9, 4]), TensorType([2, 9, 3])], outputs: 4, "max_boxes")
        bad = a
        bad.iouThreshold = .nan
        assertInvalid(.nonMaximumSuppression(bad), [TensorType([2, 9, 4]), TensorType([2, 9, 3])], outputs: 4, "iou_threshold")
        bad = a
        bad.scoreThreshold = .nan
        assertInvalid(.nonMaximumSuppression(bad), [TensorType([2, 9, 4]), TensorType([2, 9, 3])], outputs: 4, "score_threshold")
        // −∞ score threshold is valid and survives the codec.
        bad = a
        bad.scoreThreshold = -.infinity
        let op = Op.nonMaximumSuppression(bad)
        let json = try JSONEncoder().encode(op.attributes)
        XCTAssertEqual(try OpKind.nonMaximumSuppression.decodeOp(JSONDecoder().decode([String: AttributeValue].self, from: json)), op)
    }

    // MARK: einsum

    func parse(_ s: String) -> EinsumEquation? { if case let .success(e) = EinsumEquation.parse(s) { return e } else { return nil } }
    func reason(_ s: String) -> String { if case let .failure(e) = EinsumEquation.parse(s) { return e.reason } else { return "" } }

    func testEinsumParsing() throws {
        XCTAssertEqual(parse("bij,bjk->bik"), EinsumEquation(operands: [[0, 1, 2], [0, 2, 3]], output: [0, 1, 3], labelCount: 4))
        XCTAssertEqual(parse(" ij , jk -> ik "), parse("ij,jk->ik"))
        XCTAssertEqual(parse("ij,kj")?.output, [0, 2], "implicit output: letters used once, sorted")
        XCTAssertEqual(parse("ba")?.output, [1, 0], "implicit mode sorts: ba → ab (a transpose)")
        XCTAssertEqual(parse("Ba,aC")?.output, [0, 2], "ASCII order: uppercase first")
        XCTAssertEqual(parse("ii->i")?.operands, [[0, 0]])
        XCTAssertEqual(reason("ij,jk,kl->il"), "has 3 operands (at most 2 are supported)")
        XCTAssertTrue(reason("...ij->ij").contains("ellipsis"))
        XCTAssertTrue(reason("ij->ik").contains("'k'"))
        XCTAssertTrue(reason("ij->ii").contains("repeats"))
        XCTAssertTrue(reason("ij->").contains("empty output"))
        XCTAssertTrue(reason("ii").contains("empty output"), "implicit 'ii' is a trace: a scalar")
        XCTAssertTrue(reason(",ij->ij").contains("empty term"))
        XCTAssertTrue(reason("ij-ji").contains("'-'"))
        XCTAssertTrue(reason("ij->j->i").contains("more than one"))
        XCTAssertTrue(reason("ij->i,j").contains("','"))
        XCTAssertTrue(reason("i1->i").contains("'1'"))
        XCTAssertTrue(reason("é->é").contains("'é'"))
        XCTAssertTrue(reason(String(repeating: "a", count: 40) + "->a").contains("axes"))
        XCTAssertTrue(reason(String(repeating: "ab", count: 200)).contains("longer"))
        XCTAssertTrue(reason("").contains("empty term"))
    }

    func testEinsumParserNeverTrapsOnArbitraryStrings() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("abiIjJ,->. é\u{0}\u{FFFF}1🙂")
        var accepted = 0
        for _ in 0..<5000 {
            let s = String((0..<Int.random(in: 0...12, using: &rng)).map { _ in alphabet.randomElement(using: &rng) ?? "a" })
            switch EinsumEquation.parse(s) {
            case let .success(e):
                accepted += 1
                XCTAssertTrue(e.operands.count == 1 || e.operands.count == 2, s)
                XCTAssertTrue(e.output.allSatisfy { l in e.operands.contains { $0.contains(l) } }, s)
                XCTAssertEqual(Set(e.output).count, e.output.count, s)
            case let .failure(err): XCTAssertFalse(err.reason.isEmpty, s)
            }
            // Through a node: a typed error or output types, never a trap.
            _ = try? Node(name: "n", op: .einsum(equation: s), inputs: ["a", "b"], outputs: ["y"])
                .inferOutputTypes([TensorType([2, 3]), TensorType([3, 2])])
        }
        XCTAssertGreaterThan(accepted, 0)
    }

    func testEinsumShapes() throws {
        XCTAssertEqual(try infer(.einsum(equation: "bij,bjk->bik"), [TensorType([2, 3, 4]), TensorType([2, 4, 5])]), [TensorType([2, 3, 5])])
        XCTAssertEqual(try infer(.einsum(equation: "iij->ji"), [TensorType([3, 3, 2])]), [TensorType([2, 3])])
        assertInvalid(.einsum(equation: "ij,jk->ik"), [TensorType([2, 3]), TensorType([4, 5])], "sizes 3 and 4")
        assertInvalid(.einsum(equation: "ii->i"), [TensorType([2, 3])], "sizes 2 and 3")
        assertInvalid(.einsum(equation: "ij,jk->ik"), [TensorType([2, 3])], "2 operand(s), but the node has 1 input(s)")
        assertInvalid(.einsum(equation: "ijk->k"), [TensorType([2, 3])], "rank 2")
        assertInvalid(.einsum(equation: "ij->i"), [TensorType([2, 3], .int32)], "float32")
        assertInvalid(.einsum(equation: "ab,cd->abcd"), [TensorType([1 << 20, 1 << 20]), TensorType([1 << 20, 2])], "2^40")
        assertInvalid(.einsum(equation: "i j,,"), [TensorType([2, 3])], "equation")
    }
}
