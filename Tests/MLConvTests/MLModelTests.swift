// The public Swift API, used only through `import MLConv` (no @testable, no implementation
// modules): every format opens and predicts like the recorded references in Fixtures/ (Keras's
// own outputs, NumPy evaluations of Core ML's formulas, scikit-learn), the cache is hit on the
// second open, compileModel(at:) returns a bundle that predicts the same.
import Foundation
import MLConv
import XCTest

enum Paths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func fixture(_ p: String) -> URL { root.appendingPathComponent("Fixtures").appendingPathComponent(p) }
    static func temporary(_ test: XCTestCase) throws -> URL {
        let d = FileManager.default.temporaryDirectory.appendingPathComponent("mlconv-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: d) }
        return d
    }
    /// A file of ../shared, or XCTSkip naming it.
    static func shared(_ p: String) throws -> URL {
        let u = root.deletingLastPathComponent().appendingPathComponent("shared").appendingPathComponent(p)
        guard FileManager.default.fileExists(atPath: u.path) else { throw XCTSkip("\(u.path) is absent (../shared is not part of a clone)") }
        return u
    }
}

func maxAbsDiff(_ a: [Double], _ b: [Double]) -> Double {
    guard a.count == b.count else { return .infinity }
    return zip(a, b).map { abs($0 - $1) }.max() ?? 0
}

/// The digits CNN's probabilities recorded from Keras (Fixtures/demo/expected.json).
func kerasDigitProbabilities() throws -> [Double] {
    let data = try Data(contentsOf: Paths.fixture("demo/expected.json"))
    let obj = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    return try XCTUnwrap(obj["probabilities"] as? [Double])
}

final class MLModelTests: XCTestCase {
    func configuration() throws -> MLModelConfiguration {
        MLModelConfiguration(cacheDirectory: try Paths.temporary(self))
    }

    func digitInput() throws -> FeatureProvider {
        ["digit": .multiArray(try MultiArray(contentsOfNPY: Paths.fixture("demo/digit_7.npy")))]
    }

    func probabilities(_ out: FeatureProvider, file: StaticString = #filePath, line: UInt = #line) throws -> [Double] {
        guard case let .multiArray(p)? = out["probabilities"] else {
            XCTFail("no multi-array 'probabilities' in \(out.keys.sorted())", file: file, line: line)
            return []
        }
        XCTAssertEqual(p.shape, [1, 10], file: file, line: line)
        return p.values
    }

    func testKerasFileIsConvertedOnceThenOpenedFromTheCache() throws {
        let config = try configuration()
        let h5 = Paths.fixture("demo/digits_cnn.h5")
        let first = try MLModel(contentsOf: h5, configuration: config)
        XCTAssertFalse(first.loadedFromCache)
        let cached = try XCTUnwrap(first.compiledModelURL)
        XCTAssertTrue(cached.path.hasPrefix(config.cacheDirectory!.path), cached.path)
        XCTAssertEqual(cached.pathExtension, "mlbundle")
        XCTAssertTrue(FileManager.default.fileExists(atPath: cached.path))

        let second = try MLModel(contentsOf: h5, configuration: config)
        XCTAssertTrue(second.loadedFromCache)
        XCTAssertEqual(second.compiledModelURL, cached)

        let reference = try kerasDigitProbabilities()
        for model in [first, second] {
            let p = try probabilities(try model.prediction(from: try digitInput()))
            XCTAssertLessThan(maxAbsDiff(p, reference), 1e-5, "\(p) vs Keras \(reference)")
        }
        // The same bytes under another name hit the same cache entry (the key is the content).
        let copy = try Paths.temporary(self).appendingPathComponent("digits_cnn.h5")
        try FileManager.default.copyItem(at: h5, to: copy)
        XCTAssertTrue(try MLModel(contentsOf: copy, configuration: config).loadedFromCache)
    }

    /// A damaged cache entry (a truncated or overwritten file) is converted again, not trusted.
    func testDamagedCacheEntryIsReplaced() throws {
        let config = try configuration()
        let h5 = Paths.fixture("demo/digits_cnn.h5")
        let entry = try MLModel.compileModel(at: h5, configuration: config)
        let bytes = try Data(contentsOf: entry)
        try bytes.prefix(bytes.count / 2).write(to: entry)
        let model = try MLModel(contentsOf: h5, configuration: config)
        XCTAssertFalse(model.loadedFromCache)
        XCTAssertEqual(model.compiledModelURL, entry)
        XCTAssertEqual(try Data(contentsOf: entry), bytes)
        let p = try probabilities(try model.prediction(from: try digitInput()))
        XCTAssertLessThan(maxAbsDiff(p, try kerasDigitProbabilities()), 1e-5)
    }

    func testKerasFileWithoutTheCacheWritesNothing() throws {
        var config = try configuration()
        config.usesCache = false
        let model = try MLModel(contentsOf: Paths.fixture("demo/digits_cnn.h5"), configuration: config)
        XCTAssertNil(model.compiledModelURL)
        XCTAssertFalse(model.loadedFromCache)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: config.cacheDirectory!.path), [])
        let p = try probabilities(try model.prediction(from: try digitInput()))
        XCTAssertLessThan(maxAbsDiff(p, try kerasDigitProbabilities()), 1e-5)
    }

    func testBundleOpensAndDescribesItsGraph() throws {
        let model = try MLModel(contentsOf: Paths.fixture("bundles/digits_cnn_format1.0.mlbundle"), configuration: try configuration())
        XCTAssertEqual(model.compiledModelURL, Paths.fixture("bundles/digits_cnn_format1.0.mlbundle"))
        let d = model.modelDescription
        XCTAssertEqual(d.modelType, "mlbundle")
        XCTAssertEqual(d.inputs.map(\.name), ["digit"])
        XCTAssertEqual(d.inputs.first?.type, .multiArray)
        XCTAssertEqual(d.inputs.first?.multiArrayConstraint?.shape, [1, 8, 8, 1])
        XCTAssertEqual(d.inputs.first?.multiArrayConstraint?.dataType, .float32)
        XCTAssertEqual(d.outputs.map(\.name), ["probabilities"])
        let p = try probabilities(try model.prediction(from: try digitInput()))
        XCTAssertLessThan(maxAbsDiff(p, try kerasDigitProbabilities()), 1e-5)
    }

    func testCompileModelWritesABundleThatPredictsAsTheSource() throws {
        let config = try configuration()
        // A Core ML neural network (Core ML shape [3, 6, 6]; reference from NumPy).
        let mlmodel = Paths.fixture("coreml/activation_relu/model.mlmodel")
        let bundle = try MLModel.compileModel(at: mlmodel, configuration: config)
        XCTAssertEqual(bundle.pathExtension, "mlbundle")
        XCTAssertTrue(bundle.path.hasPrefix(config.cacheDirectory!.path))
        XCTAssertEqual(try MLModel.compileModel(at: mlmodel, configuration: config), bundle, "same content, same entry")

        let x = try MultiArray(contentsOfNPY: Paths.fixture("coreml/activation_relu/input_x.npy"))
        let y = try MultiArray(contentsOfNPY: Paths.fixture("coreml/activation_relu/output_y.npy"))
        let source = try MLModel(contentsOf: mlmodel, configuration: config)
        XCTAssertEqual(source.modelDescription.modelType, "neuralNetwork")
        XCTAssertNotNil(source.modelDescription.specificationVersion)
        guard case let .multiArray(a)? = try source.prediction(from: ["x": .multiArray(x)])["y"] else { return XCTFail("no y") }
        XCTAssertEqual(a.shape, [3, 6, 6])
        XCTAssertLessThan(maxAbsDiff(a.values, y.values), 1e-6)

        let compiled = try MLModel(contentsOf: bundle, configuration: config)
        guard case let .multiArray(b)? = try compiled.prediction(from: ["x": .multiArray(x)])["y"] else { return XCTFail("no y") }
        XCTAssertEqual(b.values.count, y.values.count)
        XCTAssertLessThan(maxAbsDiff(b.values, y.values), 1e-6)

        // A Keras file compiles to the same entry that opening it uses.
        let h5 = Paths.fixture("demo/digits_cnn.h5")
        let kerasBundle = try MLModel.compileModel(at: h5, configuration: config)
        let opened = try MLModel(contentsOf: h5, configuration: config)
        XCTAssertTrue(opened.loadedFromCache)
        XCTAssertEqual(opened.compiledModelURL, kerasBundle)
    }

    func testCompileModelRefusesModelTypesWithoutABundleForm() throws {
        let url = Paths.fixture("classical/pipeline_classifier_scaler_logistic/model.mlmodel")
        XCTAssertThrowsError(try MLModel.compileModel(at: url, configuration: try configuration())) { error in
            guard case let MLModelError.notCompilable(path, type)? = error as? MLModelError else {
                return XCTFail("expected notCompilable, got \(error)")
            }
            XCTAssertEqual(path, url.path)
            XCTAssertEqual(type, "pipelineClassifier")
            XCTAssertTrue("\(error)".contains("open the .mlmodel itself"), "\(error)")
        }
    }

    /// A scikit-learn pipeline (scaler + logistic regression) against scikit-learn's outputs.
    func testClassicalPipelineMatchesScikitLearnOneByOneAndInABatch() throws {
        let dir = Paths.fixture("classical/pipeline_classifier_scaler_logistic")
        let model = try MLModel(contentsOf: dir.appendingPathComponent("model.mlmodel"), configuration: try configuration())
        let d = model.modelDescription
        XCTAssertEqual(d.modelType, "pipelineClassifier")
        XCTAssertEqual(d.inputs.map(\.name), ["sepal_length", "sepal_width", "petal_length", "petal_width"])
        XCTAssertTrue(d.inputs.allSatisfy { $0.type == .double && !$0.isOptional })
        XCTAssertEqual(d.predictedFeatureName, "classLabel")
        XCTAssertEqual(d.predictedProbabilitiesName, "classProbability")
        XCTAssertEqual(d.outputDescriptionsByName["classProbability"]?.type, .dictionary)
        XCTAssertEqual(d.outputDescriptionsByName["classProbability"]?.dictionaryKeyType, .int64)

        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("inputs.json"))) as? [[String: Double]])
        let expected = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("expected.json"))) as? [[String: Any]])
        XCTAssertEqual(rows.count, expected.count)
        let inputs: [FeatureProvider] = rows.map { $0.mapValues { FeatureValue.double($0) } }
        let batch = try model.predictions(from: inputs)
        XCTAssertEqual(batch.count, rows.count)
        for (i, (row, want)) in zip(inputs, expected).enumerated() {
            let one = try model.prediction(from: row)
            XCTAssertEqual(one, batch[i], "row \(i): batch and single predictions differ")
            XCTAssertEqual(one["classLabel"], .int64(Int64(try XCTUnwrap(want["classLabel"] as? Int))), "row \(i)")
            guard case let .dictionary(.int64Keys(p))? = one["classProbability"] else { return XCTFail("row \(i): \(one)") }
            let wantP = try XCTUnwrap(want["classProbability"] as? [String: Double])
            for (k, v) in wantP {
                let got = try XCTUnwrap(p[Int64(k)!], "row \(i) label \(k)")
                XCTAssertEqual(got, v, accuracy: 1e-9 + 1e-6 * abs(v), "row \(i) label \(k)")
            }
        }
    }

    /// An image classifier (.mlmodel, BGR image input, 205 labels) on stored pixels, against
    /// NumPy's evaluation of the layer formulas.
    func testImageClassifierMatchesNumPyOnStoredPixels() throws {
        let dir = Paths.fixture("seed_coreml/googlenet_places205_lookalike")
        let model = try MLModel(contentsOf: dir.appendingPathComponent("model.mlmodel"), configuration: try configuration())
        let d = model.modelDescription
        let image = try XCTUnwrap(d.inputDescriptionsByName["image"]?.imageConstraint)
        XCTAssertEqual([image.pixelsWide, image.pixelsHigh], [224, 224])
        XCTAssertEqual(image.colorSpace, .bgr)
        guard case let .strings(labels)? = d.classLabels else { return XCTFail("no string labels: \(String(describing: d.classLabels))") }
        XCTAssertEqual(labels.count, 205)
        let probsName = try XCTUnwrap(d.predictedProbabilitiesName)

        // The stored pixels are the graph's [1, 224, 224, 3] input in the model's BGR order.
        let pixels = try MultiArray(contentsOfNPY: dir.appendingPathComponent("input_image.npy"))
        XCTAssertEqual(pixels.shape, [1, 224, 224, 3])
        let bgr = try FeatureImage(width: 224, height: 224, colorSpace: .bgr, pixels: pixels.values.map { UInt8($0) })
        let out = try model.prediction(from: ["image": .image(bgr)])
        guard case let .dictionary(.stringKeys(p))? = out[probsName] else { return XCTFail("\(out.keys.sorted())") }
        let reference = try MultiArray(contentsOfNPY: dir.appendingPathComponent("expected_probabilities.npy")).values
        let got = labels.map { p[$0] ?? .nan }
        XCTAssertLessThan(maxAbsDiff(got, reference), 1e-4)
        let best = reference.indices.max { reference[$0] < reference[$1] }!
        XCTAssertEqual(out[try XCTUnwrap(d.predictedFeatureName)], .string(labels[best]))

        // The same pixels given as RGB are converted to the model's BGR: the same prediction.
        var rgbPixels = bgr.pixels
        for i in stride(from: 0, to: rgbPixels.count, by: 3) { rgbPixels.swapAt(i, i + 2) }
        let rgb = try model.imageFeature(pixels: rgbPixels, width: 224, height: 224, colorSpace: .rgb, for: "image")
        XCTAssertEqual(try model.prediction(from: ["image": rgb]), out)
    }

    /// A PNG read through the library, fitted with Vision's crop-and-scale options.
    func testImageFeatureFromPNGIsFittedToTheInput() throws {
        let model = try MLModel(contentsOf: Paths.fixture("seed_coreml/googlenet_places205_lookalike/model.mlmodel"),
                                configuration: try configuration())
        let png = Paths.fixture("demo/digit_7.png")
        for option in ImageCropAndScale.allCases {
            guard case let .image(img) = try model.imageFeature(contentsOf: png, for: "image", cropAndScale: option) else {
                return XCTFail("not an image")
            }
            XCTAssertEqual([img.width, img.height], [224, 224], "\(option)")
            XCTAssertEqual(img.colorSpace, .bgr, "\(option)")
            XCTAssertEqual(img.pixels.count, 224 * 224 * 3)
        }
        // The same through FeatureValue with a constraint built by hand (Core ML's MLFeatureValue(imageAt:constraint:options:)).
        let constraint = MLImageConstraint(pixelsWide: 224, pixelsHigh: 224, colorSpace: .bgr)
        XCTAssertEqual(try FeatureValue.image(contentsOf: png, constraint: constraint, cropAndScale: .scaleFit),
                       try model.imageFeature(contentsOf: png, for: "image", cropAndScale: .scaleFit))
        XCTAssertThrowsError(try model.imageFeature(contentsOf: png, for: "nope")) { error in
            XCTAssertTrue("\(error)".contains("no input 'nope'"), "\(error)")
        }
        XCTAssertThrowsError(try model.imageFeature(contentsOf: Paths.fixture("demo/expected.json"), for: "image"))
        // An image of another size given to prediction(from:) is fitted too.
        let small = try FeatureImage(width: 8, height: 8, colorSpace: .grayscale, pixels: [UInt8](repeating: 200, count: 64))
        let out = try model.prediction(from: ["image": .image(small)])
        XCTAssertEqual(out.count, model.modelDescription.outputs.count)
    }

    func testAsyncVariantsGiveTheSameResults() async throws {
        let config = try configuration()
        let model = try await MLModel.load(contentsOf: Paths.fixture("demo/digits_cnn.h5"), configuration: config)
        let input = try digitInput()
        let sync = try syncPrediction(model, input)  // in an async context the async overload is chosen, as Core ML's
        let async1 = try await model.prediction(from: input)
        XCTAssertEqual(sync, async1)
        let batch = try await model.predictions(from: [input, input])
        XCTAssertEqual(batch, [sync, sync])
        let url = try await MLModel.compileModel(at: Paths.fixture("demo/digits_cnn.h5"), configuration: config)
        XCTAssertEqual(url, model.compiledModelURL)
    }

    func syncPrediction(_ model: MLModel, _ input: FeatureProvider) throws -> FeatureProvider {
        try model.prediction(from: input)
    }

    func testConcurrentPredictionsOnOneModelAgree() throws {
        let model = try MLModel(contentsOf: Paths.fixture("classical/pipeline_classifier_scaler_logistic/model.mlmodel"),
                                configuration: try configuration())
        let nn = try MLModel(contentsOf: Paths.fixture("demo/digits_cnn.h5"), configuration: try configuration())
        let row: FeatureProvider = ["sepal_length": .double(6.3), "sepal_width": .double(2.7), "petal_length": .double(4.9), "petal_width": .double(1.8)]
        let want = try model.prediction(from: row)
        let wantNN = try nn.prediction(from: try digitInput())
        let input = try digitInput()
        let failures = NSLock()
        nonisolated(unsafe) var bad = 0
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let ok = (try? model.prediction(from: row)) == want && (try? nn.prediction(from: input)) == wantNN
            if !ok { failures.lock(); bad += 1; failures.unlock() }
        }
        XCTAssertEqual(bad, 0)
    }

    func testErrorsAreTypedAndNameWhatIsWrong() throws {
        let config = try configuration()
        XCTAssertThrowsError(try MLModel(contentsOf: URL(fileURLWithPath: "/nonexistent/model.h5"), configuration: config)) { error in
            XCTAssertEqual(error as? MLModelError, .fileNotFound(path: "/nonexistent/model.h5", cwd: nil))
        }
        let model = try MLModel(contentsOf: Paths.fixture("classical/pipeline_classifier_scaler_logistic/model.mlmodel"), configuration: config)
        XCTAssertThrowsError(try model.prediction(from: ["petal": .double(1)])) { error in
            guard case .unknownFeature(name: "petal", inputs: _)? = error as? MLModelError else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try model.prediction(from: ["sepal_length": .double(1)])) { error in
            XCTAssertTrue(error is FeatureError, "\(error)")
            XCTAssertTrue("\(error)".contains("sepal_width"), "\(error)")
        }
    }

    func testDescriptionsCarryClassLabelsAndFlexibleShapes() throws {
        let iris = try MLModelDescription(contentsOf: Paths.fixture("classical/pipeline_classifier_scaler_logistic/model.mlmodel"))
        XCTAssertEqual(iris.classLabels, .int64s([0, 1, 2]))
        XCTAssertEqual(iris, try MLModel(contentsOf: Paths.fixture("classical/pipeline_classifier_scaler_logistic/model.mlmodel")).modelDescription)
        XCTAssertThrowsError(try MLModelDescription(contentsOf: Paths.fixture("demo/digits_cnn.h5"))) { error in
            XCTAssertTrue("\(error)".contains("open it with MLModel(contentsOf:)"), "\(error)")
        }
        // A Create ML sound classifier: Apple-proprietary first stage, flexible input length.
        let sound = try Paths.shared("corpus/mlmodel/edolj_SoundClassifier.mlmodel")
        let d = try MLModelDescription(contentsOf: sound)
        XCTAssertEqual(d.modelType, "pipelineClassifier")
        let samples = try XCTUnwrap(d.inputDescriptionsByName["audioSamples"]?.multiArrayConstraint)
        XCTAssertEqual(samples.shape, [15600])
        XCTAssertEqual(samples.shapeConstraint, .range([.init(lowerBound: 8000, upperBound: 240000)]))
        guard case let .strings(labels)? = d.classLabels else { return XCTFail("\(String(describing: d.classLabels))") }
        // The GLM stage's labels (9 weight rows: reference-class encoding of 10 classes).
        XCTAssertEqual(labels, ["cel", "cla", "flu", "gac", "gel", "org", "pia", "sax", "tru", "vio"])
        XCTAssertThrowsError(try MLModel(contentsOf: sound)) { error in
            XCTAssertTrue(error is FeatureError, "\(error)")
            XCTAssertTrue("\(error)".contains("audioFeaturePrint"), "\(error)")
        }
    }

    /// A stateful ML program (iOS 18 states) is refused with a typed error naming its state:
    /// feature models don't keep state between predictions (`mlconv predict` does).
    func testStatefulMLProgramIsRefusedWithATypedError() throws {
        let dir = Paths.fixture("mlprogram_state")
        let package = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: dir.path).first { $0.hasSuffix(".mlpackage") })
        XCTAssertThrowsError(try MLModel(contentsOf: dir.appendingPathComponent(package), configuration: try configuration())) { error in
            XCTAssertTrue(error is FeatureError, "\(type(of: error)): \(error)")
            XCTAssertTrue("\(error)".contains("state"), "\(error)")
        }
    }
}
