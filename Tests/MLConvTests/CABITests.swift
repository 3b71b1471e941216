// The C ABI (Sources/CMLConv/include/mlconv.h) called through its header, as a C program would:
// open / describe / predict / batch / result accessors / compile / errors / free, and two threads
// predicting on one model at once.
import CMLConv
import Foundation
import MLConv
import XCTest

/// C feature arrays whose strings and buffers live until `free()`.
final class CFeatures {
    var features: [mlconv_feature] = []
    private var allocations: [UnsafeMutableRawPointer] = []

    func string(_ s: String) -> UnsafePointer<CChar> {
        let p = strdup(s)!
        allocations.append(UnsafeMutableRawPointer(p))
        return UnsafePointer(p)
    }

    func buffer<T>(_ values: [T]) -> UnsafeRawPointer {
        let p = UnsafeMutablePointer<T>.allocate(capacity: max(values.count, 1))
        p.initialize(from: values, count: values.count)
        allocations.append(UnsafeMutableRawPointer(p))
        return UnsafeRawPointer(p)
    }

    private func base(_ name: String, _ kind: mlconv_feature_kind) -> mlconv_feature {
        var f = mlconv_feature()
        f.name = string(name)
        f.kind = Int32(kind.rawValue)
        return f
    }

    func float32(_ name: String, shape: [Int], _ values: [Float]) {
        var f = base(name, MLCONV_KIND_MULTIARRAY)
        f.dtype = Int32(MLCONV_DTYPE_FLOAT32.rawValue)
        f.rank = Int32(shape.count)
        f.shape = buffer(shape.map(Int64.init)).assumingMemoryBound(to: Int64.self)
        f.data = buffer(values)
        features.append(f)
    }

    func double(_ name: String, _ v: Double) {
        var f = base(name, MLCONV_KIND_DOUBLE)
        f.double_value = v
        features.append(f)
    }

    func imageFile(_ name: String, path: String, options: String?) {
        var f = base(name, MLCONV_KIND_IMAGE)
        f.string_value = string(path)
        f.options_json = options.map(string)
        features.append(f)
    }

    func imagePixels(_ name: String, height: Int, width: Int, pixels: [UInt8], options: String?) {
        var f = base(name, MLCONV_KIND_IMAGE)
        f.dtype = Int32(MLCONV_DTYPE_UINT8.rawValue)
        f.rank = 3
        f.shape = buffer([Int64(height), Int64(width), 3]).assumingMemoryBound(to: Int64.self)
        f.data = buffer(pixels)
        f.options_json = options.map(string)
        features.append(f)
    }

    deinit { for p in allocations { free(p) } }
}

func lastError() -> String { String(cString: mlconv_last_error()) }

final class CABITests: XCTestCase {
    func options() throws -> String {
        let dir = try Paths.temporary(self)
        return "{\"cache_dir\": \"\(dir.path)\"}"
    }

    func openDigits() throws -> OpaquePointer {
        let m = mlconv_open(Paths.fixture("demo/digits_cnn.h5").path, try options())
        return try XCTUnwrap(m, lastError())
    }

    func digitFeatures() throws -> CFeatures {
        let digit = try MultiArray(contentsOfNPY: Paths.fixture("demo/digit_7.npy"))
        let c = CFeatures()
        c.float32("digit", shape: digit.shape, digit.values.map { Float($0) })
        return c
    }

    /// The probabilities of a digits result, read through the accessors.
    func probabilities(_ r: OpaquePointer) -> [Double] {
        let i = mlconv_result_index(r, "probabilities")
        guard i >= 0 else { return [] }
        let idx = Int(i)
        XCTAssertEqual(mlconv_result_kind(r, idx), Int32(MLCONV_KIND_MULTIARRAY.rawValue))
        XCTAssertEqual(mlconv_result_dtype(r, idx), Int32(MLCONV_DTYPE_FLOAT32.rawValue))
        XCTAssertEqual(mlconv_result_rank(r, idx), 2)
        guard let shape = mlconv_result_shape(r, idx), let data = mlconv_result_data(r, idx) else { return [] }
        XCTAssertEqual([shape[0], shape[1]], [1, 10])
        let floats = data.assumingMemoryBound(to: Float.self)
        return (0..<10).map { Double(floats[$0]) }
    }

    func testOpenDescribePredictFree() throws {
        XCTAssertEqual(mlconv_abi_version(), MLCONV_ABI_VERSION)
        let m = try openDigits()
        defer { mlconv_close(m) }
        XCTAssertEqual(lastError(), "")

        let json = try XCTUnwrap(mlconv_describe(m), lastError())
        defer { mlconv_string_free(json) }
        let d = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(String(cString: json).utf8)) as? [String: Any])
        let inputs = try XCTUnwrap(d["inputs"] as? [[String: Any]])
        XCTAssertEqual(inputs.first?["name"] as? String, "digit")
        XCTAssertEqual(inputs.first?["type"] as? String, "multiArray")
        XCTAssertEqual(inputs.first?["shape"] as? [Int], [1, 8, 8, 1])
        XCTAssertEqual(inputs.first?["data_type"] as? String, "float32")
        XCTAssertEqual((d["outputs"] as? [[String: Any]])?.first?["name"] as? String, "probabilities")
        XCTAssertEqual(d["model_type"] as? String, "mlbundle")

        let c = try digitFeatures()
        var r: OpaquePointer?
        XCTAssertEqual(mlconv_predict(m, c.features, c.features.count, &r), 0, lastError())
        let result = try XCTUnwrap(r)
        defer { mlconv_result_free(result) }
        XCTAssertEqual(mlconv_result_count(result), 1)
        XCTAssertEqual(String(cString: mlconv_result_name(result, 0)), "probabilities")
        XCTAssertNil(mlconv_result_name(result, 1), "out of range")
        XCTAssertEqual(mlconv_result_index(result, "nope"), -1)
        XCTAssertLessThan(maxAbsDiff(probabilities(result), try kerasDigitProbabilities()), 1e-5)
    }

    func testErrorsReturnStatusAndAPerThreadMessage() throws {
        XCTAssertNil(mlconv_open("/nonexistent/model.h5", nil))
        XCTAssertTrue(lastError().contains("no such file"), lastError())
        // The message is the calling thread's: another thread has none.
        nonisolated(unsafe) var other = "unset"
        let t = Thread { other = lastError() }
        t.start()
        while !t.isFinished { usleep(1000) }
        XCTAssertEqual(other, "")

        XCTAssertNil(mlconv_open(Paths.fixture("demo/digits_cnn.h5").path, "{\"bogus\": 1}"))
        XCTAssertTrue(lastError().contains("unknown key \"bogus\""), lastError())
        XCTAssertNil(mlconv_open(Paths.fixture("demo/digits_cnn.h5").path, "not json"))
        XCTAssertTrue(lastError().contains("not a JSON object"), lastError())
        XCTAssertNil(mlconv_open(nil, nil))

        let m = try openDigits()
        defer { mlconv_close(m) }
        let c = CFeatures()
        c.float32("pixels", shape: [1], [0])
        var r: OpaquePointer?
        XCTAssertEqual(mlconv_predict(m, c.features, 1, &r), Int32(MLCONV_ERROR_FEATURE.rawValue))
        XCTAssertNil(r)
        XCTAssertTrue(lastError().contains("no input 'pixels'"), lastError())
        let bad = CFeatures()
        bad.float32("digit", shape: [1, 8, 8, 1], [1, 2, 3])  // three values for 64
        bad.features[0].rank = -1
        XCTAssertEqual(mlconv_predict(m, bad.features, 1, &r), Int32(MLCONV_ERROR_FEATURE.rawValue))
        XCTAssertTrue(lastError().contains("rank -1"), lastError())
        XCTAssertEqual(mlconv_predict(nil, nil, 0, &r), Int32(MLCONV_ERROR_INVALID_ARGUMENT.rawValue))
        mlconv_close(nil)
        mlconv_result_free(nil)
        mlconv_string_free(nil)
    }

    /// Regression: the runtime's input errors (wrong shape, missing input) were reported as
    /// MLCONV_ERROR_PREDICTION; the header puts them under MLCONV_ERROR_FEATURE.
    func testInputShapeAndMissingInputAreFeatureErrors() throws {
        let m = try openDigits()
        defer { mlconv_close(m) }
        var r: OpaquePointer?
        let wrongShape = CFeatures()
        wrongShape.float32("digit", shape: [1, 4, 4, 1], [Float](repeating: 0.5, count: 16))
        XCTAssertEqual(mlconv_predict(m, wrongShape.features, 1, &r), Int32(MLCONV_ERROR_FEATURE.rawValue), lastError())
        XCTAssertNil(r)
        XCTAssertTrue(lastError().contains("'digit'") && lastError().contains("(1, 4, 4, 1)"), lastError())
        let none = CFeatures()
        none.double("unused_scalar", 1)
        XCTAssertEqual(mlconv_predict(m, none.features, 0, &r), Int32(MLCONV_ERROR_FEATURE.rawValue), lastError())
        XCTAssertNil(r)
        XCTAssertTrue(lastError().contains("digit"), lastError())
        // A good prediction still succeeds after the errors.
        let c = try digitFeatures()
        XCTAssertEqual(mlconv_predict(m, c.features, c.features.count, &r), 0, lastError())
        if let r { mlconv_result_free(r) }
    }

    func testClassicalModelScalarsDictionariesAndBatches() throws {
        let dir = Paths.fixture("classical/pipeline_classifier_scaler_logistic")
        let m = try XCTUnwrap(mlconv_open(dir.appendingPathComponent("model.mlmodel").path, nil), lastError())
        defer { mlconv_close(m) }
        let rows = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("inputs.json"))) as? [[String: Double]])
        let expected = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("expected.json"))) as? [[String: Any]])
        let c = CFeatures()
        for row in rows { for (k, v) in row.sorted(by: { $0.key < $1.key }) { c.double(k, v) } }
        let counts = rows.map(\.count)
        var results = [OpaquePointer?](repeating: nil, count: rows.count)
        XCTAssertEqual(mlconv_predict_batch(m, c.features, counts, rows.count, &results), 0, lastError())
        for (i, (r, want)) in zip(results, expected).enumerated() {
            let r = try XCTUnwrap(r)
            defer { mlconv_result_free(r) }
            let label = Int(mlconv_result_index(r, "classLabel"))
            XCTAssertEqual(mlconv_result_kind(r, label), Int32(MLCONV_KIND_INT64.rawValue))
            XCTAssertEqual(mlconv_result_int64(r, label), Int64(try XCTUnwrap(want["classLabel"] as? Int)), "row \(i)")
            let probs = Int(mlconv_result_index(r, "classProbability"))
            XCTAssertEqual(mlconv_result_kind(r, probs), Int32(MLCONV_KIND_DICTIONARY.rawValue))
            let text = String(cString: try XCTUnwrap(mlconv_result_string(r, probs)))
            let got = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Double])
            let wantP = try XCTUnwrap(want["classProbability"] as? [String: Double])
            XCTAssertEqual(Set(got.keys), Set(wantP.keys))
            for (k, v) in wantP { XCTAssertEqual(got[k] ?? .nan, v, accuracy: 1e-9 + 1e-6 * abs(v), "row \(i) \(k)") }
        }
        // One row predicted alone gives the batch's first result.
        var one: OpaquePointer?
        XCTAssertEqual(mlconv_predict(m, c.features, counts[0], &one), 0, lastError())
        let r = try XCTUnwrap(one)
        XCTAssertEqual(mlconv_result_int64(r, Int(mlconv_result_index(r, "classLabel"))), Int64(expected[0]["classLabel"] as? Int ?? -1))
        mlconv_result_free(r)
        // A classical model has no bundle form.
        XCTAssertNil(mlconv_compile_model(dir.appendingPathComponent("model.mlmodel").path, try options()))
        XCTAssertTrue(lastError().contains("no compiled .mlbundle form"), lastError())
    }

    func testImagesFromFilesAndRawPixels() throws {
        let dir = Paths.fixture("seed_coreml/googlenet_places205_lookalike")
        let m = try XCTUnwrap(mlconv_open(dir.appendingPathComponent("model.mlmodel").path, nil), lastError())
        defer { mlconv_close(m) }
        // Raw BGR pixels (the stored graph input) against NumPy's probabilities.
        let pixels = try MultiArray(contentsOfNPY: dir.appendingPathComponent("input_image.npy")).values.map { UInt8($0) }
        let c = CFeatures()
        c.imagePixels("image", height: 224, width: 224, pixels: pixels, options: "{\"color_space\": \"BGR\"}")
        var r: OpaquePointer?
        XCTAssertEqual(mlconv_predict(m, c.features, 1, &r), 0, lastError())
        let result = try XCTUnwrap(r)
        defer { mlconv_result_free(result) }
        let labels = try String(contentsOf: dir.appendingPathComponent("labels.txt"), encoding: .utf8).split(separator: "\n").map(String.init)
        let model = try MLModel(contentsOf: dir.appendingPathComponent("model.mlmodel"))
        let probsName = try XCTUnwrap(model.modelDescription.predictedProbabilitiesName)
        let text = String(cString: try XCTUnwrap(mlconv_result_string(result, Int(mlconv_result_index(result, probsName)))))
        let probs = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Double])
        let reference = try MultiArray(contentsOfNPY: dir.appendingPathComponent("expected_probabilities.npy")).values
        XCTAssertLessThan(maxAbsDiff(labels.map { probs[$0] ?? .nan }, reference), 1e-4)
        let labelIndex = Int(mlconv_result_index(result, try XCTUnwrap(model.modelDescription.predictedFeatureName)))
        XCTAssertEqual(mlconv_result_kind(result, labelIndex), Int32(MLCONV_KIND_STRING.rawValue))

        // A PNG file, fitted with each crop option.
        for crop in ["center", "fit", "fill"] {
            let f = CFeatures()
            f.imageFile("image", path: Paths.fixture("demo/digit_7.png").path, options: "{\"crop\": \"\(crop)\"}")
            var out: OpaquePointer?
            XCTAssertEqual(mlconv_predict(m, f.features, 1, &out), 0, "\(crop): \(lastError())")
            XCTAssertGreaterThan(mlconv_result_count(out), 0)
            mlconv_result_free(out)
        }
        let f = CFeatures()
        f.imageFile("image", path: Paths.fixture("demo/digit_7.png").path, options: "{\"crop\": \"zoom\"}")
        XCTAssertEqual(mlconv_predict(m, f.features, 1, &r), Int32(MLCONV_ERROR_FEATURE.rawValue))
        XCTAssertTrue(lastError().contains("crop"), lastError())
    }

    func testTwoThreadsPredictOnOneModel() throws {
        nonisolated(unsafe) let m = try openDigits()  // the header allows concurrent predictions on one model
        defer { mlconv_close(m) }
        let reference = try kerasDigitProbabilities()
        let c = try digitFeatures()
        let lock = NSLock()
        nonisolated(unsafe) var worst = 0.0
        nonisolated(unsafe) var failures: [String] = []
        let features = c.features
        let threads = (0..<2).map { _ in
            Thread {
                for _ in 0..<20 {
                    var r: OpaquePointer?
                    let s = features.withUnsafeBufferPointer { mlconv_predict(m, $0.baseAddress, $0.count, &r) }
                    lock.lock()
                    if s != 0 || r == nil { failures.append(lastError()) } else { worst = max(worst, maxAbsDiff(self.probabilities(r!), reference)) }
                    lock.unlock()
                    mlconv_result_free(r)
                }
            }
        }
        threads.forEach { $0.start() }
        while !threads.allSatisfy(\.isFinished) { usleep(1000) }
        XCTAssertEqual(failures, [])
        XCTAssertLessThan(worst, 1e-5)
    }

    func testCompileModelReturnsTheCachedBundle() throws {
        let opts = try options()
        let path = try XCTUnwrap(mlconv_compile_model(Paths.fixture("demo/digits_cnn.h5").path, opts), lastError())
        let bundle = String(cString: path)
        mlconv_string_free(path)
        XCTAssertTrue(bundle.hasSuffix(".mlbundle"), bundle)
        let m = try XCTUnwrap(mlconv_open(bundle, nil), lastError())
        defer { mlconv_close(m) }
        let c = try digitFeatures()
        var r: OpaquePointer?
        XCTAssertEqual(mlconv_predict(m, c.features, 1, &r), 0, lastError())
        XCTAssertLessThan(maxAbsDiff(probabilities(try XCTUnwrap(r)), try kerasDigitProbabilities()), 1e-5)
        mlconv_result_free(r)
    }
}
