import MLGraph
@testable import MLRuntime
import TestSupport
import XCTest

/// Reference conv2d / deconv2d / dense against hand-computed values and independent identities.
final class ConvolutionTests: XCTestCase {
    func conv(_ x: NDArray, _ a: Conv2DAttributes, weight: [Float], bias: [Float]? = nil) throws -> NDArray {
        var w = ["weight": const([a.outputChannels, x.shape[3] / a.groups, a.kernel[0], a.kernel[1]], weight)]
        if let bias { w["bias"] = const([a.outputChannels], bias) }
        return try runOp(.conv2d(a), [x], weights: w)
    }

    func testConvValidWithBiasAndFusedReLU() throws {
        // out = 1·x[i][j] + 2·x[i][j+1] + 3·x[i+1][j] + 4·x[i+1][j+1] on 1…9 → 37, 47, 67, 77; −40, relu.
        let y = try conv(iota([1, 3, 3, 1]), Conv2DAttributes(kernel: [2, 2], padding: .valid, outputChannels: 1, activation: .relu),
                         weight: [1, 2, 3, 4], bias: [-40])
        XCTAssertEqual(y.shape, [1, 2, 2, 1])
        XCTAssertEqual(y.scalars, [0, 7, 27, 37])
    }

    func testConvSameStride2EvenInputPadsBottomRight() throws {
        // 4×4, k3, s2 → 2×2, total padding 1, all of it bottom/right. Window sums of 1…16.
        let y = try conv(iota([1, 4, 4, 1]), Conv2DAttributes(kernel: [3, 3], strides: [2, 2], padding: .same, outputChannels: 1),
                         weight: [Float](repeating: 1, count: 9))
        XCTAssertEqual(y.shape, [1, 2, 2, 1])
        XCTAssertEqual(y.scalars, [54, 45, 72, 54])
    }

    func testConvSameStride2OddInputPadsBothSides() throws {
        // 5×5, k3, s2 → 3×3, total padding 2: one on each side. Window sums of 1…25.
        let y = try conv(iota([1, 5, 5, 1]), Conv2DAttributes(kernel: [3, 3], strides: [2, 2], padding: .same, outputChannels: 1),
                         weight: [Float](repeating: 1, count: 9))
        XCTAssertEqual(y.shape, [1, 3, 3, 1])
        XCTAssertEqual(y.scalars, [16, 33, 28, 69, 117, 87, 76, 123, 88])
    }

    func testConvSameOddKernelStride1KeepsSize() throws {
        // 3×3 same, k3 ones on 1…9: window sums with one zero pixel around.
        let y = try conv(iota([1, 3, 3, 1]), Conv2DAttributes(kernel: [3, 3], padding: .same, outputChannels: 1),
                         weight: [Float](repeating: 1, count: 9))
        XCTAssertEqual(y.scalars, [12, 21, 16, 27, 45, 33, 24, 39, 28])
    }

    func testConvDilation() throws {
        // k3 dilation 2 on 5×5 reads x[2ky][2kx] = 10ky + 2kx + 1, weights 1…9 → 22 + 199 + 556.
        let y = try conv(iota([1, 5, 5, 1]), Conv2DAttributes(kernel: [3, 3], dilations: [2, 2], padding: .valid, outputChannels: 1),
                         weight: (1...9).map(Float.init))
        XCTAssertEqual(y.shape, [1, 1, 1, 1])
        XCTAssertEqual(y.scalars, [777])
    }

    func testConvWeightLayoutIsCoutCinKhKw() throws {
        // 1×2 kernel, 2 input channels: pixel0 = (1, 10), pixel1 = (100, 1000);
        // weight[0, ic, 0, kx] = [[1, 2], [3, 4]] → 1·1 + 2·100 + 3·10 + 4·1000.
        let y = try conv(nd([1, 1, 2, 2], [1, 10, 100, 1000]), Conv2DAttributes(kernel: [1, 2], padding: .valid, outputChannels: 1),
                         weight: [1, 2, 3, 4])
        XCTAssertEqual(y.scalars, [4231])
    }

    func testConvGroups() throws {
        // groups 2: out0 = [1, 2]·[1, 10], out1 = [3, 4]·[100, 1000].
        let y = try conv(nd([1, 1, 1, 4], [1, 2, 3, 4]), Conv2DAttributes(kernel: [1, 1], padding: .valid, groups: 2, outputChannels: 2),
                         weight: [1, 10, 100, 1000])
        XCTAssertEqual(y.scalars, [21, 4300])
        // Depthwise with multiplier 2: groups = Cin = 3, Cout = 6.
        let d = try conv(nd([1, 1, 1, 3], [1, 10, 100]), Conv2DAttributes(kernel: [1, 1], padding: .valid, groups: 3, outputChannels: 6),
                         weight: [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(d.scalars, [1, 2, 30, 40, 500, 600])
    }

    func testConvExplicitAsymmetricPadding() throws {
        let y = try conv(nd([1, 2, 2, 1], [1, 2, 3, 4]),
                         Conv2DAttributes(kernel: [1, 1], padding: .explicit(top: 1, bottom: 0, left: 0, right: 2), outputChannels: 1),
                         weight: [1])
        XCTAssertEqual(y.shape, [1, 3, 4, 1])
        XCTAssertEqual(y.scalars, [0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0])
    }

    func testConv1x1EqualsDense() throws {
        let x = nd([1, 3, 4, 5], randomFloats(count: 60, seed: 3))
        let w = randomFloats(count: 30, seed: 4), b = randomFloats(count: 6, seed: 5)
        let c = try conv(x, Conv2DAttributes(kernel: [1, 1], padding: .valid, outputChannels: 6), weight: w, bias: b)
        let d = try runOp(.dense(DenseAttributes(outputChannels: 6)), [x], weights: ["weight": const([6, 5], w), "bias": const([6], b)])
        XCTAssertEqual(c.shape, d.shape)
        assertClose(c.scalars, d.scalars, tolerance: 1e-5)
    }

    func testConvOverWholeInputEqualsDenseOnFlattenedNHWC() throws {
        // A valid conv whose kernel covers the input is a dense layer over the flattened (y, x, c)
        // pixels, with weight[o, (y·W + x)·C + c] = convWeight[o, c, y, x].
        let (h, w, c, o) = (3, 2, 4, 5)
        let x = nd([1, h, w, c], randomFloats(count: h * w * c, seed: 6))
        let cw = randomFloats(count: o * c * h * w, seed: 7)
        var dw = [Float](repeating: 0, count: cw.count)
        for oi in 0..<o { for ci in 0..<c { for yi in 0..<h { for xi in 0..<w {
            dw[oi * h * w * c + (yi * w + xi) * c + ci] = cw[((oi * c + ci) * h + yi) * w + xi]
        } } } }
        let y = try conv(x, Conv2DAttributes(kernel: [h, w], padding: .valid, outputChannels: o), weight: cw)
        let d = try runOp(.dense(DenseAttributes(outputChannels: o)), [x.reshaped([1, h * w * c])], weights: ["weight": const([o, h * w * c], dw)])
        assertClose(y.scalars, d.scalars, tolerance: 1e-5)
    }

    // MARK: deconv2d

    func deconv(_ x: NDArray, _ a: Deconv2DAttributes, weight: [Float], bias: [Float]? = nil) throws -> NDArray {
        var w = ["weight": const([x.shape[3], a.outputChannels / a.groups, a.kernel[0], a.kernel[1]], weight)]
        if let bias { w["bias"] = const([a.outputChannels], bias) }
        return try runOp(.deconv2d(a), [x], weights: w)
    }

    func testDeconvStride2ValidScattersKernelBlocks() throws {
        // Each input pixel becomes x·kernel in its own 2×2 block.
        let y = try deconv(nd([1, 2, 2, 1], [1, 2, 3, 4]), Deconv2DAttributes(kernel: [2, 2], strides: [2, 2], padding: .valid, outputChannels: 1),
                           weight: [1, 2, 3, 4])
        XCTAssertEqual(y.shape, [1, 4, 4, 1])
        XCTAssertEqual(y.scalars, [1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16])
    }

    func testDeconvStride1OverlapsAdd() throws {
        let y = try deconv(nd([1, 2, 2, 1], [1, 2, 3, 4]), Deconv2DAttributes(kernel: [2, 2], strides: [1, 1], padding: .valid, outputChannels: 1),
                           weight: [1, 1, 1, 1])
        XCTAssertEqual(y.shape, [1, 3, 3, 1])
        XCTAssertEqual(y.scalars, [1, 3, 2, 4, 10, 6, 3, 7, 4])
    }

    func testDeconvSameCropsTopLeftHalf() throws {
        // 1-D along H: [1, 2], kernel ones, stride 2.
        // k3: full [1, 1, 3, 2, 2], out 4, total 1 → top 0 → [1, 1, 3, 2] (TF conv2d_transpose SAME).
        let k3 = try deconv(nd([1, 2, 1, 1], [1, 2]), Deconv2DAttributes(kernel: [3, 1], strides: [2, 1], padding: .same, outputChannels: 1),
                            weight: [1, 1, 1])
        XCTAssertEqual(k3.shape, [1, 4, 1, 1])
        XCTAssertEqual(k3.scalars, [1, 1, 3, 2])
        // k4: full [1, 1, 3, 3, 2, 2], out 4, total 2 → top 1 → [1, 3, 3, 2].
        let k4 = try deconv(nd([1, 2, 1, 1], [1, 2]), Deconv2DAttributes(kernel: [4, 1], strides: [2, 1], padding: .same, outputChannels: 1),
                            weight: [1, 1, 1, 1])
        XCTAssertEqual(k4.scalars, [1, 3, 3, 2])
    }

    func testDeconvOutputPaddingAndBias() throws {
        // valid, k2 s2, outputPadding 1 on H: full = 5 rows, the last receives only the bias.
        let y = try deconv(nd([1, 2, 1, 1], [1, 2]),
                           Deconv2DAttributes(kernel: [2, 1], strides: [2, 1], padding: .valid, outputPadding: [1, 0], outputChannels: 1),
                           weight: [1, 1], bias: [0.5])
        XCTAssertEqual(y.shape, [1, 5, 1, 1])
        XCTAssertEqual(y.scalars, [1.5, 1.5, 2.5, 2.5, 0.5])
    }

    func testDeconvExplicitCrop() throws {
        // The 4×4 full output of testDeconvStride2ValidScattersKernelBlocks, minus row 0 and column 3.
        let y = try deconv(nd([1, 2, 2, 1], [1, 2, 3, 4]),
                           Deconv2DAttributes(kernel: [2, 2], strides: [2, 2], padding: .explicit(top: 1, bottom: 0, left: 0, right: 1), outputChannels: 1),
                           weight: [1, 2, 3, 4])
        XCTAssertEqual(y.shape, [1, 3, 3, 1])
        XCTAssertEqual(y.scalars, [3, 4, 6, 3, 6, 4, 9, 12, 12])
    }

    func testDeconvIsTheAdjointOfConv() throws {
        // <conv(X), Y> = <X, deconv(Y)> when both use the same weight array (conv [Cout, Cin/g, kH, kW]
        // is deconv [Cin', Cout'/g, kH, kW] with Cin' = conv Cout) and matching geometry.
        struct Case { let k: [Int]; let s: [Int]; let d: [Int]; let p: PaddingMode; let g: Int; let small: [Int] }
        let cases = [
            Case(k: [3, 3], s: [2, 2], d: [1, 1], p: .valid, g: 1, small: [3, 4]),
            Case(k: [3, 2], s: [2, 1], d: [1, 1], p: .same, g: 2, small: [3, 3]),
            Case(k: [2, 2], s: [1, 1], d: [2, 2], p: .valid, g: 1, small: [2, 3]),
            Case(k: [4, 4], s: [2, 2], d: [1, 1], p: .same, g: 1, small: [2, 2]),
        ]
        let (cBig, cSmall) = (4, 6)  // conv: cBig → cSmall channels; deconv: cSmall → cBig
        for (i, t) in cases.enumerated() {
            let big = (0..<2).map { a -> Int in
                t.p == .same ? t.small[a] * t.s[a] : (t.small[a] - 1) * t.s[a] + (t.k[a] - 1) * t.d[a] + 1
            }
            let w = randomFloats(count: cSmall * (cBig / t.g) * t.k[0] * t.k[1], seed: UInt64(10 + i))
            let x = nd([1, big[0], big[1], cBig], randomFloats(count: big[0] * big[1] * cBig, seed: UInt64(20 + i)))
            let yv = nd([1, t.small[0], t.small[1], cSmall], randomFloats(count: t.small[0] * t.small[1] * cSmall, seed: UInt64(30 + i)))
            let cx = try conv(x, Conv2DAttributes(kernel: t.k, strides: t.s, dilations: t.d, padding: t.p, groups: t.g, outputChannels: cSmall), weight: w)
            let dy = try deconv(yv, Deconv2DAttributes(kernel: t.k, strides: t.s, dilations: t.d, padding: t.p, groups: t.g, outputChannels: cBig), weight: w)
            XCTAssertEqual(cx.shape, yv.shape, "case \(i)")
            XCTAssertEqual(dy.shape, x.shape, "case \(i)")
            XCTAssertEqual(dot(cx.scalars, yv.scalars), dot(x.scalars, dy.scalars), accuracy: 1e-4, "case \(i)")
        }
    }

    // MARK: dense

    func testDenseRank3WithBias() throws {
        // rows [1, 2, 3], [4, 5, 6]; W = [[1, 0, −1], [2, 1, 0]]; b = [10, 20].
        let y = try runOp(.dense(DenseAttributes(outputChannels: 2)), [nd([1, 2, 3], [1, 2, 3, 4, 5, 6])],
                          weights: ["weight": const([2, 3], [1, 0, -1, 2, 1, 0]), "bias": const([2], [10, 20])])
        XCTAssertEqual(y.shape, [1, 2, 2])
        XCTAssertEqual(y.scalars, [8, 24, 8, 33])
    }

    func testDenseFusedActivation() throws {
        let y = try runOp(.dense(DenseAttributes(outputChannels: 2, activation: .leakyReLU(alpha: 0.5))), [nd([1, 2], [1, 2])],
                          weights: ["weight": const([2, 2], [1, 1, -1, -1])])
        XCTAssertEqual(y.scalars, [3, -1.5])
    }
}
