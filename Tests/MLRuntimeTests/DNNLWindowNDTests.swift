import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Differential tests of the oneDNN conv1d / conv3d / pool1d / pool3d kernels (DNNLWindowND.swift),
/// the resampling kernel of resize (DNNLResize.swift), and softmax / concat with negative axes,
/// against the reference kernels: random shapes, strides, dilations, valid / same / explicit
/// padding, groups (incl. depthwise), fused activations. Each test also counts the
/// configurations oneDNN accepted (a factory that always declined would otherwise pass).
final class DNNLWindowNDTests: XCTestCase {
    /// Runs the optimized kernel (nil when it declines) and the reference kernel on the same
    /// random inputs; fails when they differ by more than `tolerance` relative to max(1, |ref|).
    @discardableResult
    func compare(_ node: Node, _ inputs: [TensorType], seed: UInt64, tolerance: Float = 1e-4, label: String,
                 file: StaticString = #filePath, line: UInt = #line) throws -> Bool {
        let outs = try node.inferOutputTypes(inputs)
        let ctx = KernelContext(node: node, inputTypes: inputs, outputTypes: outs, threadCount: 2)
        let factory = try XCTUnwrap(KernelRegistry.optimized[node.op.kind], "no oneDNN factory for \(node.op.kind)", file: file, line: line)
        guard let fast = try factory(ctx) else { return false }
        let reference = try KernelRegistry.makeKernel(ctx, referenceOnly: true)
        let xs = inputs.enumerated().map { randomFloats(count: $0.element.elementCount, seed: seed &+ UInt64($0.offset), in: -2 ... 2) }
        let counts = outs.map(\.elementCount)
        let want = runKernel(reference, xs, outputCounts: counts)[0]
        let got = runKernel(fast, xs, outputCounts: counts)[0]
        XCTAssertEqual(got.count, want.count, label, file: file, line: line)
        var worst: Float = 0, at = 0
        for (i, (a, b)) in zip(got, want).enumerated() {
            let e = abs(a - b) / max(1, abs(b))
            if !(e <= worst) { worst = e; at = i }  // NaN counts as worst
        }
        XCTAssertLessThanOrEqual(worst, tolerance, "\(label): worst relative error \(worst) at \(at)", file: file, line: line)
        return true
    }

    static let activations: [Activation?] = [nil, .relu, .tanh, .sigmoid, .leakyReLU(alpha: 0.2), .softsign, .elu(alpha: 1)]

    func randomPadding(_ g: inout SeededGenerator, rank: Int, kernel: [Int]) -> SpatialPadding {
        switch Int.random(in: 0...2, using: &g) {
        case 0: return .valid
        case 1: return .same
        default:
            return .explicit(before: (0..<rank).map { _ in Int.random(in: 0...2, using: &g) },
                             after: (0..<rank).map { _ in Int.random(in: 0...2, using: &g) })
        }
    }

    /// A random conv node with `rank` spatial axes and its input type.
    func randomConv(rank: Int, _ g: inout SeededGenerator, maxSize: Int) -> (Node, TensorType) {
        let cin = [1, 2, 3, 4, 8, 16].randomElement(using: &g)!
        let groups: Int
        switch Int.random(in: 0...3, using: &g) {
        case 0: groups = cin  // depthwise
        case 1 where cin % 2 == 0: groups = 2
        default: groups = 1
        }
        let cout = groups * [1, 2, 3, 8].randomElement(using: &g)!
        let kernel = (0..<rank).map { _ in Int.random(in: 1...(rank == 3 ? 3 : 5), using: &g) }
        let strides = (0..<rank).map { _ in [1, 1, 2, 3].randomElement(using: &g)! }
        let dilations = (0..<rank).map { _ in Int.random(in: 0...3, using: &g) == 0 ? 2 : 1 }
        let padding = randomPadding(&g, rank: rank, kernel: kernel)
        let act = Self.activations.randomElement(using: &g)!
        var weights = ["weight": randomConstant([cout, cin / groups] + kernel, seed: g.next(), in: -0.5 ... 0.5)]
        if Bool.random(using: &g) { weights["bias"] = randomConstant([cout], seed: g.next()) }
        let op: Op = rank == 1
            ? .conv1d(ConvNDAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: padding, groups: groups,
                                       outputChannels: cout, activation: act))
            : .conv3d(ConvNDAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: padding, groups: groups,
                                       outputChannels: cout, activation: act))
        let node = Node(name: "conv", op: op, inputs: ["x"], outputs: ["y"], weights: weights)
        let spatial = (0..<rank).map { _ in Int.random(in: 1...maxSize, using: &g) }
        return (node, TensorType([Int.random(in: 1...2, using: &g)] + spatial + [cin]))
    }

    func testConv1DMatchesReference() throws {
        var g = SeededGenerator(seed: 0xC1D)
        var ran = 0, valid = 0
        for i in 0..<200 where valid < 100 {
            let (node, input) = randomConv(rank: 1, &g, maxSize: 24)
            guard (try? node.inferOutputTypes([input])) != nil else { continue }
            valid += 1
            if try compare(node, [input], seed: UInt64(i), label: "conv1d \(node.op) on \(input.shape)") { ran += 1 }
        }
        XCTAssertGreaterThanOrEqual(valid, 60)
        XCTAssertEqual(ran, valid, "oneDNN should accept every valid conv1d (padding below the window is not required)")
    }

    func testConv3DMatchesReference() throws {
        var g = SeededGenerator(seed: 0xC3D)
        var ran = 0, valid = 0
        for i in 0..<120 where valid < 50 {
            let (node, input) = randomConv(rank: 3, &g, maxSize: 7)
            guard (try? node.inferOutputTypes([input])) != nil else { continue }
            valid += 1
            if try compare(node, [input], seed: UInt64(i), label: "conv3d \(node.op) on \(input.shape)") { ran += 1 }
        }
        XCTAssertGreaterThanOrEqual(valid, 30)
        XCTAssertEqual(ran, valid, "oneDNN should accept every valid conv3d")
    }

    func testPoolNDMatchesReference() throws {
        var g = SeededGenerator(seed: 0x9001D)
        for rank in [1, 3] {
            var ran = 0
            for i in 0..<120 {
                let kernel = (0..<rank).map { _ in Int.random(in: 1...3, using: &g) }
                let strides = (0..<rank).map { _ in Int.random(in: 1...3, using: &g) }
                let padding: SpatialPadding
                switch i % 3 {
                case 0: padding = .valid
                case 1: padding = .same
                default: padding = .explicit(before: kernel.map { Int.random(in: 0...($0 - 1), using: &g) },
                                             after: kernel.map { Int.random(in: 0...($0 - 1), using: &g) })
                }
                let a = PoolNDAttributes(kind: i % 2 == 0 ? .max : .average, kernel: kernel, strides: strides, padding: padding)
                let node = Node(name: "pool", op: rank == 1 ? .pool1d(a) : .pool3d(a), inputs: ["x"], outputs: ["y"])
                let spatial = (0..<rank).map { _ in Int.random(in: 1...(rank == 1 ? 20 : 7), using: &g) }
                let input = TensorType([Int.random(in: 1...2, using: &g)] + spatial + [[1, 3, 16, 19].randomElement(using: &g)!])
                guard (try? node.inferOutputTypes([input])) != nil else { continue }
                // Same padding can exceed the window only when stride > kernel; oneDNN declines that.
                let accepted = try compare(node, [input], seed: UInt64(i), label: "pool\(rank)d \(a) on \(input.shape)")
                if accepted { ran += 1 }
                if case .explicit = padding { XCTAssertTrue(accepted, "explicit padding below the window must be accepted: \(a)") }
            }
            XCTAssertGreaterThan(ran, 60, "rank \(rank)")
        }
    }

    func testPoolNDDeclinesWindowsInsidePadding() throws {
        for (op, shape) in [(Op.pool1d(PoolNDAttributes(kind: .average, kernel: [2], strides: [1], padding: .explicit(before: [2], after: [0]))), [1, 4, 3]),
                            (.pool3d(PoolNDAttributes(kind: .max, kernel: [2, 2, 2], strides: [1, 1, 1],
                                                      padding: .explicit(before: [0, 0, 0], after: [0, 3, 0]))), [1, 3, 3, 3, 2])] {
            let node = Node(name: "pool", op: op, inputs: ["x"], outputs: ["y"])
            let input = TensorType(shape)
            let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: try node.inferOutputTypes([input]), threadCount: 1)
            XCTAssertNil(try OptimizedKernels.table[op.kind]!(ctx), "\(op)")
            XCTAssertNotNil(try KernelRegistry.makeKernel(ctx, referenceOnly: false), "the reference kernel takes over")
        }
    }

    func testDeconv3DMatchesReference() throws { try deconvMatchesReference(rank: 3, seed: 0xDC3D) }

    func testDeconv1DMatchesReference() throws { try deconvMatchesReference(rank: 1, seed: 0xDC1D) }

    /// Random deconv1d / deconv3d nodes: oneDNN against the reference kernel.
    func deconvMatchesReference(rank: Int, seed: UInt64) throws {
        var g = SeededGenerator(seed: seed)
        var ran = 0, valid = 0
        for i in 0..<150 where valid < 50 {
            let cin = [1, 2, 4, 6].randomElement(using: &g)!
            let groups = cin % 2 == 0 && Bool.random(using: &g) ? 2 : 1
            let cout = groups * [1, 2, 3].randomElement(using: &g)!
            let kernel = (0..<rank).map { _ in Int.random(in: 1...3, using: &g) }
            let strides = (0..<rank).map { _ in Int.random(in: 1...2, using: &g) }
            let dilations = (0..<rank).map { _ in Int.random(in: 0...3, using: &g) == 0 ? 2 : 1 }
            let outputPadding = (0..<rank).map { Int.random(in: 0...(strides[$0] - 1), using: &g) }
            let padding: SpatialPadding = [.valid, .same, .explicit(before: kernel.map { Int.random(in: 0...($0 - 1), using: &g) },
                                                                    after: kernel.map { Int.random(in: 0...($0 - 1), using: &g) })][i % 3]
            var weights = ["weight": randomConstant([cin, cout / groups] + kernel, seed: g.next(), in: -0.5 ... 0.5)]
            if Bool.random(using: &g) { weights["bias"] = randomConstant([cout], seed: g.next()) }
            let a = DeconvNDAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: padding, outputPadding: outputPadding,
                                       groups: groups, outputChannels: cout, activation: Self.activations.randomElement(using: &g)!)
            let node = Node(name: "deconv", op: rank == 1 ? .deconv1d(a) : .deconv3d(a), inputs: ["x"], outputs: ["y"], weights: weights)
            let input = TensorType([Int.random(in: 1...2, using: &g)] + (0..<rank).map { _ in Int.random(in: 1...5, using: &g) } + [cin])
            guard (try? node.inferOutputTypes([input])) != nil else { continue }
            valid += 1
            if try compare(node, [input], seed: UInt64(i), label: "deconv\(rank)d \(a) on \(input.shape)") { ran += 1 }
        }
        XCTAssertGreaterThanOrEqual(valid, 40)
        XCTAssertGreaterThan(ran, valid * 3 / 4, "oneDNN declines only crops it cannot express")
    }

    // MARK: resize (oneDNN resampling)

    func testResizeHalfPixelMatchesReference() throws {
        var g = SeededGenerator(seed: 0x2E5)
        var ran = 0
        for i in 0..<80 {
            let method: ResizeMethod = i % 2 == 0 ? .nearest : .bilinear
            let h = Int.random(in: 1...12, using: &g), w = Int.random(in: 1...12, using: &g)
            let a: ResizeAttributes
            if i % 3 == 0 {
                a = ResizeAttributes(method: method, samplingMode: .halfPixel,
                                     scale: [[0.5, 1, 1.5, 2, 3, 0.75].randomElement(using: &g)!, [0.5, 1, 2, 2.5, 4].randomElement(using: &g)!])
            } else {
                a = ResizeAttributes(method: method, samplingMode: .halfPixel,
                                     size: [Int.random(in: 1...20, using: &g), Int.random(in: 1...20, using: &g)])
            }
            let node = Node(name: "resize", op: .resize(a), inputs: ["x"], outputs: ["y"])
            let input = TensorType([Int.random(in: 1...2, using: &g), h, w, [1, 3, 8, 17].randomElement(using: &g)!])
            guard (try? node.inferOutputTypes([input])) != nil else { continue }
            XCTAssertTrue(try compare(node, [input], seed: UInt64(i), label: "resize \(a) on \(input.shape)"), "declined \(a)")
            ran += 1
        }
        XCTAssertGreaterThan(ran, 50)
    }

    func testResizeDeclinesOtherSamplingModes() throws {
        for mode in ResizeSamplingMode.allCases where mode != .halfPixel {
            for method in ResizeMethod.allCases {
                let node = Node(name: "resize", op: .resize(ResizeAttributes(method: method, samplingMode: mode, size: [7, 5])),
                                inputs: ["x"], outputs: ["y"])
                let input = TensorType([1, 4, 3, 2])
                let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: try node.inferOutputTypes([input]), threadCount: 1)
                XCTAssertNil(try DNNLResize.factory(ctx), "\(method) \(mode) must decline (oneDNN is half-pixel only)")
            }
        }
    }

    // MARK: negative axes

    func testSoftmaxAndConcatNegativeAxes() throws {
        for (shape, axis) in [([2, 10], -1), ([1, 3, 4, 5], -1), ([2, 6, 5], -2), ([3, 4], -2), ([2, 3, 4, 5], -3)] {
            let neg = Node(name: "softmax", op: .softmax(axis: axis), inputs: ["x"], outputs: ["y"])
            XCTAssertTrue(try compare(neg, [TensorType(shape)], seed: 5, label: "softmax \(shape) axis \(axis)"))
            // The negative axis means the same as its resolved, non-negative one.
            let pos = Node(name: "softmax", op: .softmax(axis: axis + shape.count), inputs: ["x"], outputs: ["y"])
            let x = randomFloats(count: shape.reduce(1, *), seed: 11, in: -3 ... 3)
            let a = try runOp(neg.op, [nd(shape, x)]), b = try runOp(pos.op, [nd(shape, x)])
            XCTAssertEqual(a.scalars, b.scalars, "softmax axis \(axis) vs \(axis + shape.count)")
        }
        let cases: [([[Int]], Int)] = [([[1, 4, 5, 3], [1, 4, 5, 16]], -1), ([[2, 3, 5, 2], [2, 1, 5, 2]], -3), ([[2, 7], [3, 7]], -2)]
        for (shapes, axis) in cases {
            let node = Node(name: "concat", op: .concat(axis: axis), inputs: shapes.indices.map { "x\($0)" }, outputs: ["y"])
            let types = shapes.map { TensorType($0) }
            var expected = shapes[0]
            let r = expected.count
            expected[axis + r] = shapes.map { $0[axis + r] }.reduce(0, +)
            XCTAssertEqual(try node.inferOutputTypes(types)[0].shape, expected)
            XCTAssertTrue(try compare(node, types, seed: 7, label: "concat \(shapes) axis \(axis)"))
        }
        // Out of range either way is a shape error naming the valid range.
        for axis in [2, -3] {
            let node = Node(name: "s", op: .softmax(axis: axis), inputs: ["x"], outputs: ["y"])
            XCTAssertThrowsError(try node.inferOutputTypes([TensorType([2, 3])])) { XCTAssertTrue("\($0)".contains("-2…1"), "\($0)") }
            let c = Node(name: "c", op: .concat(axis: axis), inputs: ["a", "b"], outputs: ["y"])
            XCTAssertThrowsError(try c.inferOutputTypes([TensorType([2, 3]), TensorType([2, 3])]))
        }
    }
}
