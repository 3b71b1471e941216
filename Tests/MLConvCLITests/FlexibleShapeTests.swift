// Flexible input shapes (docs/FLEXIBLE_SHAPES.md). References: Fixtures/flexible, made by
// Scripts/make_flexible_shape_fixtures.py — a fully-convolutional tf.keras model run by Keras at
// three input sizes, and NeuralNetworkBuilder models (shapeRange, enumeratedShapes,
// imageSizeRange) with NumPy evaluations of the conv + ReLU formula. The coremltools side of the
// `keras --flexible-shape` → .mlmodel round trip is Scripts/check_flexible_shape_export.py.
import CoreMLFormat
import Foundation
import ImageIO
import KerasFrontend
import MLBundle
import MLConvCLI
import MLGraph
import MLPrediction
import MLRuntime
import TestSupport
import Diagnostics
import XCTest

final class FlexibleShapeTests: XCTestCase {
    static let dir = TestPaths.repositoryRoot.appendingPathComponent("Fixtures/flexible")

    func file(_ name: String) -> URL { Self.dir.appendingPathComponent(name) }
    func npy(_ name: String) throws -> NDArray { try NPY.read(contentsOf: file(name)) }

    /// Converts fcn.h5 (default 8×8) with `extra` options to `name` in a temporary directory.
    func convertFCN(_ name: String, _ extra: [String]) throws -> URL {
        let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent(name)
        let r = CLIRun(["keras", file("fcn.h5").path, "--input-shape", "image=8,8,3"] + extra + ["-o", out.path])
        XCTAssertEqual(r.status, 0, r.err)
        return out
    }

    func assertMatches(_ got: NDArray?, _ expected: NDArray, tolerance: Float = 1e-4, _ what: String,
                       file: StaticString = #filePath, line: UInt = #line) {
        guard let got else { return XCTFail("\(what): no output", file: file, line: line) }
        XCTAssertEqual(got.shape, expected.shape, what, file: file, line: line)
        XCTAssertLessThanOrEqual(maxAbsDiff(got.scalars, expected.scalars), tolerance, what, file: file, line: line)
        // The reference is not all zeros (ReLU could make it so): the check sees the network.
        XCTAssertGreaterThan(expected.scalars.map(abs).max() ?? 0, 0.1, what, file: file, line: line)
    }

    /// [1, H, W, C] → [1, C, H, W] (the IR input of a Core ML [C, H, W] multi-array).
    func nchw(_ a: NDArray) throws -> NDArray {
        let (h, w, c) = (a.shape[1], a.shape[2], a.shape[3])
        var out = [Float](repeating: 0, count: a.count)
        let s = a.scalars
        for y in 0..<h { for x in 0..<w { for k in 0..<c { out[(k * h + y) * w + x] = s[(y * w + x) * c + k] } } }
        return try NDArray(shape: [1, c, h, w], scalars: out)
    }

    func assertNotAllowed(_ model: Model, _ input: String, _ array: NDArray, mentions: [String],
                          file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try model.prediction(from: [input: array]), file: file, line: line) { e in
            guard case let RuntimeError.shapeNotAllowed(name, found, _, _) = e else {
                return XCTFail("expected shapeNotAllowed, got \(e)", file: file, line: line)
            }
            XCTAssertEqual(name, input, file: file, line: line)
            XCTAssertEqual(found, array.shape, file: file, line: line)
            let message = "\(e)"
            for m in mentions { XCTAssertTrue(message.contains(m), "'\(m)' not in: \(message)", file: file, line: line) }
        }
    }

    // MARK: - Keras → .mlbundle

    /// The acceptance: a flexible-shape model predicts at two allowed shapes (Keras' outputs)
    /// and rejects a third with a message naming the input, the shape and the allowed shapes.
    func testKerasRangeBundlePredictsAtTwoAllowedSizesAndRejectsAThird() throws {
        let bundle = try convertFCN("fcn.mlbundle", ["--flexible-shape", "image=1..*,4..16,4..16,3"])
        let b = try BundleFile(contentsOf: bundle)
        XCTAssertEqual(b.graph.shapeFlexibility(ofInput: "image"),
                       .ranges([DimensionRange(lowerBound: 1, upperBound: -1), .init(lowerBound: 4, upperBound: 16),
                                .init(lowerBound: 4, upperBound: 16), .fixed(3)]))
        let model = try Model(graph: b.graph)
        XCTAssertEqual(model.modelDescription.inputs[0].shapeFlexibility, b.graph.shapeFlexibility(ofInput: "image"))
        for size in ["8x8", "12x10", "6x16"] {
            let out = try model.prediction(from: ["image": try npy("fcn_x_\(size).npy")])
            assertMatches(out["conv2"], try npy("fcn_y_\(size).npy"), "fcn at \(size)")
        }
        // Without the leading batch 1 too.
        let x = try npy("fcn_x_12x10.npy")
        let unbatched = try model.prediction(from: ["image": try x.reshaped([12, 10, 3])])
        assertMatches(unbatched["conv2"], try npy("fcn_y_12x10.npy"), "fcn at 12x10 without batch")
        // H = 20 is outside 4...16.
        assertNotAllowed(model, "image", NDArray(shape: [1, 20, 8, 3]),
                         mentions: ["input 'image'", "(1, 20, 8, 3)", "[1...∞, 4...16, 4...16, 3]", "(1, 8, 8, 3)"])
        // Fixed channels.
        assertNotAllowed(model, "image", NDArray(shape: [1, 8, 8, 4]), mentions: ["(1, 8, 8, 4)"])
    }

    func testKerasEnumeratedBundleAcceptsOnlyTheListedShapes() throws {
        let bundle = try convertFCN("fcn_enum.mlbundle", ["--flexible-shape", "image=1x8x8x3,1x12x10x3"])
        let model = try Model(graph: try BundleFile(contentsOf: bundle).graph)
        for size in ["8x8", "12x10"] {
            let out = try model.prediction(from: ["image": try npy("fcn_x_\(size).npy")])
            assertMatches(out["conv2"], try npy("fcn_y_\(size).npy"), "fcn at \(size)")
        }
        assertNotAllowed(model, "image", try npy("fcn_x_6x16.npy"),
                         mentions: ["input 'image'", "(1, 6, 16, 3)", "enumerated [[1, 8, 8, 3], [1, 12, 10, 3]]"])
    }

    /// A Dense after Flatten cannot take another spatial size: refused, naming the layer.
    func testKerasFlattenDenseRefusesAFlexibleSpatialSize() throws {
        let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("fd.mlmodel")
        let r = CLIRun(["keras", file("flat_dense.h5").path, "--flexible-shape", "image=1,4..16,4..16,3", "-o", out.path])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.err.contains("layer 'flatten'") || r.err.contains("layer 'dense'"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path))
        // The typed error behind it.
        var g = try KerasConverter().convert(modelAt: file("flat_dense.h5"))
        g.description.inputs = [FeatureDescription(name: "image", shapeFlexibility:
            .ranges([.fixed(1), .init(lowerBound: 4, upperBound: 16), .init(lowerBound: 4, upperBound: 16), .fixed(3)]))]
        XCTAssertThrowsError(try g.checkFlexibleShapes()) { e in
            guard let f = e as? FlexibleShapeError else { return XCTFail("\(e)") }
            XCTAssertEqual(f.input, "image")
            XCTAssertTrue(["flatten", "dense"].contains(f.node), f.description)
        }
        // Only the batch flexible: every layer takes it.
        g.description.inputs = [FeatureDescription(name: "image", shapeFlexibility: .enumerated([[1, 8, 8, 3], [2, 8, 8, 3]]))]
        XCTAssertNoThrow(try g.checkFlexibleShapes())
    }

    func testFlexibleShapeOptionErrors() throws {
        let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("bad.mlbundle").path
        for (spec, fragment) in [("image=1..*,4..2,8,3", "upper bound is below"), ("image=1x8x8x3,8x8", "different ranks"),
                                 ("image=1,a,8,3", "'a' is not a size"), ("image=1,8", "2 dimensions, but input 'image' has 4 (N, H, W, C; the batch may be left out)"),
                                 ("nope=1,8,8,3", "no input 'nope'")] {
            let r = CLIRun(["keras", file("fcn.h5").path, "--input-shape", "image=8,8,3", "--flexible-shape", spec, "-o", out])
            XCTAssertNotEqual(r.status, 0, spec)
            XCTAssertTrue(r.err.contains(fragment), "\(spec): \(r.err)")
        }
        // Regression: a wrong option is checked against the Keras inputs before converting (it
        // was blamed on the model file, or reported as a weight-shape or unknown-dimension error).
        for (spec, message) in [
            ("image=1..*,32..512", "--flexible-shape image=1..*,32..512: 2 dimensions, but input 'image' has 4 (N, H, W, C; the batch may be left out)"),
            ("image=1x32x32", "--flexible-shape image=1x32x32: dimension 4 (C) of input 'image' is 3 in the model, but the flexible shape gives 32 there (N, H, W, C; the batch may be left out)"),
            ("image=1x32x32x3,1x64x64x4", "dimension 4 (C) of input 'image' is 3 in the model, but the flexible shape gives 4 there"),
            ("image=1..*,8..16,8..16,4..8", "dimension 4 (C) of input 'image' is 3 in the model, but the flexible shape gives 4 there"),
            ("foo=1..*,32..512", "--flexible-shape foo=1..*,32..512: the model has no input 'foo'; its inputs: image"),
        ] {
            let r = CLIRun(["keras", file("fcn.h5").path, "--flexible-shape", spec, "-o", out])
            XCTAssertNotEqual(r.status, 0, spec)
            XCTAssertTrue(r.err.contains(message), "\(spec): \(r.err)")
            XCTAssertFalse(r.err.contains("config value"), "\(spec): \(r.err)")
        }
        // A None-sized Keras input takes its default from the flexible shape (the ranges' lower bounds).
        let dir = try TestPaths.temporaryDirectory(for: self)
        let r = CLIRun(["keras", file("fcn.h5").path, "--flexible-shape", "image=6..16,6..16,3", "-o", dir.appendingPathComponent("d.mlbundle").path])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("input  image (1, 6, 6, 3)"), r.out)
    }

    // MARK: - Keras → .mlmodel (spec fields; the model read back by our importer)

    func testKerasRangeWritesShapeRangeInCoreMLOrderAtSpec3() throws {
        let url = try convertFCN("fcn.mlmodel", ["--flexible-shape", "image=1..*,4..16,4..*,3"])
        let spec = try Spec.Model.load(contentsOf: url.path)
        XCTAssertEqual(spec.specificationVersion, 3)
        guard case let .multiArray(a)? = spec.description?.input.first?.type?.kind else { return XCTFail("not a multi-array input") }
        XCTAssertEqual(a.shape, [3, 8, 8])
        XCTAssertEqual(a.shapeFlexibility, .shapeRange([.init(lowerBound: 3, upperBound: 3), .init(lowerBound: 4, upperBound: 16),
                                                         .init(lowerBound: 4, upperBound: -1)]))
        // Imported again: the IR input [1, C, H, W] with the flexibility mapped (batch fixed at 1).
        let graph = try CoreMLImporter.graph(from: spec, fileName: "fcn.mlmodel")
        XCTAssertEqual(graph.inputs.first?.type.shape, [1, 3, 8, 8])
        XCTAssertEqual(graph.shapeFlexibility(ofInput: "image"),
                       .ranges([.fixed(1), .fixed(3), .init(lowerBound: 4, upperBound: 16), .init(lowerBound: 4, upperBound: -1)]))
        let model = try Model(graph: graph)
        for size in ["12x10", "6x16"] {
            let out = try model.prediction(from: ["image": try nchw(try npy("fcn_x_\(size).npy"))])
            assertMatches(out["conv2"], try nchw(try npy("fcn_y_\(size).npy")), ".mlmodel at \(size)")
        }
        assertNotAllowed(model, "image", NDArray(shape: [1, 3, 20, 8]), mentions: ["(1, 3, 20, 8)", "[1, 3, 4...16, 4...∞]"])
    }

    /// Regression: an NHWC (Keras-order) array given to the channel-first .mlmodel was refused
    /// without saying why; the message now names the transposed shape when that one is allowed.
    func testChannelLastArrayForAnMLModelGetsATransposeHint() throws {
        let url = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("fcn.mlmodel")
        let r = CLIRun(["keras", file("fcn.h5").path, "--input-shape", "image=8,8,3", "--flexible-shape", "image=1..*,4..16,4..*,3", "-o", url.path])
        XCTAssertEqual(r.status, 0, r.err)
        // The summary shows the input as the .mlmodel takes it (was the Keras (1, 8, 8, 3)).
        XCTAssertTrue(r.out.contains("input  image (3, 8, 8) (as written in the .mlmodel)"), r.out)
        let model = try Model(graph: try CoreMLImporter.graph(from: try Spec.Model.load(contentsOf: url.path), fileName: "fcn.mlmodel"))
        let hint = "the .mlmodel takes Core ML's channel-first order; this array looks channel-last — transpose it to "
        assertNotAllowed(model, "image", NDArray(shape: [1, 12, 10, 3]), mentions: [hint + "(1, 3, 12, 10)"])
        assertNotAllowed(model, "image", NDArray(shape: [12, 10, 3]), mentions: [hint + "(3, 12, 10)"])
        // Transposed, (1, 20, 8, 3) would still be refused (height 20 > 16): no hint.
        XCTAssertThrowsError(try model.prediction(from: ["image": NDArray(shape: [1, 20, 8, 3])])) { e in
            XCTAssertFalse("\(e)".contains("transpose"), "\(e)")
        }
        // The transposed array runs (Keras' reference, reordered).
        let out = try model.prediction(from: ["image": try nchw(try npy("fcn_x_12x10.npy"))])
        assertMatches(out["conv2"], try nchw(try npy("fcn_y_12x10.npy")), ".mlmodel at 12x10")
    }

    func testKerasEnumeratedAndImageSizesWriteTheirSpecFields() throws {
        let e = try Spec.Model.load(contentsOf: try convertFCN("e.mlmodel", ["--flexible-shape", "image=1x8x8x3,1x12x10x3"]).path)
        guard case let .multiArray(a)? = e.description?.input.first?.type?.kind else { return XCTFail("not a multi-array input") }
        XCTAssertEqual(a.shapeFlexibility, .enumeratedShapes([[3, 8, 8], [3, 12, 10]]))
        XCTAssertEqual(e.specificationVersion, 3)

        let i = try Spec.Model.load(contentsOf: try convertFCN("i.mlmodel", ["--image-input", "image", "--flexible-shape", "image=1,4..32,5..*,3"]).path)
        guard case let .image(img)? = i.description?.input.first?.type?.kind else { return XCTFail("not an image input") }
        XCTAssertEqual(img.sizeFlexibility, .imageSizeRange(width: .init(lowerBound: 5, upperBound: -1), height: .init(lowerBound: 4, upperBound: 32)))
        let ie = try Spec.Model.load(contentsOf: try convertFCN("ie.mlmodel", ["--image-input", "image", "--flexible-shape", "image=1x8x8x3,1x12x10x3"]).path)
        guard case let .image(img2)? = ie.description?.input.first?.type?.kind else { return XCTFail("not an image input") }
        XCTAssertEqual(img2.sizeFlexibility, .enumeratedSizes([.init(width: 8, height: 8), .init(width: 10, height: 12)]))

        // Images cannot vary in channels.
        let out = try TestPaths.temporaryDirectory(for: self).appendingPathComponent("c.mlmodel").path
        let r = CLIRun(["keras", file("fcn.h5").path, "--input-shape", "image=8,8,3", "--image-input", "image",
                        "--flexible-shape", "image=1x8x8x3,1x8x8x1", "-o", out])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.err.contains("input 'image'"), r.err)
    }

    // MARK: - Core ML models with flexible inputs (NumPy references)

    func testCoreMLShapeRangeModel() throws {
        let spec = try Spec.Model.load(contentsOf: file("range_cnn.mlmodel").path)
        let graph = try CoreMLImporter.graph(from: spec, fileName: "range_cnn.mlmodel")
        XCTAssertEqual(graph.shapeFlexibility(ofInput: "x"),
                       .ranges([.fixed(1), .fixed(3), .init(lowerBound: 4, upperBound: 16), .init(lowerBound: 4, upperBound: -1)]))
        let model = try Model(graph: graph)
        for shape in ["3x8x8", "3x12x10", "3x4x20", "3x10x6"] {
            let x = try npy("cnn_x_\(shape).npy"), y = try npy("cnn_y_\(shape).npy")
            let out = try model.prediction(from: ["x": x])  // Core ML's [C, H, W], the batch 1 left out
            assertMatches(try out["y"]?.reshaped(y.shape), y, "range_cnn at \(shape)")
            XCTAssertEqual(out["y"]?.shape, [1] + y.shape)
        }
        assertNotAllowed(model, "x", NDArray(shape: [3, 20, 8]), mentions: ["input 'x'", "(3, 20, 8)", "4...16"])
        assertNotAllowed(model, "x", NDArray(shape: [3, 2, 8]), mentions: ["(3, 2, 8)"])

        // Through the feature path (Core ML's MLFeatureProvider view).
        let fm = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: "range_cnn.mlmodel", threadCount: 1))
        let x = try npy("cnn_x_3x12x10.npy"), y = try npy("cnn_y_3x12x10.npy")
        let result = try fm.prediction(from: ["x": .multiArray(try MultiArray(shape: x.shape, values: x.scalars.map(Double.init)))])
        guard case let .multiArray(m)? = result["y"] else { return XCTFail("no multi-array output y: \(result)") }
        XCTAssertEqual(m.shape, [2, 12, 10])
        XCTAssertLessThanOrEqual(maxAbsDiff(m.values.map(Float.init), y.scalars), 1e-4)
        XCTAssertThrowsError(try fm.prediction(from: ["x": .multiArray(try MultiArray(shape: [3, 20, 8], values: .init(repeating: 0, count: 480)))])) {
            XCTAssertTrue("\($0)".contains("(1, 3, 20, 8)") || "\($0)".contains("(3, 20, 8)"), "\($0)")
        }
    }

    func testCoreMLEnumeratedShapesModel() throws {
        let graph = try CoreMLImporter.graph(from: try Spec.Model.load(contentsOf: file("enumerated_cnn.mlmodel").path),
                                             fileName: "enumerated_cnn.mlmodel")
        // In the file's order (coremltools' add_enumerated_multiarray_shapes puts the added shape first).
        XCTAssertEqual(graph.shapeFlexibility(ofInput: "x"), .enumerated([[1, 3, 10, 6], [1, 3, 8, 8]]))
        let model = try Model(graph: graph)
        for shape in ["3x8x8", "3x10x6"] {
            let x = try npy("cnn_x_\(shape).npy"), y = try npy("cnn_y_\(shape).npy")
            assertMatches(try model.prediction(from: ["x": x])["y"]?.reshaped(y.shape), y, "enumerated_cnn at \(shape)")
        }
        assertNotAllowed(model, "x", try npy("cnn_x_3x12x10.npy"),
                         mentions: ["(3, 12, 10)", "enumerated [[1, 3, 10, 6], [1, 3, 8, 8]]"])
    }

    func testCoreMLImageSizeRangeModel() throws {
        let spec = try Spec.Model.load(contentsOf: file("image_range.mlmodel").path)
        let graph = try CoreMLImporter.graph(from: spec, fileName: "image_range.mlmodel")
        XCTAssertEqual(graph.shapeFlexibility(ofInput: "image"),
                       .ranges([.fixed(1), .init(lowerBound: 4, upperBound: 32), .init(lowerBound: 4, upperBound: 32), .fixed(3)]))
        let model = try Model(graph: graph)
        for size in ["8x8", "12x10", "5x30"] {
            let px = try npy("image_x_\(size).npy"), y = try npy("image_y_\(size).npy")
            let out = try model.prediction(from: ["image": try px.reshaped([1] + px.shape)])
            assertMatches(try out["y"]?.reshaped(y.shape), y, "image_range at \(size)")
        }
        assertNotAllowed(model, "image", NDArray(shape: [1, 40, 8, 3]), mentions: ["(1, 40, 8, 3)", "4...32"])

        // The feature path takes an image of an allowed size as is; other sizes are refused.
        let fm = try CoreMLModelLoader.load(spec, context: ModelLoadContext(name: "image_range.mlmodel", threadCount: 1))
        let px = try npy("image_x_12x10.npy"), y = try npy("image_y_12x10.npy")
        let image = try FeatureImage(width: 10, height: 12, colorSpace: .rgb, pixels: px.scalars.map { UInt8($0) })
        guard case let .multiArray(m)? = try fm.prediction(from: ["image": .image(image)])["y"] else { return XCTFail("no output y") }
        XCTAssertLessThanOrEqual(maxAbsDiff(m.values.map(Float.init), y.scalars), 1e-4)
        let big = try FeatureImage(width: 8, height: 40, colorSpace: .rgb, pixels: .init(repeating: 0, count: 8 * 40 * 3))
        XCTAssertThrowsError(try fm.prediction(from: ["image": .image(big)])) { XCTAssertTrue("\($0)".contains("8×40"), "\($0)") }
        XCTAssertTrue(spec.description?.input.first.map { f -> Bool in
            guard case let .image(t)? = f.type?.kind else { return false }
            return t.allowsSize(width: 10, height: 12) && !t.allowsSize(width: 8, height: 40)
        } ?? false)
    }

    /// EXACT_ARRAY_MAPPING networks: an N-D shape range on a rank-4 input, and a size range on a
    /// rank-5-mapped image (the layout changes around the classic layers hold at every size).
    func testExactMappingModelsRunAtAllowedShapes() throws {
        let graph = try CoreMLImporter.graph(from: try Spec.Model.load(contentsOf: file("exact_range.mlmodel").path),
                                             fileName: "exact_range.mlmodel")
        XCTAssertEqual(graph.shapeFlexibility(ofInput: "x"),
                       .ranges([.fixed(1), .fixed(3), .init(lowerBound: 4, upperBound: 16), .init(lowerBound: 4, upperBound: -1)]))
        let model = try Model(graph: graph)
        for shape in ["3x8x8", "3x12x10", "3x4x20"] {
            let x = try npy("cnn_x_\(shape).npy"), y = try npy("cnn_y_\(shape).npy")
            let out = try model.prediction(from: ["x": try x.reshaped([1] + x.shape)])
            assertMatches(try out["y"]?.reshaped(y.shape), y, "exact_range at \(shape)")
        }
        assertNotAllowed(model, "x", NDArray(shape: [1, 3, 20, 8]), mentions: ["(1, 3, 20, 8)"])

        let image = try Model(graph: try CoreMLImporter.graph(from: try Spec.Model.load(contentsOf: file("exact_image_range.mlmodel").path),
                                                              fileName: "exact_image_range.mlmodel"))
        for size in ["8x8", "12x10", "5x30"] {
            let px = try npy("image_x_\(size).npy"), y = try npy("image_y_\(size).npy")
            let out = try image.prediction(from: ["image": try px.reshaped([1] + px.shape)])
            assertMatches(try out["y"]?.reshaped(y.shape), y, "exact_image_range at \(size)")
        }
    }

    /// `predict --input image=photo.png`: a photo of an allowed size runs at its size; another
    /// size is resized to the default (8×8) as before.
    func testPredictKeepsAnImageOfAnAllowedSize() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let px = try npy("image_x_12x10.npy"), y = try npy("image_y_12x10.npy")
        let png = dir.appendingPathComponent("photo.png")
        try ImageCodec.writePNG(Image(width: 10, height: 12, channels: 3, pixels: px.scalars.map { UInt8($0) }), to: png)
        let out = dir.appendingPathComponent("out").path
        let r = CLIRun(["predict", file("image_range.mlmodel").path, "--input", "image=" + png.path, "--output-dir", out])
        XCTAssertEqual(r.status, 0, r.err)
        assertMatches(try NPY.read(contentsOf: URL(fileURLWithPath: out + "/y.npy")).reshaped(y.shape), y, "predict PNG 10×12")

        let big = dir.appendingPathComponent("big.png")
        try ImageCodec.writePNG(Image(width: 40, height: 40, channels: 3, filledWith: 128), to: big)
        let r2 = CLIRun(["predict", file("image_range.mlmodel").path, "--input", "image=" + big.path, "--output-dir", out])
        XCTAssertEqual(r2.status, 0, r2.err)
        XCTAssertEqual(try NPY.read(contentsOf: URL(fileURLWithPath: out + "/y.npy")).shape, [1, 2, 8, 8])
    }

    /// Image files read for the feature path (`--inputs` JSON / CSV batches) keep an allowed
    /// size and are resized to the declared size otherwise.
    func testImageFilesKeepAnAllowedSizeInTheFeaturePath() throws {
        let spec = try Spec.Model.load(contentsOf: file("image_range.mlmodel").path)
        guard case let .image(t)? = spec.description?.input.first?.type?.kind else { return XCTFail("not an image input") }
        let dir = try TestPaths.temporaryDirectory(for: self)
        let allowed = dir.appendingPathComponent("a.png"), other = dir.appendingPathComponent("b.png")
        try ImageCodec.writePNG(Image(width: 10, height: 12, channels: 3, filledWith: 7), to: allowed)
        try ImageCodec.writePNG(Image(width: 40, height: 36, channels: 3, filledWith: 7), to: other)
        let a = try FeatureImage(contentsOf: allowed, fittedTo: t, crop: .center, feature: "image", model: "image_range")
        XCTAssertEqual([a.width, a.height], [10, 12])
        let b = try FeatureImage(contentsOf: other, fittedTo: t, crop: .center, feature: "image", model: "image_range")
        XCTAssertEqual([b.width, b.height], [8, 8])
    }

    // MARK: - Real models (../shared)

    /// The real Van Gogh style transfer network declared with a 256×256 default and an image size
    /// range 128…512. Its custom layers (ResCropBlockLambda, RescaleOutputLambda) have output
    /// shapes fixed at import, so at 320×320 the graph cannot resolve: a typed error. Lowered to
    /// IR ops at compile time (`--lower`), it runs at 320×320 through a resolved plan and matches
    /// the Keras reference at that size.
    func testRealStyleTransferAtANonDefaultSizeMatchesKeras() throws {
        let url = try TestPaths.sharedFile("models/FastStyleTransferVanGoghStarryNight.mlmodel")
        let input = try NPY.read(contentsOf: try TestPaths.sharedFile("models/reference/london_big-ben_320.npy"))
        let expected = try NPY.read(contentsOf: try TestPaths.sharedFile("models/reference/style_transfer_vangogh__london_big-ben.npy"))
        var spec = try Spec.Model.load(contentsOf: url.path)
        guard var d = spec.description, case var .image(img)? = d.input.first?.type?.kind,
              case var .image(out)? = d.output.first?.type?.kind else { return XCTFail("expected image input and output") }
        img.width = 256; img.height = 256
        img.sizeFlexibility = .imageSizeRange(width: .init(lowerBound: 128, upperBound: 512), height: .init(lowerBound: 128, upperBound: 512))
        out.width = 256; out.height = 256
        d.input[0].type?.kind = .image(img)
        d.output[0].type?.kind = .image(out)
        spec.description = d
        let x = try input.reshaped([1, 320, 320, 3])

        let custom = try Model(graph: try CoreMLImporter.graph(from: spec, fileName: url.lastPathComponent))
        XCTAssertThrowsError(try custom.prediction(from: ["image": x])) { e in
            guard case let RuntimeError.shapeResolutionFailed(shapes, _, _) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(shapes, "image (1, 320, 320, 3)")
        }

        let dir = try TestPaths.temporaryDirectory(for: self)
        let modified = dir.appendingPathComponent("StyleFlexible.mlmodel")
        try spec.write(toFile: modified.path)
        let bundle = dir.appendingPathComponent("style.mlbundle").path
        let c = CLIRun(["compile", modified.path, "--lower", "ResCropBlockLambda=crop:2,2,2,2",
                        "--lower", "RescaleOutputLambda=affine:127.5,127.5", "-o", bundle])
        XCTAssertEqual(c.status, 0, c.err)
        let model = try Model(graph: try BundleFile(contentsOf: URL(fileURLWithPath: bundle)).graph)
        XCTAssertEqual(model.modelDescription.inputs.first?.shape, [1, 256, 256, 3])
        let got = try XCTUnwrap(try model.prediction(from: ["image": x])["output"])
        XCTAssertEqual(got.shape, [1, 320, 320, 3])
        XCTAssertEqual(model.shapePlanStatistics.plansBuilt, 1)
        var se = 0.0
        for (a, b) in zip(got.scalars, expected.scalars) {
            let q = { (v: Float) in Double(Swift.min(255, Swift.max(0, v)).rounded()) }
            se += (q(a) - q(b)) * (q(a) - q(b))
        }
        let psnr = 10 * log10(255 * 255 / Swift.max(se / Double(got.count), 1e-12))
        XCTAssertGreaterThanOrEqual(psnr, 45, "PSNR \(psnr) dB against the Keras reference at 320×320")
        // 600 is outside 128…512.
        assertNotAllowed(model, "image", NDArray(shape: [1, 600, 320, 3]), mentions: ["(1, 600, 320, 3)", "128...512"])
    }

    /// Real files with flexible inputs (pipelines of Apple feature extractors, which mlconv does
    /// not run): inspect shows their ranges.
    func testInspectShowsTheRangesOfRealCorpusModels() throws {
        for (name, fragment) in [("corpus/mlmodel/edolj_SoundClassifier.mlmodel", "ranges [8000…240000]"),
                                 ("corpus/mlmodel/noahgift_cats_dogs.mlmodel", "width 299…∞, height 299…∞")] {
            let url = try TestPaths.sharedFile(name)
            let r = CLIRun(["inspect", url.path])
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertTrue(r.out.contains(fragment), "\(name): \(r.out)")
        }
    }

    // MARK: - Plan cache

    /// Same shape twice builds one plan; the default shape uses the load-time plan; a cache of
    /// one plan rebuilds an evicted shape; concurrent first predictions at one shape build it once.
    func testPlansAreBuiltOncePerShapeAndCachedWithABound() throws {
        let graph = try BundleFile(contentsOf: try convertFCN("c.mlbundle", ["--flexible-shape", "image=1,4..16,4..16,3"])).graph
        let model = try Model(graph: graph)
        XCTAssertEqual(model.shapePlanStatistics.plansBuilt, 0)
        let x12 = try npy("fcn_x_12x10.npy"), y12 = try npy("fcn_y_12x10.npy")
        _ = try model.prediction(from: ["image": x12])
        assertMatches(try model.prediction(from: ["image": x12])["conv2"], y12, "second run")
        _ = try model.prediction(from: ["image": try npy("fcn_x_8x8.npy")])  // the default: not a cached plan
        var s = model.shapePlanStatistics
        XCTAssertEqual(s.plansBuilt, 1)
        XCTAssertEqual(s.cacheHits, 1)
        XCTAssertEqual(s.cachedShapes, [[[1, 12, 10, 3]]])

        let small = try Model(graph: graph, configuration: .init(maximumCachedShapePlans: 1))
        let x6 = try npy("fcn_x_6x16.npy")
        for x in [x12, x6, x12] { _ = try small.prediction(from: ["image": x]) }
        s = small.shapePlanStatistics
        XCTAssertEqual(s.plansBuilt, 3)
        XCTAssertEqual(s.cachedPlans, 1)
        assertMatches(try small.prediction(from: ["image": x6])["conv2"], try npy("fcn_y_6x16.npy"), "after eviction")

        let concurrent = try Model(graph: graph)
        let lock = NSLock()
        var worst: Float = 0
        var failures: [String] = []
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            do {
                let (x, y) = i % 2 == 0 ? (x12, y12) : (x6, try npy("fcn_y_6x16.npy"))
                let got = try concurrent.prediction(from: ["image": x])["conv2"]?.scalars ?? []
                lock.lock(); worst = max(worst, maxAbsDiff(got, y.scalars)); lock.unlock()
            } catch {
                lock.lock(); failures.append("\(error)"); lock.unlock()
            }
        }
        XCTAssertEqual(failures, [])
        XCTAssertLessThanOrEqual(worst, 1e-4)
        XCTAssertEqual(concurrent.shapePlanStatistics.plansBuilt, 2)
        XCTAssertEqual(concurrent.shapePlanStatistics.cacheHits, 6)
    }

    /// Allowed by the flexibility but refused by a layer at run time: a typed error naming it.
    func testAnAllowedShapeThatTheGraphCannotRunIsATypedError() throws {
        var g = try KerasConverter().convert(modelAt: file("flat_dense.h5"))
        g.description.inputs = [FeatureDescription(name: "image", shapeFlexibility: .enumerated([[1, 8, 8, 3], [1, 6, 6, 3]]))]
        let model = try Model(graph: g)
        XCTAssertThrowsError(try model.prediction(from: ["image": NDArray(shape: [1, 6, 6, 3])])) { e in
            guard case let RuntimeError.shapeResolutionFailed(shapes, own, cause) = e else { return XCTFail("\(e)") }
            XCTAssertNotNil(cause, "the shape-inference error is kept as a value (issue 13): \(e)")
            let message = cause.appended(to: own)
            XCTAssertEqual(shapes, "image (1, 6, 6, 3)")
            XCTAssertTrue(message.contains("flatten") || message.contains("dense"), message)
        }
        // A flexibility that does not fit the input is refused at load.
        g.description.inputs = [FeatureDescription(name: "image", shapeFlexibility: .ranges([.fixed(1), .fixed(8)]))]
        XCTAssertThrowsError(try Model(graph: g)) { XCTAssertTrue("\($0)".contains("2 ranges for an input of rank 4"), "\($0)") }
    }

    // MARK: - CLI: inspect, compile, predict

    func testInspectCompileAndPredictKeepTheFlexibility() throws {
        let dir = try TestPaths.temporaryDirectory(for: self)
        let text = CLIRun(["inspect", file("range_cnn.mlmodel").path])
        XCTAssertEqual(text.status, 0, text.err)
        XCTAssertTrue(text.out.contains("ranges [3…3] × [4…16] × [4…∞]"), text.out)

        let bundle = dir.appendingPathComponent("r.mlbundle").path
        let c = CLIRun(["compile", file("range_cnn.mlmodel").path, "-o", bundle])
        XCTAssertEqual(c.status, 0, c.err)
        XCTAssertEqual(try BundleFile(contentsOf: URL(fileURLWithPath: bundle)).graph.shapeFlexibility(ofInput: "x"),
                       .ranges([.fixed(1), .fixed(3), .init(lowerBound: 4, upperBound: 16), .init(lowerBound: 4, upperBound: -1)]))
        let i = CLIRun(["inspect", bundle])
        XCTAssertTrue(i.out.contains("flexible: [1, 3, 4...16, 4...∞]"), i.out)
        let j = CLIRun(["inspect", bundle, "--json"])
        let json = try JSONSerialization.jsonObject(with: Data(j.out.utf8)) as? [String: Any]
        let input = (json?["inputs"] as? [[String: Any]])?.first
        let flex = input?["shapeFlexibility"] as? [String: Any]
        XCTAssertEqual((flex?["ranges"] as? [[String: Int]])?.map { [$0["lowerBound"] ?? 0, $0["upperBound"] ?? 0] },
                       [[1, 1], [3, 3], [4, 16], [4, -1]])

        // predict at an allowed shape and at a refused one.
        let outDir = dir.appendingPathComponent("out").path
        let p = CLIRun(["predict", bundle, "--input", "x=" + file("cnn_x_3x12x10.npy").path, "--output-dir", outDir])
        XCTAssertEqual(p.status, 0, p.err)
        let y = try npy("cnn_y_3x12x10.npy")
        assertMatches(try NPY.read(contentsOf: URL(fileURLWithPath: outDir + "/y.npy")).reshaped(y.shape), y, "predict")
        let bad = dir.appendingPathComponent("bad.npy")
        try NPY.write(NDArray(shape: [3, 20, 8]), to: bad)
        let q = CLIRun(["predict", bundle, "--input", "x=" + bad.path, "--output-dir", outDir])
        XCTAssertNotEqual(q.status, 0)
        XCTAssertTrue(q.err.contains("input 'x' has shape (3, 20, 8)") && q.err.contains("allowed"), q.err)
    }
}
