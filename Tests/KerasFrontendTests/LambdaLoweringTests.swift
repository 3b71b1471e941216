import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// The bytecode evaluator on functions marshalled by every installed CPython (2.7, 3.6–3.13;
/// Fixtures/lambda/bytecode_versions.json, made by Scripts/make_lambda_bytecode_fixtures.py).
final class LambdaBytecodeVersionTests: XCTestCase {
    struct Doc: Decodable {
        struct Case: Decodable { var id: String; var source: String; var expected: String? }
        struct Version: Decodable {
            struct Code: Decodable { var id: String; var marshal_base64: String }
            var python: String
            var cases: [Code]
        }
        var cases: [Case]
        var versions: [Version]
    }

    static func doc() throws -> Doc {
        let url = KerasTestPaths.repositoryRoot.appendingPathComponent("Fixtures/lambda/bytecode_versions.json")
        return try JSONDecoder().decode(Doc.self, from: Data(contentsOf: url))
    }

    /// Reads the raw fixture JSON (defaults and closures are arbitrary JSON values).
    static func raw() throws -> [String: Any] {
        let url = KerasTestPaths.repositoryRoot.appendingPathComponent("Fixtures/lambda/bytecode_versions.json")
        return try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
    }

    static func lambdaLayer(_ code: [String: Any]) throws -> KerasLayerConfig {
        let config: [String: Any] = ["name": "l", "function": [code["marshal_base64"]!, code["defaults"] ?? NSNull(), code["closure"] ?? NSNull()],
                                     "function_type": "lambda", "arguments": [String: Any]()]
        let data = try JSONSerialization.data(withJSONObject: config)
        let json = try KerasJSON.parse(String(decoding: data, as: UTF8.self))
        return KerasLayerConfig(name: "l", className: "Lambda", config: json)
    }

    func testEveryVersionGivesTheSourceExpression() throws {
        let doc = try Self.doc()
        let raw = try Self.raw()
        let rawVersions = raw["versions"] as? [[String: Any]] ?? []
        XCTAssertEqual(doc.versions.map { $0.python.split(separator: ".").prefix(2).joined(separator: ".") },
                       ["2.7", "3.6", "3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13"])
        var checked = 0
        for (v, rv) in zip(doc.versions, rawVersions) {
            let codes = rv["cases"] as? [[String: Any]] ?? []
            for (c, code) in zip(doc.cases, codes) {
                let what = "CPython \(v.python) \(c.id)"
                let layer = try Self.lambdaLayer(code)
                if let expected = c.expected {
                    do {
                        let e = try KerasLambdaExpression(layer: layer, kerasVersion: nil)
                        XCTAssertEqual(e.expression.description, expected, what)
                    } catch {
                        XCTFail("\(what): \(error)")
                    }
                } else {
                    XCTAssertThrowsError(try KerasLambdaExpression(layer: layer, kerasVersion: nil), what)
                }
                checked += 1
            }
        }
        XCTAssertEqual(checked, doc.versions.count * doc.cases.count)
    }

    /// Closures and defaults stored next to the code are bound by name.
    func testClosureAndDefaultValuesAreBound() throws {
        let raw = try Self.raw()
        for v in raw["versions"] as? [[String: Any]] ?? [] {
            let cases = v["cases"] as? [[String: Any]] ?? []
            let closure = try XCTUnwrap(cases.first { $0["id"] as? String == "closure_mean" })
            let e = try KerasLambdaExpression(layer: Self.lambdaLayer(closure), kerasVersion: nil)
            XCTAssertEqual(e.closureValues, ["keepdims": .bool(true)], "\(v["python"] ?? "")")
            let defaults = try XCTUnwrap(cases.first { $0["id"] as? String == "default_argument" })
            let d = try KerasLambdaExpression(layer: Self.lambdaLayer(defaults), kerasVersion: nil)
            XCTAssertEqual(d.parameters, ["x", "factor"])
            XCTAssertEqual(d.parameterValues["factor"]?.number, 2.0, "\(v["python"] ?? "")")  // JSON keeps no int/float distinction
        }
    }

    /// Untrusted bytecode: random code bytes, every truncation and a stack-depth bomb never trap;
    /// each gives an expression or a `PythonExpressionFailure`.
    func testMalformedBytecodeNeverTraps() throws {
        var code = MarshalCode(layout: .python311plus)
        code.argcount = 1
        code.varnames = ["x"]
        code.localsKinds = [0x26]
        code.names = ["K", "mean"]
        code.consts = [.none, .int(2), .tuple([.str("axis")])]
        var seeded = UInt64(0x9E3779B97F4A7C15)
        func next() -> UInt8 {
            seeded = seeded &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: seeded >> 56)
        }
        for table in [PythonOpcodeTable.python27, .python30to35, .python36to310, .python311, .python312, .python313] {
            for _ in 0..<400 {
                code.code = (0..<(2 * Int(next() % 40))).map { _ in next() }
                code.layout = table.wordcode ? .python311plus : .python2
                _ = try? PythonBytecodeEvaluator.evaluate(code, table: table)
            }
        }
        // LOAD_FAST x 300 times then RETURN_VALUE: refused for the stack depth.
        code.code = Array(repeating: [124, 0], count: 300).flatMap { $0 } + [83, 0]
        XCTAssertThrowsError(try PythonBytecodeEvaluator.evaluate(code, table: .python311)) { e in
            XCTAssertTrue("\(e)".contains("stack deeper"), "\(e)")
        }
        // x + x doubled 20 times through a local: refused for the expression size.
        var body: [UInt8] = []
        for _ in 0..<20 { body += [124, 0, 124, 0, 122, 0, 125, 0] }
        code.code = body + [124, 0, 83, 0]
        XCTAssertThrowsError(try PythonBytecodeEvaluator.evaluate(code, table: .python311)) { e in
            XCTAssertTrue("\(e)".contains("larger than"), "\(e)")
        }
        // A constant index out of range is an error, not a trap.
        code.code = [100, 200, 83, 0]
        XCTAssertThrowsError(try PythonBytecodeEvaluator.evaluate(code, table: .python311))
    }
}

/// Lambda and TFOpLambda fixtures (Scripts/keras_fixtures/lambdas.py) converted with no hooks
/// and compared with Keras; the seed's style-transfer Lambdas likewise; the switches around it.
final class LambdaParityTests: XCTestCase {
    static let fixtures = ["lambda_exprs_k2", "lambda_exprs_k3", "lambda_calls_k2", "lambda_calls_k3", "tfop_lambda_k2", "keras_ops_k3"]

    func fixture(_ name: String) throws -> KerasFixture {
        guard let fx = try KerasFixture.load(KerasTestPaths.fixtures).first(where: { $0.name == name }) else {
            throw XCTSkip("fixture \(name) is not in the manifest")
        }
        return fx
    }

    func convert(_ fx: KerasFixture, options: KerasConversionOptions = .init()) throws -> Graph {
        let dir = KerasTestPaths.fixtures
        return try KerasConverter(options: options).convert(modelAt: dir.appendingPathComponent(fx.model),
                                                            architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
    }

    func check(_ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let fx = try fixture(name)
        let g = try convert(fx)
        XCTAssertFalse(g.nodes.contains { if case .custom = $0.op { return true }; return false }, name)
        _ = try assertParity(g, fx, dir: KerasTestPaths.fixtures, file: file, line: line)
    }

    func test_lambda_exprs_k2() throws { try check("lambda_exprs_k2") }
    func test_lambda_exprs_k3() throws { try check("lambda_exprs_k3") }
    func test_lambda_calls_k2() throws { try check("lambda_calls_k2") }
    func test_lambda_calls_k3() throws { try check("lambda_calls_k3") }
    func test_tfop_lambda_k2() throws { try check("tfop_lambda_k2") }
    /// Keras 3 operations whose class names are also layers' (Add, Multiply, Concatenate…).
    func test_keras_ops_k3() throws { try check("keras_ops_k3") }

    /// The seed's res_crop and rescale_output (Keras 2 bytecode, full model and weights + JSON)
    /// convert with no flags: five crops (contiguous slices) and an affine pair, at parity.
    func testStyleTransferLambdasWithoutHooks() throws {
        for name in ["style_transfer_lambda_k2", "style_transfer_lambda_weights_k2"] {
            let fx = try fixture(name)
            let g = try convert(fx)
            XCTAssertEqual(g.nodes.filter { $0.op == .crop(crops: [[0, 0], [2, 2], [2, 2], [0, 0]]) }.count, 5, name)
            _ = try assertParity(g, fx, dir: KerasTestPaths.fixtures)
        }
    }

    /// Keras 3 saves these named functions by reference only (no code in the file): still the
    /// listing with fix flags.
    func testKeras3FunctionReferencesStillNeedHooks() throws {
        let fx = try fixture("style_transfer_lambda_k3")
        XCTAssertThrowsError(try convert(fx)) { e in
            guard case let KerasConversionError.unsupportedLayers(_, layers) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(layers.count, 6)
            XCTAssertTrue(layers[0].detail.contains("saved by name"), layers[0].detail)
            XCTAssertTrue("\(e)".contains("--lower res_crop=crop:2,2,2,2"), "\(e)")
        }
    }

    /// `autoLowerLambdas: false` (--no-auto-lambda) keeps the listing with the fix flags.
    func testNoAutoLambdaKeepsTheListing() throws {
        let fx = try fixture("style_transfer_lambda_k2")
        XCTAssertThrowsError(try convert(fx, options: .init(autoLowerLambdas: false))) { e in
            guard case let KerasConversionError.unsupportedLayers(_, layers) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(layers.map(\.name), ["res_crop_0", "res_crop_1", "res_crop_2", "res_crop_3", "res_crop_4", "rescale_output"])
            XCTAssertTrue("\(e)".contains("--lower res_crop=crop:2,2,2,2"), "\(e)")
        }
    }

    /// Explicit hooks win over the automatic lowering.
    func testHooksWin() throws {
        let fx = try fixture("style_transfer_lambda_k2")
        let hooks = [try KerasHookSpec(customLayerFlag: "res_crop=ResCropBlockLambda")].layerHooks(runtimeShapes: registryShapes)
        let g = try convert(fx, options: .init(hooks: hooks))
        let custom = g.nodes.filter { if case .custom = $0.op { return true }; return false }
        XCTAssertEqual(custom.count, 5)
        XCTAssertFalse(g.nodes.contains { $0.op.kind == .crop })
    }

    /// A Lambda that is not a pure expression keeps the listing, with the reason.
    func testUndecodableLambdaKeepsTheListing() throws {
        let raw = try LambdaBytecodeVersionTests.raw()
        let v311 = try XCTUnwrap((raw["versions"] as? [[String: Any]])?.first { ($0["python"] as? String)?.hasPrefix("3.11") == true })
        let cond = try XCTUnwrap((v311["cases"] as? [[String: Any]])?.first { $0["id"] as? String == "conditional" })
        let code = try XCTUnwrap(cond["marshal_base64"] as? String)
        let t = TinyKeras(config: """
            {"class_name": "Functional", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4]}, "inbound_nodes": []},
              {"class_name": "Lambda", "name": "cond", "config": {"name": "cond", "function": ["\(code)", null, null], "function_type": "lambda"},
               "inbound_nodes": [[["x", 0, 0, {}]]]}],
              "input_layers": [["x", 0, 0]], "output_layers": [["cond", 0, 0]]}}
            """)
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { e in
            guard case let KerasConversionError.unsupportedLayers(_, layers) = e else { return XCTFail("\(e)") }
            XCTAssertTrue(layers[0].detail.contains("not lowered automatically"), layers[0].detail)
            XCTAssertTrue("\(e)".contains("--custom-layer cond="), "\(e)")
        }
    }
}

/// Lambdas that would touch the batch axis are refused (the IR is per sample), never lowered
/// to something else.
final class LambdaBatchAxisTests: XCTestCase {
    func lower(_ expression: PythonExpression, shape: [Int] = [1, 4, 6]) -> Result<[Node], PythonLoweringFailure> {
        var l = PythonLowering(nodeName: "n", inputs: ["x"], inputTypes: [TensorType(shape)])
        do {
            guard case let .tensor(t) = try l.lower(expression, parameters: ["x": .tensor("x")], closure: [:]) else {
                return .failure(PythonLoweringFailure("not a tensor"))
            }
            return .success(l.finish(result: t, output: "out", finalName: "n"))
        } catch {
            return .failure(error)
        }
    }

    func call(_ f: String, _ args: [PythonExpression], _ kw: [(String, PythonExpression)] = []) -> PythonExpression {
        let parts = f.split(separator: ".").map(String.init)
        var callee = PythonExpression.global(parts[0])
        for p in parts.dropFirst() { callee = .attribute(callee, p) }
        return .call(callee, args, kw.map { PythonKeywordArgument($0.0, $0.1) })
    }

    func testBatchAxisIsRefused() {
        let x = PythonExpression.parameter("x")
        let refused: [PythonExpression] = [
            call("K.mean", [x]),                                               // axis=None
            call("K.sum", [x, .constant(.int(0))]),                            // axis 0
            call("tf.reduce_max", [x], [("axis", .constant(.int(-3)))]),       // -3 is the batch axis of rank 3
            .index(x, .constant(.int(0))),                                     // x[0]
            .index(x, .slice(.constant(.int(1)), nil, nil)),                   // x[1:]
            call("K.reshape", [x, .constant(.tuple([.int(4), .int(6)]))]),     // no leading -1
            call("tf.transpose", [x]),                                         // reverses every axis
            call("K.permute_dimensions", [x, .constant(.tuple([.int(1), .int(0), .int(2)]))]),
            call("tf.squeeze", [x]),                                           // axis=None
            call("K.concatenate", [.list([x, x]), .constant(.int(0))]),
            call("np.mean", [x]),                                              // not a known library
        ]
        for e in refused {
            if case .success = lower(e) { XCTFail("lowered \(e)") }
        }
        // The same functions on other axes lower.
        let accepted: [PythonExpression] = [
            call("K.mean", [x, .constant(.int(-1))]),
            .index(x, .tuple([.slice(nil, nil, nil), .constant(.int(0))])),
            call("K.reshape", [x, .constant(.tuple([.int(-1), .int(24)]))]),
            call("K.permute_dimensions", [x, .constant(.tuple([.int(0), .int(2), .int(1)]))]),
        ]
        for e in accepted {
            guard case let .success(nodes) = lower(e) else { XCTFail("refused \(e)"); continue }
            XCTAssertEqual(nodes.last?.outputs, ["out"])
        }
    }

    /// `K.sqrt` clips at 0 first (tf_keras `backend.sqrt`), `keras.ops.sqrt` does not; default axes
    /// differ per library (K.concatenate −1, keras.ops.concatenate 0 → refused as the batch axis).
    func testLibrarySemantics() throws {
        let x = PythonExpression.parameter("x")
        guard case let .success(k) = lower(call("K.sqrt", [x])), case let .success(o) = lower(call("keras.ops.sqrt", [x])) else {
            return XCTFail("sqrt not lowered")
        }
        XCTAssertEqual(k.map(\.op.kind), [.unary, .unary])
        XCTAssertEqual(o.map(\.op.kind), [.unary])
        guard case .success = lower(call("K.concatenate", [.list([x, x])])) else { return XCTFail("K.concatenate") }
        if case .success = lower(call("keras.ops.concatenate", [.list([x, x])])) { XCTFail("ops.concatenate joins the batch axis by default") }
    }
}

/// Corpus files whose Lambdas / TensorFlow ops mlconv lowers, converted with no hooks and
/// compared with tf_keras (Fixtures/corpus_keras_lambda, Scripts/make_lambda_corpus_refs.py).
final class LambdaCorpusParityTests: XCTestCase {
    func check(_ stem: String, lambdas expected: [String: String]) throws {
        let model = try KerasTestPaths.sharedFile("corpus/keras/\(stem).h5")
        let dir = KerasTestPaths.repositoryRoot.appendingPathComponent("Fixtures/corpus_keras_lambda/\(stem)")
        struct Case: Decodable { var inputs: [String]; var outputs: [String] }
        let c = try JSONDecoder().decode(Case.self, from: Data(contentsOf: dir.appendingPathComponent("case.json")))
        let summary = try KerasInspector.inspect(model)
        for (name, text) in expected {
            XCTAssertEqual(summary.lambdas.first { $0.name == name }?.expression, text, name)
        }
        let g = try KerasConverter().convert(modelAt: model)
        let fx = KerasFixture(name: stem, model: "", inputs: c.inputs.enumerated().map { .init(name: $1, file: "input_\($0).npy", shape: nil) },
                              outputs: c.outputs.enumerated().map { .init(name: $1, file: "output_\($0).npy", shape: nil) })
        _ = try assertParity(g, fx, dir: dir)
    }

    func testFunctionalLambdaPython2Bytecode() throws {
        try check("dl4j_functional_lambda", lambdas: ["lambda_3": "lambda x: x ** 2", "lambda_4": "lambda x: 3 * x"])
    }

    func testDeepFMLambdasPython36Bytecode() throws {
        try check("dl4j_deepfm_multi_input_lambda", lambdas: [
            "cat_embed_2d_genure_mean": "lambda x: K.mean(x, axis=1, keepdims=keepdims)  where keepdims=True",
            "sum_of_tensors": "lambda x: K.sum(x, axis=1)",
            "square_of_tensors": "lambda x: K.square(x)",
            "lambda_1": "lambda x: x * 0.5",
            "embed_1d_mean": "lambda x: K.mean(x, axis=1, keepdims=keepdims)  where keepdims=False",
        ])
    }

    func testTensorFlowOpLayerTranspose() throws {
        try check("dl4j_tfkeras_tensorflowoplayer_transpose", lambdas: [:])
    }

    /// The Keras 1.2.1 behavioural-cloning model's Lambda (CPython 3.4–3.5 bytecode, a def with a
    /// docstring) is recovered from the JSON sidecar.
    func testKeras1NormalizeLambdaIsRecovered() throws {
        let json = try KerasTestPaths.sharedFile("corpus/keras/ncondo_carnd_behavioral_cloning.json")
        var text = try String(contentsOf: json, encoding: .utf8)
        if let decoded = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? String {
            text = decoded  // the file is double-encoded
        }
        let root = try KerasJSON.parse(text)
        let layers = root["config"]?.array ?? root["config"]?["layers"]?.array ?? []
        let entry = try XCTUnwrap(layers.first { $0["class_name"]?.string == "Lambda" })
        let layer = KerasLayerConfig(name: "lambda_1", className: "Lambda", config: try XCTUnwrap(entry["config"]))
        let e = try KerasLambdaExpression(layer: layer, kerasVersion: "1.2.1")
        XCTAssertEqual(e.expression.description, "image / 127.5 - 1.0")
        XCTAssertEqual(e.functionName, "normalize")
    }
}

/// tf.keras 2.0–2.3 `TensorFlowOpLayer` NodeDefs beyond the corpus' Transpose: StridedSlice
/// masks, a constant divisor, Mean with keep_dims, ConcatV2 with its axis input; expected values
/// computed here from the ops' definitions.
final class TensorFlowOpLayerTests: XCTestCase {
    func run(_ layers: String, input: [Int], output: String) throws -> (shape: [Int], values: [Float]) {
        let t = TinyKeras(config: """
            {"class_name": "Model", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, \(input.dropFirst().map(String.init).joined(separator: ", "))]}, "inbound_nodes": []},
              \(layers)],
              "input_layers": [["x", 0, 0]], "output_layers": [["\(output)", 0, 0]]}}
            """, version: "2.2.4-tf")
        let g = try KerasConverter().convert(file: t.file)
        let n = input.reduce(1, *)
        let x = try NDArray(shape: input, scalars: (0..<n).map { Float($0) })
        let y = try XCTUnwrap(try Model(graph: g).prediction(from: ["x": x])[g.outputs[0]])
        return (y.shape, y.scalars)
    }

    func testStridedSliceDivMeanConcat() throws {
        // x: [1, 4, 3] holding 0…11. slice = x[:, 1:4:2, ::-1] (begin_mask 1, end_mask 5 → axes 0 and 2 open).
        let slice = try run("""
            {"class_name": "TensorFlowOpLayer", "name": "s", "config": {"name": "s", "node_def": {"name": "s", "op": "StridedSlice",
              "input": ["x", "s/begin", "s/end", "s/strides"], "attr": {"begin_mask": {"i": "5"}, "end_mask": {"i": "5"},
              "ellipsis_mask": {"i": "0"}, "new_axis_mask": {"i": "0"}, "shrink_axis_mask": {"i": "0"}}},
              "constants": {"1": [0, 1, 0], "2": [0, 4, 0], "3": [1, 2, -1]}}, "inbound_nodes": [[["x", 0, 0, {}]]]}
            """, input: [1, 4, 3], output: "s")
        var expected: [Float] = []
        for r in stride(from: 1, to: 4, by: 2) { for c in stride(from: 2, through: 0, by: -1) { expected.append(Float(r * 3 + c)) } }
        XCTAssertEqual(slice.shape, [1, 2, 3])
        XCTAssertEqual(slice.values, expected)

        // mean over axis 1 with keep_dims of x / 4, then concatenated with itself on the last axis.
        let chain = try run("""
            {"class_name": "TensorFlowOpLayer", "name": "d", "config": {"name": "d", "node_def": {"name": "d", "op": "RealDiv", "input": ["x", "d/y"]},
              "constants": {"1": 4.0}}, "inbound_nodes": [[["x", 0, 0, {}]]]},
            {"class_name": "TensorFlowOpLayer", "name": "m", "config": {"name": "m", "node_def": {"name": "m", "op": "Mean", "input": ["d", "m/axes"],
              "attr": {"keep_dims": {"b": true}}}, "constants": {"1": [1]}}, "inbound_nodes": [[["d", 0, 0, {}]]]},
            {"class_name": "TensorFlowOpLayer", "name": "c", "config": {"name": "c", "node_def": {"name": "c", "op": "ConcatV2", "input": ["m", "m", "c/axis"]},
              "constants": {"2": -1}}, "inbound_nodes": [[["m", 0, 0, {}], ["m", 0, 0, {}]]]}
            """, input: [1, 4, 3], output: "c")
        var means: [Float] = []
        for c in 0..<3 {
            var sum: Float = 0
            for r in 0..<4 { sum += Float(r * 3 + c) / 4 }
            means.append(sum / 4)
        }
        XCTAssertEqual(chain.shape, [1, 1, 6])
        for (a, b) in zip(chain.values, means + means) { XCTAssertEqual(a, b, accuracy: 1e-6) }
    }

    func testUnknownOpIsListedWithTheOpName() {
        let t = TinyKeras(config: """
            {"class_name": "Model", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4]}, "inbound_nodes": []},
              {"class_name": "TensorFlowOpLayer", "name": "u", "config": {"name": "u", "node_def": {"name": "u", "op": "Cumprod", "input": ["x", "u/axis"]},
               "constants": {"1": 1}}, "inbound_nodes": [[["x", 0, 0, {}]]]}],
              "input_layers": [["x", 0, 0]], "output_layers": [["u", 0, 0]]}}
            """, version: "2.2.4-tf")
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { e in
            XCTAssertTrue("\(e)".contains("Cumprod") && "\(e)".contains("no IR lowering"), "\(e)")
        }
    }
}

/// Regression: negating the constant −2⁶³ from a Lambda's bytecode trapped (Int64 overflow).
final class LambdaConstantOverflowTests: XCTestCase {
    func testNegatingTheSmallestInt64ConstantIsRefusedNotATrap() {
        var l = PythonLowering(nodeName: "n", inputs: ["x"], inputTypes: [TensorType([1, 4])])
        let e = PythonExpression.binary(.add, .parameter("x"), .unary(.negative, .constant(.int(Int64.min))))
        XCTAssertThrowsError(try l.lower(e, parameters: ["x": .tensor("x")], closure: [:])) {
            XCTAssertTrue("\($0)".contains("overflows a 64-bit integer"), "\($0)")
        }
        var ok = PythonLowering(nodeName: "n", inputs: ["x"], inputTypes: [TensorType([1, 4])])
        XCTAssertNoThrow(try ok.lower(.binary(.add, .parameter("x"), .unary(.negative, .constant(.int(3)))),
                                      parameters: ["x": .tensor("x")], closure: [:]))
    }
}
