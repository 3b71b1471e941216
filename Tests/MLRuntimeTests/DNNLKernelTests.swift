import Dispatch
import Foundation
import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

// Differential tests of the oneDNN kernels (Kernels/DNNL) against an oracle: the reference kernel
// of the same op when `KernelRegistry.reference` has one that accepts the node, else the naive
// loops at the end of this file (written from the `Op` documentation).

final class DNNLKernelTests: XCTestCase {
    // MARK: conv2d

    func testConv2DRandomConfigurations() throws {
        var rng = DNNLTestRNG(seed: 0xC0FFEE)
        var tested = 0, attempts = 0
        let channelChoices = [1, 2, 3, 4, 8, 16, 17, 32, 48, 64]
        while tested < 140 && attempts < 2000 {
            attempts += 1
            let cin = rng.pick(channelChoices)
            let groups: Int
            switch rng.int(0, 3) {
            case 0: groups = cin  // depthwise
            case 1 where cin % 2 == 0: groups = 2
            default: groups = 1
            }
            let cout = groups == cin ? cin * rng.pick([1, 1, 2]) : groups * rng.pick([1, 2, 3, 8, 16, 24])
            let kernel = [rng.int(1, cin >= 16 ? 3 : 5), rng.int(1, cin >= 16 ? 3 : 5)]
            let strides = [rng.pick([1, 1, 2, 3]), rng.pick([1, 1, 2, 3])]
            let dilations = rng.int(0, 4) == 0 ? [2, rng.pick([1, 2])] : [1, 1]
            let padding = randomPadding(&rng, maxPad: 3)
            let big = rng.int(0, 3) == 0
            let h = rng.int(1, big ? 29 : 13), w = rng.int(1, big ? 29 : 13), n = rng.pick([1, 1, 2])
            let activation = Self.activations[tested % Self.activations.count]
            let node = convNode(cin: cin, cout: cout, kernel: kernel, strides: strides, dilations: dilations,
                                padding: padding, groups: groups, bias: rng.int(0, 3) != 0,
                                activation: activation, rng: &rng)
            let input = TensorType([n, h, w, cin])
            guard (try? node.inferOutputTypes([input])) != nil else { continue }
            try check(node, [input], threads: rng.pick([1, 2]), rng: &rng,
                      label: "conv cin=\(cin) cout=\(cout) g=\(groups) k=\(kernel) s=\(strides) d=\(dilations) \(padding) \(h)x\(w) act=\(String(describing: activation))")
            tested += 1
        }
        XCTAssertGreaterThanOrEqual(tested, 140)
    }

    func testConv2DFixedConfigurations() throws {
        var rng = DNNLTestRNG(seed: 7)
        // (cin, cout, groups, k, stride, dilation, padding, h, w)
        let cases: [(Int, Int, Int, Int, Int, Int, PaddingMode, Int, Int)] = [
            (3, 16, 1, 3, 2, 1, .same, 17, 15),          // stem, odd sizes
            (16, 16, 16, 3, 1, 1, .same, 9, 9),          // depthwise
            (32, 32, 32, 3, 2, 1, .same, 10, 11),        // depthwise stride 2
            (16, 32, 1, 1, 1, 1, .valid, 7, 7),          // pointwise
            (8, 8, 2, 3, 1, 2, .same, 12, 12),           // grouped + dilated
            (64, 64, 1, 3, 1, 1, .same, 12, 12),         // blocked layouts
            (5, 7, 1, 5, 3, 1, .explicit(top: 2, bottom: 0, left: 1, right: 3), 13, 11),
            (4, 6, 1, 2, 2, 1, .valid, 1, 9),            // output height 0 → skipped by inference below
            (4, 4, 1, 3, 1, 1, .explicit(top: 4, bottom: 4, left: 0, right: 0), 3, 3),  // pad > kernel
        ]
        for (cin, cout, g, k, s, d, p, h, w) in cases {
            for bias in [false, true] {
                let node = convNode(cin: cin, cout: cout, kernel: [k, k], strides: [s, s], dilations: [d, d],
                                    padding: p, groups: g, bias: bias, activation: .relu, rng: &rng)
                let input = TensorType([1, h, w, cin])
                guard (try? node.inferOutputTypes([input])) != nil else { continue }
                try check(node, [input], rng: &rng, label: "conv fixed \(cin)->\(cout) g\(g) k\(k) s\(s) d\(d) \(p)")
            }
        }
    }

    func testConv2DEveryFusedActivation() throws {
        var rng = DNNLTestRNG(seed: 99)
        for act in Self.activations {
            for (cin, cout, g) in [(16, 16, 1), (8, 8, 8)] {
                let node = convNode(cin: cin, cout: cout, kernel: [3, 3], strides: [1, 1], dilations: [1, 1],
                                    padding: .same, groups: g, bias: true, activation: act, rng: &rng, weightScale: 3)
                try check(node, [TensorType([1, 6, 7, cin])], rng: &rng, label: "conv act \(String(describing: act)) g\(g)")
            }
        }
        // Activations oneDNN cannot fuse run after the primitive, split over threads when large.
        for act: Activation in [.softsign, .thresholdedReLU(theta: 0.5), .clippedReLU(maxValue: 6, negativeSlope: 0.1, threshold: 0.5)] {
            XCTAssertNil(dnnlEltwiseChain(act))
            let node = convNode(cin: 16, cout: 64, kernel: [3, 3], strides: [1, 1], dilations: [1, 1],
                                padding: .same, groups: 1, bias: true, activation: act, rng: &rng, weightScale: 3)
            try check(node, [TensorType([1, 33, 31, 16])], threads: 2, rng: &rng, label: "conv unfused \(act)")
        }
    }

    func testConv2DQuantizedAndHalfWeights() throws {
        var rng = DNNLTestRNG(seed: 5)
        let cin = 8, cout = 16
        let values = (0..<(cout * cin * 9)).map { _ in rng.float() * 0.3 }
        let halfBytes = values.flatMap { v -> [UInt8] in
            let b = Float16(v).bitPattern.littleEndian
            return [UInt8(b & 0xFF), UInt8(b >> 8)]
        }
        let half = try ConstantTensor(shape: [cout, cin, 3, 3], encoding: .float16, storage: byteStorage(halfBytes))
        let codes = (0..<(cout * cin * 9)).map { _ in UInt8(rng.int(0, 15)) }
        let q = LinearQuantization(bits: 4, axis: 0, scale: (0..<cout).map { _ in 0.02 + rng.float() * 0.01 },
                                   bias: (0..<cout).map { _ in rng.float() * 0.1 })
        let quantized = try ConstantTensor(shape: [cout, cin, 3, 3], encoding: .linear(q),
                                           storage: byteStorage(packMSBFirst(codes, bits: 4)))
        for weight in [half, quantized] {
            let node = Node(name: "conv_\(weight.encoding)",
                            op: .conv2d(Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: cout)),
                            inputs: ["x"], outputs: ["y"], weights: ["weight": weight])
            try check(node, [TensorType([1, 9, 9, cin])], rng: &rng, label: "conv \(weight.encoding) weights")
        }
    }

    // MARK: Winograd convolutions (issue 12)

    /// Whether this CPU has AVX-512 (oneDNN 2.x's f32 Winograd kernel needs it).
    private static let hasAVX512: Bool = {
        (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.contains(" avx512f") ?? false
    }()

    /// 3×3 stride-1 convolutions with ≥ 64 channels and ≥ 14×14 outputs run on
    /// `DNNLBlockedConvolution` (Winograd between two reorders); they match the reference kernel
    /// (the harness's 1e-4 tolerance) and the direct oneDNN kernel within 1e-5 of the output scale.
    func testConv2DWinogradMatchesReferenceAndDirect() throws {
        guard Self.hasAVX512 else { throw XCTSkip("no AVX-512 on this CPU: oneDNN has no f32 Winograd kernel here") }
        defer { DNNLRuntime.winogradEnabled = true }
        var rng = DNNLTestRNG(seed: 31)
        let cases: [(cin: Int, cout: Int, h: Int, w: Int, padding: PaddingMode, activation: Activation?, n: Int)] = [
            (64, 64, 14, 14, .same, .relu, 1),
            (64, 128, 16, 15, .same, nil, 1),
            (96, 64, 20, 17, .valid, .relu, 1),
            (128, 80, 15, 16, .explicit(top: 1, bottom: 0, left: 0, right: 1), nil, 2),
            (64, 64, 30, 29, .same, .relu, 1),
        ]
        for c in cases {
            let node = convNode(cin: c.cin, cout: c.cout, kernel: [3, 3], strides: [1, 1], dilations: [1, 1], padding: c.padding,
                                groups: 1, bias: true, activation: c.activation, rng: &rng)
            let input = TensorType([c.n, c.h, c.w, c.cin])
            let output = try node.inferOutputTypes([input])[0]
            let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: [output], threadCount: 2)
            let label = "winograd \(c.cin)->\(c.cout) \(c.h)x\(c.w) \(c.padding) \(String(describing: c.activation))"
            DNNLRuntime.winogradEnabled = true
            let winograd = try XCTUnwrap(try OptimizedKernels.table[.conv2d]!(ctx), label)
            XCTAssertTrue(winograd is DNNLBlockedConvolution, "\(label): \(type(of: winograd))")
            XCTAssertTrue((winograd as? DNNLBlockedConvolution)?.convolution.implementation.contains("wino") == true, label)
            try check(node, [input], rng: &rng, label: label)
            DNNLRuntime.winogradEnabled = false
            let direct = try XCTUnwrap(try OptimizedKernels.table[.conv2d]!(ctx), label)
            XCTAssertTrue(direct is DNNLKernel, "\(label): \(type(of: direct))")
            let x = (0..<input.elementCount).map { _ in rng.float() }
            let a = runKernel(winograd, [x], outputCounts: [output.elementCount])[0]
            let b = runKernel(direct, [x], outputCounts: [output.elementCount])[0]
            let scale = max(1, b.reduce(0) { max($0, abs($1)) })
            let worst = zip(a, b).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
            XCTAssertLessThanOrEqual(worst, 1e-5 * scale, "\(label): winograd vs direct")
        }
    }

    /// The kernels of one plan take their blocked buffers and oneDNN scratchpads from one
    /// `ScratchArena`: two Winograd layers run one after the other leave what one leaves, not twice
    /// that (the style network's peak RSS), and still compute what they computed alone.
    func testWinogradKernelsOfOnePlanShareOneScratch() throws {
        guard Self.hasAVX512 else { throw XCTSkip("no AVX-512 on this CPU: oneDNN has no f32 Winograd kernel here") }
        var rng = DNNLTestRNG(seed: 33)
        let input = TensorType([1, 28, 28, 64])
        let nodes = (0..<2).map { _ in
            convNode(cin: 64, cout: 64, kernel: [3, 3], strides: [1, 1], dilations: [1, 1], padding: .same,
                     groups: 1, bias: true, activation: .relu, rng: &rng)
        }
        let x = (0..<input.elementCount).map { _ in rng.float() }
        func make(_ node: Node, _ arena: ScratchArena) throws -> Kernel {
            let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: [input], threadCount: 1, scratch: arena)
            let k = try XCTUnwrap(try OptimizedKernels.table[.conv2d]!(ctx))
            XCTAssertTrue(k is DNNLBlockedConvolution, "\(type(of: k))")
            return k
        }
        let alone = ScratchArena()
        let expected = try runKernel(make(nodes[0], alone), [x], outputCounts: [input.elementCount])[0]
        let single = alone.idleBytes
        XCTAssertGreaterThan(single, input.elementCount * 4 * 2, "the blocked source and destination at least")
        let shared = ScratchArena()
        let kernels = try nodes.map { try make($0, shared) }
        let y0 = runKernel(kernels[0], [x], outputCounts: [input.elementCount])[0]
        _ = runKernel(kernels[1], [x], outputCounts: [input.elementCount])[0]
        XCTAssertEqual(shared.idleBytes, single, "two kernels, one scratch")
        XCTAssertEqual(y0, expected, "the same values with a shared scratch")
    }

    /// Kernels on small tensors run on one thread whatever the configured count (a parallel
    /// region's wake-up costs more than a second thread gains there); a large input, output or
    /// weight keeps the configured count.
    func testSmallKernelsRunOnOneThread() throws {
        var rng = DNNLTestRNG(seed: 34)
        func threads(_ node: Node, _ input: TensorType, configured: Int) throws -> Int32 {
            let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: try node.inferOutputTypes([input]), threadCount: configured)
            return DNNLRuntime.threads(for: ctx)
        }
        let limit = DNNLRuntime.parallelElementThreshold  // 32,768 elements
        let squeeze = convNode(cin: 64, cout: 16, kernel: [1, 1], strides: [1, 1], dilations: [1, 1], padding: .valid,
                               groups: 1, bias: true, activation: .swish, rng: &rng)
        XCTAssertEqual(try threads(squeeze, TensorType([1, 1, 1, 64]), configured: 2), 1, "a squeeze-and-excitation convolution")
        XCTAssertEqual(try threads(squeeze, TensorType([1, 32, 32, 64]), configured: 2), 2, "65,536 input elements")
        XCTAssertEqual(try threads(squeeze, TensorType([1, 22, 22, 64]), configured: 2), 1, "30,976 input elements")
        let wide = convNode(cin: 256, cout: 256, kernel: [1, 1], strides: [1, 1], dilations: [1, 1], padding: .valid,
                            groups: 1, bias: false, activation: nil, rng: &rng)
        XCTAssertEqual(try threads(wide, TensorType([1, 1, 1, 256]), configured: 4), 4, "65,536 weights")
        XCTAssertEqual(try threads(wide, TensorType([1, 1, 1, 256]), configured: 1), 1)
        XCTAssertGreaterThanOrEqual(limit, 1 << 14)
    }

    /// Geometries Winograd does not pay for (or cannot take) keep the direct kernel.
    func testConv2DWinogradOnlyWhereItPays() throws {
        var rng = DNNLTestRNG(seed: 32)
        let cases: [(cin: Int, cout: Int, k: Int, s: Int, d: Int, g: Int, h: Int)] = [
            (32, 64, 3, 1, 1, 1, 28),    // fewer than 64 input channels
            (64, 64, 3, 2, 1, 1, 28),    // stride 2
            (64, 64, 3, 1, 2, 1, 28),    // dilated
            (64, 64, 1, 1, 1, 1, 28),    // pointwise
            (64, 64, 3, 1, 1, 2, 28),    // grouped
            (64, 64, 3, 1, 1, 1, 13),    // 13×13 output
        ]
        for c in cases {
            let node = convNode(cin: c.cin, cout: c.cout, kernel: [c.k, c.k], strides: [c.s, c.s], dilations: [c.d, c.d],
                                padding: .same, groups: c.g, bias: true, activation: .relu, rng: &rng)
            let input = TensorType([1, c.h, c.h, c.cin])
            let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: try node.inferOutputTypes([input]), threadCount: 1)
            let kernel = try XCTUnwrap(try OptimizedKernels.table[.conv2d]!(ctx))
            XCTAssertTrue(kernel is DNNLKernel, "\(c): \(type(of: kernel))")
        }
        // Activations oneDNN's Winograd kernel cannot fuse (it takes ReLU only): the direct kernel,
        // which fuses them; still equal to the reference.
        for activation: Activation in [.swish, .elu(alpha: 1), .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0)] {
            let node = convNode(cin: 64, cout: 64, kernel: [3, 3], strides: [1, 1], dilations: [1, 1], padding: .same,
                                groups: 1, bias: true, activation: activation, rng: &rng)
            let input = TensorType([1, 16, 16, 64])
            let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: try node.inferOutputTypes([input]), threadCount: 1)
            let kernel = try XCTUnwrap(try OptimizedKernels.table[.conv2d]!(ctx))
            XCTAssertTrue(kernel is DNNLKernel, "\(activation): \(type(of: kernel))")
            try check(node, [input], rng: &rng, label: "winograd-shaped conv with \(activation)")
        }
    }

    // MARK: deconv2d

    func testDeconv2DRandomConfigurations() throws {
        var rng = DNNLTestRNG(seed: 0xDEC0)
        var tested = 0, attempts = 0
        while tested < 80 && attempts < 2000 {
            attempts += 1
            let cin = rng.pick([1, 2, 3, 4, 8, 16])
            let groups = (cin % 2 == 0 && rng.int(0, 3) == 0) ? (rng.int(0, 1) == 0 ? 2 : cin) : 1
            let cout = groups * rng.pick([1, 2, 3, 8])
            let kernel = [rng.int(1, 5), rng.int(1, 5)]
            let strides = [rng.pick([1, 2, 2, 3]), rng.pick([1, 2, 3])]
            let dilations = rng.int(0, 5) == 0 ? [2, 2] : [1, 1]
            let outputPadding = rng.int(0, 2) == 0 ? strides.map { rng.int(0, $0 - 1) } : [0, 0]
            let padding: PaddingMode
            switch rng.int(0, 2) {
            case 0: padding = .valid
            case 1: padding = .same
            default:
                padding = .explicit(top: rng.int(0, kernel[0] - 1), bottom: rng.int(0, kernel[0] - 1),
                                    left: rng.int(0, kernel[1] - 1), right: rng.int(0, kernel[1] - 1))
            }
            let h = rng.int(1, 9), w = rng.int(1, 9)
            let activation = Self.activations[tested % Self.activations.count]
            let attrs = Deconv2DAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: padding,
                                           outputPadding: outputPadding, groups: groups, outputChannels: cout,
                                           activation: activation)
            var weights = ["weight": randomConstant([cin, cout / groups, kernel[0], kernel[1]], &rng,
                                                    scale: 1 / Float(cin / groups * kernel[0] * kernel[1]).squareRoot())]
            if rng.int(0, 2) != 0 { weights["bias"] = randomConstant([cout], &rng) }
            let node = Node(name: "deconv", op: .deconv2d(attrs), inputs: ["x"], outputs: ["y"], weights: weights)
            let input = TensorType([rng.pick([1, 2]), h, w, cin])
            guard (try? node.inferOutputTypes([input])) != nil else { continue }
            // `.same` with a kernel span smaller than the stride would need a negative crop: declined.
            let negativeCrop = padding == .same && (0..<2).contains { (kernel[$0] - 1) * dilations[$0] + 1 < strides[$0] }
            try check(node, [input], rng: &rng, expectSupported: !negativeCrop,
                      label: "deconv cin=\(cin) cout=\(cout) g=\(groups) k=\(kernel) s=\(strides) d=\(dilations) op=\(outputPadding) \(padding) \(h)x\(w)")
            tested += 1
        }
        XCTAssertGreaterThanOrEqual(tested, 80)
    }

    func testDeconv2DFixedConfigurations() throws {
        var rng = DNNLTestRNG(seed: 11)
        // (k, stride, padding, outputPadding)
        let cases: [(Int, Int, PaddingMode, Int)] = [
            (3, 2, .same, 0), (3, 2, .same, 1), (3, 2, .valid, 0), (3, 2, .valid, 1), (4, 2, .same, 0),
            (2, 2, .valid, 0), (5, 3, .same, 2), (3, 1, .same, 0),
            (3, 2, .explicit(top: 1, bottom: 0, left: 0, right: 2), 1),
        ]
        for (k, s, p, op) in cases {
            let attrs = Deconv2DAttributes(kernel: [k, k], strides: [s, s], padding: p, outputPadding: [op, op],
                                           outputChannels: 16, activation: .relu)
            let node = Node(name: "deconv", op: .deconv2d(attrs), inputs: ["x"], outputs: ["y"],
                            weights: ["weight": randomConstant([16, 16, k, k], &rng, scale: 0.1),
                                      "bias": randomConstant([16], &rng)])
            try check(node, [TensorType([1, 7, 6, 16])], rng: &rng, label: "deconv fixed k\(k) s\(s) \(p) op\(op)")
        }
    }

    // MARK: dense

    func testDenseRandomConfigurations() throws {
        var rng = DNNLTestRNG(seed: 0xDE5E)
        let shapes: [[Int]] = [[1, 0], [3, 0], [2, 5, 0], [1, 4, 3, 0], [2, 2, 3, 0]]
        for i in 0..<60 {
            let cin = rng.pick([1, 3, 16, 17, 64, 100]), cout = rng.pick([1, 2, 10, 16, 33])
            var shape = shapes[i % shapes.count]
            shape[shape.count - 1] = cin
            var weights = ["weight": randomConstant([cout, cin], &rng, scale: 1 / Float(cin).squareRoot())]
            if rng.int(0, 2) != 0 { weights["bias"] = randomConstant([cout], &rng) }
            let act = Self.activations[i % Self.activations.count]
            let node = Node(name: "dense", op: .dense(DenseAttributes(outputChannels: cout, activation: act)),
                            inputs: ["x"], outputs: ["y"], weights: weights)
            try check(node, [TensorType(shape)], threads: rng.pick([1, 2]), rng: &rng,
                      label: "dense \(shape)->\(cout) act=\(String(describing: act))")
        }
    }

    // MARK: pooling

    func testPool2DConfigurations() throws {
        var rng = DNNLTestRNG(seed: 0x9001)
        var tested = 0
        for kind in [PoolKind.max, .average] {
            // Pool 3 stride 2, same and valid, on odd and even sizes.
            for padding in [PaddingMode.same, .valid] {
                for (h, w) in [(7, 7), (8, 9), (3, 4), (1, 1)] {
                    let node = Node(name: "pool", op: .pool2d(Pool2DAttributes(kind: kind, kernel: [3, 3], strides: [2, 2],
                                                                                 padding: padding)),
                                    inputs: ["x"], outputs: ["y"])
                    let input = TensorType([2, h, w, 5])
                    guard (try? node.inferOutputTypes([input])) != nil else { continue }
                    try check(node, [input], rng: &rng, label: "pool \(kind) 3/2 \(padding) \(h)x\(w)")
                    tested += 1
                }
            }
            for _ in 0..<25 {
                let k = [rng.int(1, 4), rng.int(1, 4)], s = [rng.int(1, 3), rng.int(1, 3)]
                let padding: PaddingMode
                switch rng.int(0, 2) {
                case 0: padding = .valid
                case 1: padding = .same
                default: padding = .explicit(top: rng.int(0, k[0] - 1), bottom: rng.int(0, k[0] - 1),
                                             left: rng.int(0, k[1] - 1), right: rng.int(0, k[1] - 1))
                }
                let node = Node(name: "pool", op: .pool2d(Pool2DAttributes(kind: kind, kernel: k, strides: s, padding: padding)),
                                inputs: ["x"], outputs: ["y"])
                let input = TensorType([1, rng.int(1, 12), rng.int(1, 12), rng.pick([1, 3, 16, 19])])
                guard (try? node.inferOutputTypes([input])) != nil else { continue }
                try check(node, [input], rng: &rng, label: "pool \(kind) k\(k) s\(s) \(padding) \(input.shape)")
                tested += 1
            }
        }
        XCTAssertGreaterThan(tested, 40)
    }

    func testPool2DDeclinesWindowsInsidePadding() throws {
        let node = Node(name: "pool", op: .pool2d(Pool2DAttributes(kind: .average, kernel: [2, 2], strides: [1, 1],
                                                                     padding: .explicit(top: 2, bottom: 0, left: 0, right: 0))),
                        inputs: ["x"], outputs: ["y"])
        let input = TensorType([1, 4, 4, 3])
        let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: try node.inferOutputTypes([input]), threadCount: 1)
        XCTAssertNil(try OptimizedKernels.table[.pool2d]!(ctx))
    }

    func testGlobalPool2D() throws {
        var rng = DNNLTestRNG(seed: 3)
        for kind in [PoolKind.max, .average] {
            for keep in [false, true] {
                let node = Node(name: "gp", op: .globalPool2d(kind: kind, keepDims: keep), inputs: ["x"], outputs: ["y"])
                try check(node, [TensorType([2, 5, 7, 19])], rng: &rng, label: "globalPool \(kind) keep=\(keep)")
            }
        }
    }

    // MARK: batchNorm, activation, softmax, concat

    func testBatchNorm() throws {
        var rng = DNNLTestRNG(seed: 4)
        for (shape, axis) in [([2, 5, 6, 7], 3), ([3, 10], 1), ([2, 9, 4], 2), ([1, 4, 5, 6], 1), ([1, 4, 5, 6], 2)] {
            for affine in [false, true] {
                let c = shape[axis]
                var weights = ["mean": randomConstant([c], &rng),
                               "variance": floatConstant([c], (0..<c).map { _ in 0.1 + abs(rng.float()) })]
                if affine {
                    weights["gamma"] = randomConstant([c], &rng)
                    weights["beta"] = randomConstant([c], &rng)
                }
                let node = Node(name: "bn", op: .batchNorm(BatchNormAttributes(axis: axis, epsilon: 1e-3)),
                                inputs: ["x"], outputs: ["y"], weights: weights)
                try check(node, [TensorType(shape)], rng: &rng, label: "batchNorm \(shape) axis \(axis) affine=\(affine)")
            }
        }
    }

    func testStandaloneActivations() throws {
        var rng = DNNLTestRNG(seed: 6)
        for act in Self.activations.compactMap({ $0 }) {
            let node = Node(name: "act", op: .activation(act), inputs: ["x"], outputs: ["y"])
            try check(node, [TensorType([2, 5, 7, 3])], rng: &rng, inputScale: 4,
                      expectSupported: dnnlEltwiseChain(act).map { $0.count <= 1 && $0.first?.scale ?? 1 == 1 } ?? false,
                      label: "activation \(act)")
        }
    }

    func testSoftmax() throws {
        var rng = DNNLTestRNG(seed: 8)
        for (shape, axis) in [([2, 10], 1), ([1, 3, 4, 5], 3), ([2, 6, 5], 1), ([3, 4], 0), ([1, 1000], 1)] {
            let node = Node(name: "softmax", op: .softmax(axis: axis), inputs: ["x"], outputs: ["y"])
            try check(node, [TensorType(shape)], rng: &rng, inputScale: 5, label: "softmax \(shape) axis \(axis)")
        }
    }

    func testConcat() throws {
        var rng = DNNLTestRNG(seed: 9)
        let cases: [([[Int]], Int)] = [
            ([[1, 4, 5, 3], [1, 4, 5, 16], [1, 4, 5, 1]], 3),
            ([[2, 3, 5, 2], [2, 1, 5, 2]], 1),
            ([[2, 7], [2, 3]], 1),
            ([[1, 6], [2, 6]], 0),
            ([[1, 4, 4, 8]], 3),
        ]
        for (shapes, axis) in cases {
            let names = shapes.indices.map { "x\($0)" }
            let node = Node(name: "concat", op: .concat(axis: axis), inputs: names, outputs: ["y"])
            try check(node, shapes.map { TensorType($0) }, rng: &rng, label: "concat \(shapes) axis \(axis)")
        }
    }

    func testElementwiseBinary() throws {
        var rng = DNNLTestRNG(seed: 13)
        let pairs: [([Int], [Int])] = [
            ([2, 5, 7, 3], [2, 5, 7, 3]), ([1, 9, 11, 17], [17]), ([1, 9, 11, 17], [1, 1, 1, 17]),
            ([3, 4, 5], [3, 1, 5]), ([1, 1, 1, 6], [1, 4, 5, 6]), ([4, 33], [4, 33]), ([2, 3, 4, 5], [1, 3, 1, 1]),
        ]
        for kind in [ElementwiseKind.add, .subtract, .multiply, .average, .maximum, .minimum] {
            for (a, b) in pairs {
                let node = Node(name: "ew", op: .elementwise(kind), inputs: ["a", "b"], outputs: ["y"])
                let types = [TensorType(a), TensorType(b)]
                guard let out = try? node.inferOutputTypes(types) else { continue }
                let supported = kind != .maximum && kind != .minimum
                    && (out[0].shape == a || (kind != .subtract && out[0].shape == b))
                try check(node, types, rng: &rng, expectSupported: supported, label: "elementwise \(kind) \(a) \(b)")
            }
            let three = Node(name: "ew3", op: .elementwise(kind), inputs: ["a", "b", "c"], outputs: ["y"])
            if kind != .subtract {
                try check(three, Array(repeating: TensorType([2, 3]), count: 3), rng: &rng, expectSupported: false,
                          label: "elementwise \(kind) 3 inputs")
            }
        }
    }

    // MARK: declines, errors, threads

    func testDeclinesNonFloat32() throws {
        var rng = DNNLTestRNG(seed: 10)
        let node = convNode(cin: 4, cout: 4, kernel: [3, 3], strides: [1, 1], dilations: [1, 1], padding: .same,
                            groups: 1, bias: false, activation: nil, rng: &rng)
        let input = TensorType([1, 5, 5, 4], .float16)
        let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: try node.inferOutputTypes([input]), threadCount: 1)
        XCTAssertNil(try OptimizedKernels.table[.conv2d]!(ctx))
    }

    /// A oneDNN failure other than "unimplemented" at prepare is a `kernelFailure` naming the node
    /// and the status (here an output shape inconsistent with the convolution).
    func testPrepareFailureIsKernelFailure() throws {
        var rng = DNNLTestRNG(seed: 14)
        let node = convNode(cin: 4, cout: 4, kernel: [3, 3], strides: [1, 1], dilations: [1, 1], padding: .same,
                            groups: 1, bias: false, activation: nil, rng: &rng)
        let ctx = KernelContext(node: node, inputTypes: [TensorType([1, 5, 5, 4])], outputTypes: [TensorType([1, 3, 5, 4])],
                                threadCount: 1)
        XCTAssertThrowsError(try OptimizedKernels.table[.conv2d]!(ctx)) { error in
            guard case let RuntimeError.kernelFailure(node, message, _)? = error as? RuntimeError else {
                return XCTFail("unexpected error \(error)")
            }
            XCTAssertEqual(node, "conv")
            XCTAssertTrue(message.contains("dnnl_invalid_arguments"), message)
        }
    }

    func testThreadCountSetting() {
        DNNLRuntime.setThreadCount(1)
        XCTAssertEqual(DNNLRuntime.threadCount, 1)
        DNNLRuntime.setThreadCount(2)
        XCTAssertEqual(DNNLRuntime.threadCount, 2)
        XCTAssertFalse(DNNLRuntime.version.isEmpty)
    }

    /// 8 threads run one prepared kernel at the same time (each several times): on the same input
    /// they give bit-identical outputs equal to a sequential run; on different inputs each matches
    /// its own sequential result.
    func testConcurrentRuns() throws {
        var rng = DNNLTestRNG(seed: 12)
        // (64, 64, 1) at 24×24: the Winograd kernel (DNNLBlockedConvolution) where the CPU has it.
        for (cin, cout, g) in [(32, 32, 1), (16, 16, 16), (64, 64, 1)] {
            let node = convNode(cin: cin, cout: cout, kernel: [3, 3], strides: [1, 1], dilations: [1, 1], padding: .same,
                                groups: g, bias: true, activation: .swish, rng: &rng)
            let input = TensorType([1, 24, 24, cin])
            let outType = try node.inferOutputTypes([input])[0]
            let ctx = KernelContext(node: node, inputTypes: [input], outputTypes: [outType], threadCount: 2)
            let kernel = try XCTUnwrap(try OptimizedKernels.table[.conv2d]!(ctx))
            let inputs = (0..<8).map { _ in (0..<input.elementCount).map { _ in rng.float() } }
            let sequential = inputs.map { runKernel(kernel, [$0], outputCounts: [outType.elementCount])[0] }
            for sameInput in [true, false] {
                let results = Results(count: 8 * 4)
                let start = DispatchSemaphore(value: 0), done = DispatchGroup()
                for t in 0..<8 {
                    done.enter()
                    let thread = Thread {
                        start.wait()
                        for r in 0..<4 {
                            results.set(t * 4 + r, runKernel(kernel, [inputs[sameInput ? 0 : t]],
                                                             outputCounts: [outType.elementCount])[0])
                        }
                        done.leave()
                    }
                    thread.start()
                }
                for _ in 0..<8 { start.signal() }
                XCTAssertEqual(done.wait(timeout: .now() + 120), .success, "concurrent runs did not finish")
                for t in 0..<8 {
                    for r in 0..<4 {
                        XCTAssertEqual(results.get(t * 4 + r), sequential[sameInput ? 0 : t],
                                       "thread \(t) run \(r) differs (g=\(g), same input: \(sameInput))")
                    }
                }
            }
        }
    }

    // MARK: - Harness

    static let activations: [Activation?] = [
        nil, .identity, .relu, .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0),
        .clippedReLU(maxValue: nil, negativeSlope: 0.1, threshold: 0),
        .clippedReLU(maxValue: 4, negativeSlope: 0.2, threshold: 0),
        .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 1),  // no oneDNN equivalent: loop after
        .leakyReLU(alpha: 0.3), .elu(alpha: 1), .elu(alpha: 0.5), .selu, .sigmoid,
        .hardSigmoid(alpha: 0.2, beta: 0.5), .hardSigmoid(alpha: 1.0 / 6, beta: 0.5), .tanh, .softplus,
        .softsign,  // no oneDNN equivalent: loop after
        .swish, .gelu(approximate: true), .gelu(approximate: false), .exponential,
        .thresholdedReLU(theta: 1),  // no oneDNN equivalent: loop after
        .thresholdedReLU(theta: 0), .linear(alpha: 2, beta: 0.5),
    ]

    private func randomPadding(_ rng: inout DNNLTestRNG, maxPad: Int) -> PaddingMode {
        switch rng.int(0, 2) {
        case 0: return .valid
        case 1: return .same
        default: return .explicit(top: rng.int(0, maxPad), bottom: rng.int(0, maxPad),
                                  left: rng.int(0, maxPad), right: rng.int(0, maxPad))
        }
    }

    private func convNode(cin: Int, cout: Int, kernel: [Int], strides: [Int], dilations: [Int], padding: PaddingMode,
                          groups: Int, bias: Bool, activation: Activation?, rng: inout DNNLTestRNG,
                          weightScale: Float = 1) -> Node
    {
        let fanIn = cin / groups * kernel[0] * kernel[1]
        var weights = ["weight": randomConstant([cout, cin / groups, kernel[0], kernel[1]], &rng,
                                                scale: weightScale / Float(fanIn).squareRoot())]
        if bias { weights["bias"] = randomConstant([cout], &rng) }
        let attrs = Conv2DAttributes(kernel: kernel, strides: strides, dilations: dilations, padding: padding,
                                     groups: groups, outputChannels: cout, activation: activation)
        return Node(name: "conv", op: .conv2d(attrs), inputs: ["x"], outputs: ["y"], weights: weights)
    }

    /// Runs the oneDNN kernel and the oracle on the same random inputs and compares them.
    private func check(_ node: Node, _ inputTypes: [TensorType], threads: Int = 2, rng: inout DNNLTestRNG,
                       inputScale: Float = 1, expectSupported: Bool = true, label: String,
                       file: StaticString = #filePath, line: UInt = #line) throws
    {
        let outputTypes = try node.inferOutputTypes(inputTypes)
        let ctx = KernelContext(node: node, inputTypes: inputTypes, outputTypes: outputTypes, threadCount: threads)
        let key = node.op.kind
        let factory = try XCTUnwrap(OptimizedKernels.table[key], "no oneDNN factory for \(key)", file: file, line: line)
        guard let kernel = try factory(ctx) else {
            if expectSupported { XCTFail("\(label): oneDNN kernel declined", file: file, line: line) }
            return
        }
        if !expectSupported { XCTFail("\(label): expected a decline", file: file, line: line) }
        let inputs = inputTypes.map { t in (0..<t.elementCount).map { _ in rng.float() * inputScale } }
        let counts = outputTypes.map(\.elementCount)
        let got = runKernel(kernel, inputs, outputCounts: counts)
        let (want, oracleName) = try oracle(ctx, inputs)
        for (o, (g, w)) in zip(got, want).enumerated() {
            XCTAssertEqual(g.count, w.count, file: file, line: line)
            let scale = max(1, w.reduce(0) { max($0, abs($1)) })
            var worst: Float = 0, at = 0
            for i in 0..<min(g.count, w.count) {
                let d = abs(g[i] - w[i])
                if !(d <= worst) { worst = d; at = i }  // NaN counts as worst
            }
            if ProcessInfo.processInfo.environment["DNNL_TEST_VERBOSE"] != nil {
                let impl = (kernel as? DNNLKernel)?.executable.implementation ?? "?"
                print("\(label) [\(impl) vs \(oracleName)] n=\(g.count) maxdiff=\(worst) scale=\(scale)")
            }
            if kernel.supportsInPlace, o == 0 {
                XCTAssertEqual(ctx.inputTypes[0].shape, ctx.outputTypes[0].shape, "\(label): in place needs equal shapes",
                               file: file, line: line)
                XCTAssertEqual(runInPlace(kernel, inputs), g, "\(label): in-place run differs", file: file, line: line)
            }
            if !(worst <= 1e-4 * scale) {
                XCTFail("\(label): output \(o) max |diff| \(worst) at \(at) (got \(g[at]), want \(w[at])), tolerance \(1e-4 * scale)",
                        file: file, line: line)
            }
        }
    }

    /// Runs `kernel` with output 0 sharing input 0's buffer.
    private func runInPlace(_ kernel: Kernel, _ inputs: [[Float]]) -> [Float] {
        var buffers = inputs.map { v -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(v.count, 1))
            p.initialize(from: v, count: v.count)
            return p
        }
        defer { buffers.forEach { $0.deallocate() } }
        kernel.run(inputs: buffers.map { UnsafePointer($0) }, outputs: [buffers[0]])
        let result = Array(UnsafeBufferPointer(start: buffers[0], count: inputs[0].count))
        buffers.removeAll(keepingCapacity: true)
        return result
    }

    /// Outputs of the reference kernel for `ctx` when one exists, else of the naive loops below.
    private func oracle(_ ctx: KernelContext, _ inputs: [[Float]]) throws -> ([[Float]], String) {
        let counts = ctx.outputTypes.map(\.elementCount)
        if let f = KernelRegistry.reference[ctx.node.op.kind],
           let kernel = try? f(ctx) {
            return (runKernel(kernel, inputs, outputCounts: counts), "reference")
        }
        return ([naive(ctx, inputs)], "naive")
    }
}

// MARK: - Helpers

private final class Results: @unchecked Sendable {
    private var values: [[Float]]
    private let lock = NSLock()
    init(count: Int) { values = Array(repeating: [], count: count) }
    func set(_ i: Int, _ v: [Float]) { lock.lock(); values[i] = v; lock.unlock() }
    func get(_ i: Int) -> [Float] { lock.lock(); defer { lock.unlock() }; return values[i] }
}


private struct DNNLTestRNG {
    var base: SeededGenerator
    init(seed: UInt64) { base = SeededGenerator(seed: seed) }
    mutating func next() -> UInt64 { base.next() }
    /// Uniform in [−1, 1).
    mutating func float() -> Float { Float(next() >> 40) / Float(1 << 23) - 1 }
    /// Uniform in lo…hi (inclusive).
    mutating func int(_ lo: Int, _ hi: Int) -> Int { lo + Int(next() % UInt64(hi - lo + 1)) }
    mutating func pick<T>(_ xs: [T]) -> T { xs[int(0, xs.count - 1)] }
}

private func randomConstant(_ shape: [Int], _ rng: inout DNNLTestRNG, scale: Float = 1) -> ConstantTensor {
    floatConstant(shape, (0..<shape.reduce(1, *)).map { _ in rng.float() * scale })
}


private func byteStorage(_ bytes: [UInt8]) -> ByteStorage { .copying(bytes) }

// MARK: - Naive oracle (used until/unless the reference kernels accept the node)

private func naive(_ ctx: KernelContext, _ inputs: [[Float]]) -> [Float] {
    let node = ctx.node, out = ctx.outputTypes[0]
    let x = inputs[0], xs = ctx.inputTypes[0].shape
    func w(_ name: String) -> [Float]? { node.weights[name]?.floats() }
    switch node.op {
    case let .conv2d(a):
        let (n, h, wd, cin) = (xs[0], xs[1], xs[2], xs[3]), (oh, ow, cout) = (out.shape[1], out.shape[2], out.shape[3])
        let p = a.padding.resolve(inH: h, inW: wd, kernel: (a.kernel[0], a.kernel[1]),
                                  stride: (a.strides[0], a.strides[1]), dilation: (a.dilations[0], a.dilations[1]))
        let wt = w("weight")!, b = w("bias"), cinG = cin / a.groups, coutG = cout / a.groups
        var y = [Float](repeating: 0, count: out.elementCount)
        for b0 in 0..<n { for i in 0..<oh { for j in 0..<ow { for oc in 0..<cout {
            let g = oc / coutG
            var acc: Float = b?[oc] ?? 0
            for ki in 0..<a.kernel[0] {
                let ih = i * a.strides[0] - p.top + ki * a.dilations[0]
                guard ih >= 0, ih < h else { continue }
                for kj in 0..<a.kernel[1] {
                    let iw = j * a.strides[1] - p.left + kj * a.dilations[1]
                    guard iw >= 0, iw < wd else { continue }
                    for ic in 0..<cinG {
                        acc += x[((b0 * h + ih) * wd + iw) * cin + g * cinG + ic]
                            * wt[((oc * cinG + ic) * a.kernel[0] + ki) * a.kernel[1] + kj]
                    }
                }
            }
            y[((b0 * oh + i) * ow + j) * cout + oc] = a.activation?.apply(acc) ?? acc
        } } } }
        return y
    case let .deconv2d(a):
        let (n, h, wd, cin) = (xs[0], xs[1], xs[2], xs[3]), (oh, ow, cout) = (out.shape[1], out.shape[2], out.shape[3])
        let wt = w("weight")!, b = w("bias"), cinG = cin / a.groups, coutG = cout / a.groups
        func crop(_ axis: Int, _ input: Int, _ output: Int) -> Int {
            let full = (input - 1) * a.strides[axis] + (a.kernel[axis] - 1) * a.dilations[axis] + 1 + a.outputPadding[axis]
            switch a.padding {
            case .valid: return 0
            case .same: return (full - output) / 2
            case let .explicit(t, _, l, _): return axis == 0 ? t : l
            }
        }
        let top = crop(0, h, oh), left = crop(1, wd, ow)
        var y = [Float](repeating: 0, count: out.elementCount)
        for b0 in 0..<n { for i in 0..<h { for j in 0..<wd { for ic in 0..<cin {
            let g = ic / cinG, v = x[((b0 * h + i) * wd + j) * cin + ic]
            for ki in 0..<a.kernel[0] {
                let o1 = i * a.strides[0] + ki * a.dilations[0] - top
                guard o1 >= 0, o1 < oh else { continue }
                for kj in 0..<a.kernel[1] {
                    let o2 = j * a.strides[1] + kj * a.dilations[1] - left
                    guard o2 >= 0, o2 < ow else { continue }
                    for oc in 0..<coutG {
                        y[((b0 * oh + o1) * ow + o2) * cout + g * coutG + oc] +=
                            v * wt[((ic * coutG + oc) * a.kernel[0] + ki) * a.kernel[1] + kj]
                    }
                }
            }
        } } } }
        for i in 0..<y.count {
            let v = y[i] + (b?[i % cout] ?? 0)
            y[i] = a.activation?.apply(v) ?? v
        }
        return y
    case let .dense(a):
        let cin = xs.last!, cout = a.outputChannels, m = x.count / cin
        let wt = w("weight")!, b = w("bias")
        var y = [Float](repeating: 0, count: m * cout)
        for r in 0..<m { for o in 0..<cout {
            var acc: Float = b?[o] ?? 0
            for k in 0..<cin { acc += x[r * cin + k] * wt[o * cin + k] }
            y[r * cout + o] = a.activation?.apply(acc) ?? acc
        } }
        return y
    case let .pool2d(a):
        let p = a.padding.resolve(inH: xs[1], inW: xs[2], kernel: (a.kernel[0], a.kernel[1]),
                                  stride: (a.strides[0], a.strides[1]), dilation: (1, 1))
        return naivePool(x, xs, out.shape, kind: a.kind, kernel: a.kernel, strides: a.strides, top: p.top, left: p.left)
    case let .globalPool2d(kind, _):
        return naivePool(x, xs, [xs[0], 1, 1, xs[3]], kind: kind, kernel: [xs[1], xs[2]], strides: [1, 1], top: 0, left: 0)
    case let .batchNorm(a):
        let c = xs[a.axis], inner = xs[(a.axis + 1)...].reduce(1, *)
        let mean = w("mean")!, variance = w("variance")!, gamma = w("gamma"), beta = w("beta")
        return x.indices.map { i in
            let ch = (i / inner) % c
            return (gamma?[ch] ?? 1) * (x[i] - mean[ch]) / (variance[ch] + a.epsilon).squareRoot() + (beta?[ch] ?? 0)
        }
    case let .activation(act):
        return x.map { act.apply($0) }
    case let .softmax(axis):
        let len = xs[axis], inner = xs[(axis + 1)...].reduce(1, *), outer = x.count / (len * inner)
        var y = x
        for o in 0..<outer { for i in 0..<inner {
            let idx = (0..<len).map { (o * len + $0) * inner + i }
            let m = idx.map { x[$0] }.max()!
            let e = idx.map { exp(Double(x[$0] - m)) }
            let s = e.reduce(0, +)
            for (k, j) in idx.enumerated() { y[j] = Float(e[k] / s) }
        } }
        return y
    case let .concat(axis):
        let outer = out.shape[..<axis].reduce(1, *)
        var y: [Float] = []
        for o in 0..<outer {
            for (t, v) in zip(ctx.inputTypes, inputs) {
                let chunk = t.shape[axis...].reduce(1, *)
                y += v[(o * chunk)..<((o + 1) * chunk)]
            }
        }
        return y
    default:
        fatalError("no naive oracle for \(node.op.name)")
    }
}

private func naivePool(_ x: [Float], _ xs: [Int], _ ys: [Int], kind: PoolKind, kernel: [Int], strides: [Int],
                       top: Int, left: Int) -> [Float]
{
    let (n, h, w, c) = (xs[0], xs[1], xs[2], xs[3]), (oh, ow) = (ys[1], ys[2])
    var y = [Float](repeating: 0, count: n * oh * ow * c)
    for b in 0..<n { for i in 0..<oh { for j in 0..<ow { for ch in 0..<c {
        var acc: Float = kind == .max ? -.infinity : 0
        var count = 0
        for ki in 0..<kernel[0] {
            let ih = i * strides[0] - top + ki
            guard ih >= 0, ih < h else { continue }
            for kj in 0..<kernel[1] {
                let iw = j * strides[1] - left + kj
                guard iw >= 0, iw < w else { continue }
                let v = x[((b * h + ih) * w + iw) * c + ch]
                acc = kind == .max ? max(acc, v) : acc + v
                count += 1
            }
        }
        y[((b * oh + i) * ow + j) * c + ch] = kind == .max ? acc : acc / Float(count)
    } } } }
    return y
}
