// Tests for LambdaFunctionDecoder / PythonCodeSummary: recovering a Keras Lambda layer's Python
// function from its config without running Python.
//
// Data: Fixtures/lambda/*.json (made by Scripts/make_lambda_fixtures.py with CPython 3.11), and
// real third-party files read in place from <repo>/../shared (skipped with a message when absent):
// CPython 2.7 (Keras 2.0.9), 3.4–3.5 (Keras 1.2.1), 3.6–3.7 (tf.keras 2.2.4-tf) and 3.11 bytecode.

import Foundation
import HDF5
import TestSupport
import XCTest
@testable import KerasFrontend

final class LambdaFunctionTests: XCTestCase {

    // MARK: - Paths and loading

    /// The repository root: the nearest folder above this file holding Fixtures/lambda.
    private static let repositoryRoot: URL = {
        if let env = ProcessInfo.processInfo.environment["MLCONV_REPO_ROOT"] {
            return URL(fileURLWithPath: env)
        }
        var url = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Fixtures/lambda").path) { return url }
            url.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    private func fixture(_ name: String) throws -> [String: Any] {
        let url = Self.repositoryRoot.appendingPathComponent("Fixtures/lambda/\(name)")
        let data = try Data(contentsOf: url)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], name)
    }

    private func fixtureCases(_ name: String) throws -> [[String: Any]] {
        try XCTUnwrap(try fixture(name)["cases"] as? [[String: Any]])
    }

    /// A file under <repo>/../shared, or a visible skip when that folder is absent.
    private func sharedFile(_ relative: String) throws -> URL {
        let url = Self.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/\(relative)")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw XCTSkip("real-data Lambda test skipped: \(url.path) not found (the shared/ folder next to the repository holds third-party models)")
        }
        return url
    }

    /// The `model_config` JSON and `keras_version` of a Keras .h5 file.
    private func h5ModelConfig(_ url: URL) throws -> (config: Any, kerasVersion: String?) {
        let file = try HDF5File(path: url.path)
        let text = try XCTUnwrap(try file.stringAttribute("model_config"), "\(url.lastPathComponent) has no model_config")
        let version = try file.stringAttribute("keras_version")
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)), version)
    }

    /// A JSON file, decoding it twice when it holds a JSON string (Keras 1's `to_json` dumped
    /// with `json.dump` again).
    private func jsonFile(_ url: URL) throws -> Any {
        var value = try JSONSerialization.jsonObject(with: Data(contentsOf: url), options: [.fragmentsAllowed])
        if let text = value as? String {
            value = try JSONSerialization.jsonObject(with: Data(text.utf8))
        }
        return value
    }

    /// Every Lambda layer in a model config: (layer name, layer config), in file order.
    private func lambdaLayers(in config: Any) -> [(name: String, config: [String: Any])] {
        var out: [(String, [String: Any])] = []
        func walk(_ v: Any) {
            if let d = v as? [String: Any] {
                if d["class_name"] as? String == "Lambda", let c = d["config"] as? [String: Any] {
                    out.append(((c["name"] as? String) ?? (d["name"] as? String) ?? "?", c))
                }
                for key in d.keys.sorted() { walk(d[key]!) }
            } else if let a = v as? [Any] {
                a.forEach(walk)
            }
        }
        walk(config)
        return out
    }

    private func decodeAll(_ layers: [(name: String, config: [String: Any])], kerasVersion: String?,
                           file: StaticString = #filePath, line: UInt = #line) throws -> [String: LambdaFunctionInfo] {
        var out: [String: LambdaFunctionInfo] = [:]
        for (name, config) in layers {
            out[name] = try LambdaFunctionDecoder.decode(config: config, kerasVersion: kerasVersion)
        }
        return out
    }

    // MARK: - Our fixtures (CPython 3.11, tf_keras 2.21 and Keras 3.15)

    func testStyleTransferLambdaK2FixtureNames() throws {
        let cases = try fixtureCases("keras_lambda_configs.json").filter {
            ($0["id"] as? String)?.hasPrefix("style_transfer_lambda_k2/") == true
                || ($0["id"] as? String)?.hasPrefix("style_transfer_lambda_weights_k2/") == true
        }
        XCTAssertEqual(cases.count, 12)
        var names: [String] = []
        for c in cases {
            let info = try LambdaFunctionDecoder.decode(config: c["config"] as! [String: Any],
                                                        kerasVersion: c["keras_version"] as? String)
            names.append(info.functionName)
            let code = try XCTUnwrap(info.code)
            guard case .marshal = info.source else { return XCTFail("expected marshal source for \(c["id"]!)") }
            XCTAssertEqual(code.filename, "mlconv_style_lambdas.py")
            XCTAssertEqual(code.argumentNames, ["x"])
            XCTAssertEqual(code.pythonVersionGuess, "3.11–3.12")
            if info.functionName == "res_crop" {
                XCTAssertEqual(code.constants, ["None", "2", "-2"])
                XCTAssertEqual(code.qualname, "res_crop")
                XCTAssertEqual(code.firstLineNumber, 2)
            } else {
                XCTAssertEqual(code.constants, ["None", "1", "127.5"])
            }
            XCTAssertTrue(info.summary.hasPrefix("Python function \(info.functionName)(x) from mlconv_style_lambdas.py:"),
                          info.summary)
        }
        XCTAssertEqual(names, ["res_crop", "res_crop", "res_crop", "res_crop", "res_crop", "rescale_output",
                               "res_crop", "res_crop", "res_crop", "res_crop", "res_crop", "rescale_output"])
    }

    func testStyleTransferLambdaK3FixtureNames() throws {
        let cases = try fixtureCases("keras_lambda_configs.json").filter {
            ($0["id"] as? String)?.hasPrefix("style_transfer_lambda_k3/") == true
        }
        XCTAssertEqual(cases.count, 6)
        let infos = try cases.map { try LambdaFunctionDecoder.decode(config: $0["config"] as! [String: Any], kerasVersion: "3.15.1") }
        XCTAssertEqual(infos.map(\.functionName), ["res_crop", "res_crop", "res_crop", "res_crop", "res_crop", "rescale_output"])
        XCTAssertEqual(infos[0].source, .keras3(.function(module: "builtins", name: "res_crop", registeredName: nil)))
        XCTAssertNil(infos[0].code)
        XCTAssertEqual(infos[5].summary, "Python function rescale_output (Keras 3 reference, module builtins)")
    }

    /// Every committed config (fixture excerpts and configs synthesized with tf_keras / Keras 3)
    /// against the expectations the generator wrote.
    func testAllCommittedKerasConfigs() throws {
        let cases = try fixtureCases("keras_lambda_configs.json")
        XCTAssertGreaterThanOrEqual(cases.count, 27)
        for c in cases {
            let id = c["id"] as! String
            let expected = c["expected"] as! [String: Any]
            let info: LambdaFunctionInfo
            do {
                info = try LambdaFunctionDecoder.decode(config: c["config"] as! [String: Any],
                                                        kerasVersion: c["keras_version"] as? String)
            } catch {
                XCTFail("\(id): \(error)")
                continue
            }
            XCTAssertEqual(info.functionName, expected["function_name"] as? String, id)
            switch (expected["source"] as? String, info.source) {
            case ("marshal", .marshal), ("keras3_lambda", .keras3(.lambda)), ("keras3_function", .keras3(.function)):
                break
            case let ("module_function", .moduleFunction(module, name)):
                XCTAssertEqual(module, expected["module"] as? String, id)
                XCTAssertEqual(name, expected["function_name"] as? String, id)
            default:
                XCTFail("\(id): source \(info.source) but expected \(expected["source"] ?? "?")")
            }
            if let file = expected["filename"] as? String { XCTAssertEqual(info.code?.filename, file, id) }
            if let args = expected["argument_names"] as? [String] { XCTAssertEqual(info.code?.argumentNames, args, id) }
            if let d = expected["defaults"] as? [String] { XCTAssertEqual(info.defaults, d, id) }
            if let cl = expected["closure"] as? [String] { XCTAssertEqual(info.closure, cl, id) }
            if case let .keras3(.function(module, _, registered)) = info.source {
                if let m = expected["module"] as? String { XCTAssertEqual(module, m, id) }
                XCTAssertEqual(registered, expected["registered_name"] as? String, id)
            }
            XCTAssertFalse(info.summary.isEmpty, id)
        }
    }

    func testKeras3LambdaAndRegisteredFunction() throws {
        let cases = Dictionary(uniqueKeysWithValues: try fixtureCases("keras_lambda_configs.json").map { ($0["id"] as! String, $0) })
        let lambda = try LambdaFunctionDecoder.decode(config: cases["keras3/lambda"]!["config"] as! [String: Any], kerasVersion: "3.15.1")
        guard case let .keras3(.lambda(code)) = lambda.source else { return XCTFail("\(lambda.source)") }
        XCTAssertEqual(code.signature, "(x, factor)")
        XCTAssertEqual(lambda.defaults, ["0.5"])
        XCTAssertEqual(lambda.summary,
                       "anonymous Python lambda (x, factor) from mlconv_lambda_shapes.py:1, CPython 3.11–3.12 (Keras 3 __lambda__ bytecode); defaults 0.5")
        let registered = try LambdaFunctionDecoder.decode(config: cases["keras3/registered_function"]!["config"] as! [String: Any], kerasVersion: "3.15.1")
        XCTAssertEqual(registered.source, .keras3(.function(module: "builtins", name: "scale_output", registeredName: "MyPkg>scale_output")))
        let closure = try LambdaFunctionDecoder.decode(config: cases["tf_keras/closure_with_defaults"]!["config"] as! [String: Any], kerasVersion: "2.21.0")
        XCTAssertEqual(closure.code?.freeVariables, ["k"])
        XCTAssertEqual(closure.code?.qualname, "make.<locals>.shift")
        XCTAssertTrue(closure.summary.hasSuffix("; defaults 1.0; closes over k=2.0"), closure.summary)
        let numpy = try LambdaFunctionDecoder.decode(config: cases["tf_keras/function_type_function"]!["config"] as! [String: Any], kerasVersion: "2.21.0")
        XCTAssertEqual(numpy.summary, "Python function numpy.absolute (saved by name)")
    }

    /// Many shapes of function marshalled by CPython 3.11: every field against what CPython
    /// itself reported when the fixture was made.
    func testMarshalShapesFromCPython311() throws {
        let cases = try fixtureCases("marshal_py311.json")
        XCTAssertGreaterThanOrEqual(cases.count, 28)
        for c in cases {
            let id = c["id"] as! String
            let e = c["expected"] as! [String: Any]
            let bytes = [UInt8](try XCTUnwrap(Data(base64Encoded: c["marshal_base64"] as! String), id))
            let s: PythonCodeSummary
            do { s = try LambdaFunctionDecoder.decodeMarshalledCode(bytes) } catch {
                XCTFail("\(id): \(error)")
                continue
            }
            XCTAssertEqual(s.name, e["name"] as? String, id)
            XCTAssertEqual(s.qualname, e["qualname"] as? String, id)
            XCTAssertEqual(s.argumentNames, e["argument_names"] as? [String], id)
            XCTAssertEqual(s.positionalOnlyCount, e["positional_only_count"] as? Int, id)
            XCTAssertEqual(s.keywordOnlyCount, e["keyword_only_count"] as? Int, id)
            XCTAssertEqual(s.names, e["names"] as? [String], id)
            XCTAssertEqual(s.constants, e["constants"] as? [String], id)
            XCTAssertEqual(s.freeVariables, e["free_variables"] as? [String], id)
            XCTAssertEqual(s.nestedCode.map(\.name), e["nested_code"] as? [String], id)
            XCTAssertEqual(s.filename, e["filename"] as? String, id)
            XCTAssertEqual(s.firstLineNumber, e["first_line"] as? Int, id)
            XCTAssertEqual(s.flags, e["flags"] as? Int, id)
            XCTAssertEqual(s.pythonVersionGuess, e["python_version_guess"] as? String, id)
            // Any kerasVersion hint reads the same data the same way.
            for hint in ["1.2.1", "2.0.9", "2.2.4-tf", "3.15.1"] {
                XCTAssertEqual(try LambdaFunctionDecoder.decodeMarshalledCode(bytes, kerasVersion: hint), s, "\(id) with \(hint)")
            }
        }
    }

    func testSignatureAndDescription() throws {
        let cases = Dictionary(uniqueKeysWithValues: try fixtureCases("marshal_py311.json").map { ($0["id"] as! String, $0) })
        func summary(_ id: String) throws -> PythonCodeSummary {
            try LambdaFunctionDecoder.decodeMarshalledCode([UInt8](Data(base64Encoded: cases[id]!["marshal_base64"] as! String)!))
        }
        XCTAssertEqual(try summary("posonly_varargs").signature, "(a, b, /, c, *rest, d, e, **options)")
        XCTAssertEqual(try summary("defaults_kwonly").signature, "(x, scale, *, axis, keepdims)")
        XCTAssertEqual(try summary("star_lambda").signature, "(*a, **k)")
        XCTAssertEqual(try summary("attribute_chain").description,
                       "lambda(x) from mlconv_lambda_shapes.py:1, CPython 3.11; uses tf, image, resize; constants (64, 64), 'bilinear', ('method',)")
        XCTAssertEqual(try summary("nested_lambdas").nestedCode.first?.nestedCode.first?.constants, ["None", "1"])
    }

    // MARK: - Real third-party files (read in place, never copied)

    /// Keras 2.0.9 on CPython 2.7: the marshal bytes are stored as raw_unicode_escape text.
    func testCorpusDL4JFunctionalLambdaKeras209Python27() throws {
        let (config, version) = try h5ModelConfig(try sharedFile("corpus/keras/dl4j_functional_lambda.h5"))
        XCTAssertEqual(version, "2.0.9")
        let layers = lambdaLayers(in: config)
        XCTAssertEqual(layers.map(\.name), ["lambda_3", "lambda_4"])
        let infos = try decodeAll(layers, kerasVersion: version)
        for (name, constant) in [("lambda_3", "2"), ("lambda_4", "3")] {
            let info = try XCTUnwrap(infos[name])
            XCTAssertEqual(info.functionName, "<lambda>")
            let code = try XCTUnwrap(info.code)
            XCTAssertEqual(code.pythonVersionGuess, "2.x")
            XCTAssertEqual(code.argumentNames, ["x"])
            XCTAssertEqual(code.constants, ["None", constant])
            XCTAssertNil(code.qualname)
            XCTAssertTrue(code.filename.hasPrefix("<ipython-input-1"), code.filename)
            // The same bytes with no version hint.
            XCTAssertEqual(try LambdaFunctionDecoder.decode(config: layers.first { $0.name == name }!.config, kerasVersion: nil), info)
        }
    }

    /// tf.keras 2.2.4-tf on CPython 3.6/3.7: five lambdas, two with a closure value.
    func testCorpusDL4JDeepFMMultiInputLambdaPython36() throws {
        let (config, version) = try h5ModelConfig(try sharedFile("corpus/keras/dl4j_deepfm_multi_input_lambda.h5"))
        XCTAssertEqual(version, "2.2.4-tf")
        let layers = lambdaLayers(in: config)
        XCTAssertEqual(layers.count, 5)
        let infos = try decodeAll(layers, kerasVersion: version)
        XCTAssertEqual(Set(infos.keys), ["cat_embed_2d_genure_mean", "sum_of_tensors", "square_of_tensors", "lambda_1", "embed_1d_mean"])
        for (name, info) in infos {
            XCTAssertEqual(info.functionName, "<lambda>", name)
            XCTAssertEqual(info.code?.pythonVersionGuess, "3.6–3.7", name)
            XCTAssertTrue(info.code?.filename.hasPrefix("<ipython-input-") == true, name)
        }
        let mean = try XCTUnwrap(infos["cat_embed_2d_genure_mean"]?.code)
        XCTAssertEqual(mean.names, ["K", "mean"])
        XCTAssertEqual(mean.freeVariables, ["keepdims"])
        XCTAssertEqual(infos["cat_embed_2d_genure_mean"]?.closure, ["True"])
        XCTAssertEqual(infos["embed_1d_mean"]?.closure, ["False"])
        XCTAssertEqual(infos["square_of_tensors"]?.code?.names, ["K", "square"])
        XCTAssertEqual(infos["lambda_1"]?.code?.constants, ["None", "0.5"])
        XCTAssertEqual(infos["sum_of_tensors"]?.code?.constants, ["None", "1", "('axis',)"])
    }

    /// Keras 1.2.1 on CPython 3.4/3.5, in a JSON file that is itself a JSON string.
    func testCorpusNcondoBehavioralCloningKeras121Python35() throws {
        let config = try jsonFile(try sharedFile("corpus/keras/ncondo_carnd_behavioral_cloning.json"))
        let layers = lambdaLayers(in: config)
        XCTAssertEqual(layers.map(\.name), ["lambda_1"])
        let info = try LambdaFunctionDecoder.decode(config: layers[0].config, kerasVersion: "1.2.1")
        XCTAssertEqual(info.functionName, "normalize")
        let code = try XCTUnwrap(info.code)
        XCTAssertEqual(code.pythonVersionGuess, "3.4–3.5")
        XCTAssertEqual(code.filename, "model.py")
        XCTAssertEqual(code.argumentNames, ["image"])
        XCTAssertEqual(code.firstLineNumber, 77)
        XCTAssertEqual(Array(code.constants.dropFirst()), ["127.5", "1.0"])
        XCTAssertTrue(code.constants[0].hasPrefix("'\\n    Returns a normalized image"), code.constants[0])
        XCTAssertEqual(try LambdaFunctionDecoder.decode(config: layers[0].config, kerasVersion: nil), info)
    }

    /// tf.keras 2.21 on CPython 3.11: the real style-transfer models, JSON and .h5.
    func testSharedStyleTransferVanGogh() throws {
        let json = try jsonFile(try sharedFile("models/style_transfer_vangogh.json"))
        let (h5, version) = try h5ModelConfig(try sharedFile("models/style_transfer_vangogh.h5"))
        let (reflect, reflectVersion) = try h5ModelConfig(try sharedFile("models/style_transfer_vangogh_reflect.h5"))
        XCTAssertEqual(version, "2.21.0")
        for (config, hint) in [(json, nil), (h5, version), (reflect, reflectVersion)] {
            let layers = lambdaLayers(in: config)
            let infos = try layers.map { try LambdaFunctionDecoder.decode(config: $0.config, kerasVersion: hint) }
            XCTAssertEqual(infos.map(\.functionName), ["res_crop", "res_crop", "res_crop", "res_crop", "res_crop", "rescale_output"])
            for info in infos {
                XCTAssertEqual(info.code?.filename, "make_real_style_transfer.py")
                XCTAssertEqual(info.code?.pythonVersionGuess, "3.11–3.12")
            }
            XCTAssertEqual(infos[0].code?.constants, ["None", "2", "-2"])
            XCTAssertEqual(infos[5].code?.constants, ["None", "1", "127.5"])
        }
    }

    // MARK: - Other CPython layouts, built byte by byte

    func testHandBuiltLayoutsAndVersionGuesses() throws {
        let py2 = MarshalBuilder.code(layout: .python2, name: "scale", args: ["x"], code: [0x7C, 0, 0, 0x53])
        XCTAssertEqual(try LambdaFunctionDecoder.decodeMarshalledCode(py2).pythonVersionGuess, "2.x")
        let py35 = MarshalBuilder.code(layout: .python30to37, name: "scale", args: ["x"], code: [0x7C, 0, 0, 0x53])
        XCTAssertEqual(try LambdaFunctionDecoder.decodeMarshalledCode(py35).pythonVersionGuess, "3.4–3.5")
        let py37 = MarshalBuilder.code(layout: .python30to37, name: "scale", args: ["x"], code: [0x7C, 0, 0x53, 0])
        XCTAssertEqual(try LambdaFunctionDecoder.decodeMarshalledCode(py37).pythonVersionGuess, "3.6–3.7")
        let py38 = MarshalBuilder.code(layout: .python38to310, name: "scale", args: ["a", "b"], posonly: 1,
                                       code: [0x7C, 0, 0x53, 0])
        let s38 = try LambdaFunctionDecoder.decodeMarshalledCode(py38)
        XCTAssertEqual(s38.pythonVersionGuess, "3.8–3.10")
        XCTAssertEqual(s38.signature, "(a, /, b)")
        XCTAssertEqual(s38.name, "scale")
        let py313 = MarshalBuilder.code(layout: .python311plus, name: "f", args: ["x"], code: [149, 0, 85, 0, 36, 0])
        XCTAssertEqual(try LambdaFunctionDecoder.decodeMarshalledCode(py313).pythonVersionGuess, "3.13")
        let py312 = MarshalBuilder.code(layout: .python311plus, name: "f", args: ["x"], code: [151, 0, 121, 0])
        XCTAssertEqual(try LambdaFunctionDecoder.decodeMarshalledCode(py312).pythonVersionGuess, "3.12")
        // A 3.14 slice constant.
        var slice = MarshalBuilder()
        slice.byte(0x80 | 0x3A); slice.int(2); slice.byte(0xE9); slice.int32(-2); slice.byte(0x4E)
        let py314 = MarshalBuilder.code(layout: .python311plus, name: "f", args: ["x"], code: [128, 0, 36, 0],
                                        extraConstants: slice.bytes)
        let s314 = try LambdaFunctionDecoder.decodeMarshalledCode(py314)
        XCTAssertEqual(s314.pythonVersionGuess, "3.14+")
        XCTAssertEqual(s314.constants, ["None", "slice(2, -2, None)"])
    }

    /// Reference-table order: a flagged code object takes its slot before its fields (CPython's
    /// r_ref_reserve), so later references count it first.
    func testReferenceSlotsOfNestedCodeObjects() throws {
        // Outer 3.8-layout code: slot 0 = outer code, 1 = co_code, 2 = consts tuple, 3 = inner code,
        // 4 = inner co_code, 5 = inner consts, 6 = inner names, 7 = "y" … (inner strings flagged).
        var inner = MarshalBuilder()
        inner.byte(0xE3)                                    // slot 3
        for v: Int32 in [1, 0, 0, 1, 1, 0x43] { inner.int32(v) }
        inner.byte(0x80 | 0x73); inner.int32(4); inner.raw([0x7C, 0, 0x53, 0])   // slot 4
        inner.byte(0x80 | 0x29); inner.byte(1); inner.byte(0x4E)                // slot 5 (None,)
        inner.byte(0x80 | 0x29); inner.byte(0)                                  // slot 6 ()
        inner.byte(0x80 | 0x29); inner.byte(1); inner.shortASCII("y", flagged: true)  // slot 7, "y" = 8
        inner.ref(6); inner.ref(6)                          // freevars, cellvars = ()
        inner.shortASCII("inner.py", flagged: true)         // slot 9
        inner.shortASCII("inner_fn", flagged: true)         // slot 10
        inner.int32(5)
        inner.byte(0x80 | 0x73); inner.int32(0)             // slot 11
        var outer = MarshalBuilder()
        outer.byte(0xE3)                                    // slot 0
        for v: Int32 in [1, 0, 0, 1, 1, 0x43] { outer.int32(v) }
        outer.byte(0x80 | 0x73); outer.int32(4); outer.raw([0x7C, 0, 0x53, 0])   // slot 1
        outer.byte(0x80 | 0x29); outer.byte(1); outer.raw(inner.bytes)          // slot 2
        outer.ref(6)                                        // names = ()
        outer.byte(0x29); outer.byte(1); outer.ref(8)       // varnames = ("y",)
        outer.ref(6); outer.ref(6)
        outer.ref(9)                                        // filename "inner.py"
        outer.ref(10)                                       // name "inner_fn"
        outer.int32(1)
        outer.ref(11)
        let s = try LambdaFunctionDecoder.decodeMarshalledCode(outer.bytes)
        XCTAssertEqual(s.name, "inner_fn")
        XCTAssertEqual(s.filename, "inner.py")
        XCTAssertEqual(s.argumentNames, ["y"])
        XCTAssertEqual(s.nestedCode.map(\.name), ["inner_fn"])
        XCTAssertEqual(s.constants, ["<code inner_fn>"])

        // A reference to the code object that is still being read is refused, not followed.
        var selfRef = MarshalBuilder()
        selfRef.byte(0xE3)
        for v: Int32 in [0, 0, 0, 0, 0, 0x43] { selfRef.int32(v) }
        selfRef.ref(0)
        XCTAssertThrowsError(try LambdaFunctionDecoder.decodeMarshalledCode(selfRef.bytes)) { error in
            XCTAssertTrue("\(error)".contains("still being read"), "\(error)")
        }
    }

    // MARK: - Errors

    func testTypedErrorsNameWhatIsMalformed() throws {
        XCTAssertThrowsError(try LambdaFunctionDecoder.decode(config: ["name": "l"], kerasVersion: nil)) {
            XCTAssertEqual($0 as? LambdaDecodingError, .missingFunction)
        }
        XCTAssertThrowsError(try LambdaFunctionDecoder.decode(config: ["function": 3], kerasVersion: nil)) {
            XCTAssertEqual($0 as? LambdaDecodingError,
                           .unexpectedFieldType(field: "function", expected: "a string, a list or an object", found: "a number"))
        }
        XCTAssertThrowsError(try LambdaFunctionDecoder.decode(config: ["function": [NSNull(), NSNull(), NSNull()]], kerasVersion: nil)) {
            XCTAssertEqual($0 as? LambdaDecodingError,
                           .unexpectedFieldType(field: "function[0]", expected: "a string of marshalled code", found: "null"))
        }
        XCTAssertThrowsError(try LambdaFunctionDecoder.decode(config: ["function": "x", "function_type": "raw"], kerasVersion: nil)) {
            XCTAssertEqual($0 as? LambdaDecodingError, .unsupportedFunctionForm("function_type \"raw\""))
        }
        XCTAssertThrowsError(try LambdaFunctionDecoder.decode(config: ["function": ["class_name": "__typespec__", "config": [:]]], kerasVersion: "3.1.0")) {
            XCTAssertEqual($0 as? LambdaDecodingError, .unsupportedFunctionForm("Keras 3 class_name \"__typespec__\""))
        }
        XCTAssertThrowsError(try LambdaFunctionDecoder.decode(config: ["function": "hello world", "function_type": "lambda"], kerasVersion: nil)) {
            guard case .undecodableCodeText? = $0 as? LambdaDecodingError else { return XCTFail("\($0)") }
        }
        // Truncated bytecode: every layout says where and why it stopped.
        let blob = [UInt8](Data(base64Encoded: try fixtureCases("marshal_py311.json")[0]["marshal_base64"] as! String)!)
        XCTAssertThrowsError(try LambdaFunctionDecoder.decodeMarshalledCode(Array(blob.dropLast(3)))) { error in
            guard case let .unrecognizedCodeLayout(attempts)? = error as? LambdaDecodingError else { return XCTFail("\(error)") }
            XCTAssertEqual(attempts.count, 4)
            XCTAssertTrue(attempts[0].hasPrefix("3.11+: at byte"), attempts[0])
            XCTAssertTrue(attempts[0].contains("truncated"), attempts[0])
            XCTAssertTrue("\(error)".hasPrefix("Lambda function bytecode is not a marshalled CPython"))
        }
        // A plain name without function_type is taken as a function name.
        let named = try LambdaFunctionDecoder.decode(config: ["function": "my_module.crop", "module": "m"], kerasVersion: "1.0.0")
        XCTAssertEqual(named.source, .moduleFunction(module: "m", name: "my_module.crop"))
        // The JSON-text entry point and a whole layer object.
        let layer = #"{"class_name": "Lambda", "config": {"function": "relu6", "function_type": "function", "module": "ops"}}"#
        XCTAssertEqual(try LambdaFunctionDecoder.decode(configJSON: layer, kerasVersion: "2.3.1").functionName, "relu6")
        XCTAssertThrowsError(try LambdaFunctionDecoder.decode(configJSON: "[1]", kerasVersion: nil))
    }

    func testHostileMarshalInputsThrow() throws {
        var cases: [(String, [UInt8])] = []
        cases.append(("empty", []))
        cases.append(("not a code object", [0x4E]))
        cases.append(("huge bytes length", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x73] + le(0x7FFF_FFFF)))
        cases.append(("negative bytes length", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x73] + le(-1)))
        cases.append(("huge tuple", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x73] + le(0) + [0x28] + le(0x7FFF_FFFF)))
        cases.append(("Int32.min long", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x6C] + le(Int32.min)))
        cases.append(("huge argcount", [0xE3] + le(0x7FFF_FFFF) + le(0) + le(0) + le(0) + le(0)))
        cases.append(("negative field", [0x63] + le(-5)))
        cases.append(("deep small tuples", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + Array(repeating: [0x29, 1], count: 100_000).flatMap { $0 }))
        cases.append(("deep lists", [0x5B] + Array(repeating: [0x5B] + le(1), count: 50_000).flatMap { $0 }))
        cases.append(("bad reference", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x72] + le(99)))
        cases.append(("negative reference", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x72] + le(-1)))
        cases.append(("flagged NULL", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0xB0]))
        cases.append(("unknown type", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x01]))
        cases.append(("bad text float", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x66, 3] + Array("abc".utf8)))
        cases.append(("long digit out of range", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x6C] + le(1) + [0xFF, 0xFF]))
        cases.append(("unnormalized long", [0xE3] + le(0) + le(0) + le(0) + le(0) + le(0) + [0x6C] + le(-2) + [1, 0, 0, 0]))
        cases.append(("py2 string ref", [0x63] + le(0) + le(0) + le(0) + le(0) + [0x52] + le(3)))
        cases.append(("dict without end", [0x7B, 0x4E, 0x4E, 0x4E]))
        for (what, bytes) in cases {
            XCTAssertThrowsError(try LambdaFunctionDecoder.decodeMarshalledCode(bytes), what) { error in
                XCTAssertNotNil(error as? LambdaDecodingError, what)
                XCTAssertFalse("\(error)".isEmpty)
            }
        }
    }

    /// Exponentially shared constants render within the length cap.
    func testSharedConstantsRenderWithinTheCap() throws {
        // consts = (t0, t1, …, t39) where t0 = (1, 2) and t[i] = (r t[i-1], r t[i-1]).
        var c = MarshalBuilder()
        c.byte(0x28); c.int32(40)
        // Slot 0 is the (flagged) code object, so t[i] takes slot i + 1.
        for level in 0..<40 {
            c.byte(0x80 | 0x29); c.byte(2)
            if level == 0 { c.int(1); c.int(2) } else { c.ref(Int32(level)); c.ref(Int32(level)) }
        }
        let code = MarshalBuilder.code(layout: .python311plus, name: "f", args: [], code: [151, 0, 36, 0], constantsTuple: c.bytes)
        let s = try LambdaFunctionDecoder.decodeMarshalledCode(code)
        XCTAssertEqual(s.constants.count, 40)
        XCTAssertEqual(s.constants[1], "((1, 2), (1, 2))")
        XCTAssertLessThanOrEqual(s.constants[39].count, PythonCodeSummary.constantReprLimit)
        XCTAssertTrue(s.constants[39].hasSuffix("..."))
    }

    /// Truncations and byte changes of real marshal data: every result is a summary or a
    /// `LambdaDecodingError`, never a trap.
    func testFuzzedMarshalDataNeverTraps() throws {
        var blobs: [[UInt8]] = try fixtureCases("marshal_py311.json").map {
            [UInt8](Data(base64Encoded: $0["marshal_base64"] as! String)!)
        }
        for c in try fixtureCases("keras_lambda_configs.json") {
            let config = c["config"] as! [String: Any]
            if let list = config["function"] as? [Any], let text = list.first as? String {
                blobs.append(try LambdaFunctionDecoder.marshalBytes(fromStoredCode: text))
            }
        }
        blobs.append(MarshalBuilder.code(layout: .python2, name: "scale", args: ["x"], code: [0x7C, 0, 0, 0x53]))
        blobs.append(MarshalBuilder.code(layout: .python30to37, name: "scale", args: ["x"], code: [0x7C, 0, 0, 0x53]))
        blobs.append(MarshalBuilder.code(layout: .python38to310, name: "scale", args: ["x"], code: [0x7C, 0, 0x53, 0]))
        // Real CPython 2.7 / 3.5 / 3.6 data when the shared corpus is present.
        let corpus = Self.repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus/keras")
        for name in ["dl4j_functional_lambda.h5", "dl4j_deepfm_multi_input_lambda.h5"] {
            let url = corpus.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            for layer in lambdaLayers(in: try h5ModelConfig(url).config) {
                if let text = (layer.config["function"] as? [Any])?.first as? String {
                    blobs.append(try LambdaFunctionDecoder.marshalBytes(fromStoredCode: text))
                }
            }
        }
        var decoded = 0, rejected = 0
        func attempt(_ bytes: [UInt8]) {
            do {
                _ = try LambdaFunctionDecoder.decodeMarshalledCode(bytes)
                decoded += 1
            } catch {
                rejected += 1
            }
        }
        var rng = SeededGenerator(seed: 0x5EED)
        for (index, blob) in blobs.enumerated() {
            for n in 0..<blob.count { attempt(Array(blob.prefix(n))) }
            // Every byte changed, on a sixth of the blobs (all are cheap, but the machine is shared).
            if index % 6 == 0 {
                for i in 0..<blob.count {
                    for change in [UInt8(0xFF), 0x80, 0x01] {
                        var m = blob
                        m[i] ^= change
                        attempt(m)
                    }
                    for value in [UInt8(0x00), 0x7F, 0xFF, 0x72] {
                        var m = blob
                        m[i] = value
                        attempt(m)
                    }
                }
            }
            // Random multi-byte damage, splices and duplications.
            for _ in 0..<100 {
                var m = blob
                for _ in 0..<(1 + Int(rng.next() % 4)) where !m.isEmpty {
                    let i = Int(rng.next() % UInt64(m.count))
                    switch rng.next() % 4 {
                    case 0: m[i] = UInt8(truncatingIfNeeded: rng.next())
                    case 1: m.remove(at: i)
                    case 2: m.insert(UInt8(truncatingIfNeeded: rng.next()), at: i)
                    default: m += m[i...].prefix(8)
                    }
                }
                attempt(m)
            }
        }
        XCTAssertGreaterThan(rejected, 0)
        XCTAssertGreaterThan(decoded, 0)  // harmless changes (inside strings, numbers) still decode
    }

    func testReprMatchesPython() {
        XCTAssertEqual(PythonRepr.floatRepr(1e16), "1e+16")
        XCTAssertEqual(PythonRepr.floatRepr(1234567890123456.0), "1234567890123456.0")
        XCTAssertEqual(PythonRepr.floatRepr(0.0001), "0.0001")
        XCTAssertEqual(PythonRepr.floatRepr(0.00001234), "1.234e-05")
        XCTAssertEqual(PythonRepr.floatRepr(-0.0), "-0.0")
        XCTAssertEqual(PythonRepr.floatRepr(.leastNonzeroMagnitude), "5e-324")
        XCTAssertEqual(PythonRepr.floatRepr(100.0), "100.0")
        XCTAssertEqual(PythonRepr.complexRepr(0, 3), "3j")
        XCTAssertEqual(PythonRepr.complexRepr(1, -2.5), "(1-2.5j)")
        XCTAssertEqual(PythonRepr.strRepr("it's"), "\"it's\"")
        XCTAssertEqual(PythonRepr.strRepr("a\u{7}\u{2028}é"), "'a\\x07\\u2028é'")
        XCTAssertEqual(PythonRepr.bytesRepr([0, 0x27, 0x41, 0x80]), "b\"\\x00'A\\x80\"")
        XCTAssertEqual(PythonRepr.longRepr(negative: true, digits: [0, 0, 0, 0, 1]), "-1152921504606846976")
    }
}

// MARK: - Test helpers

private func le(_ v: Int32) -> [UInt8] {
    let u = UInt32(bitPattern: v)
    return [UInt8(u & 0xFF), UInt8(u >> 8 & 0xFF), UInt8(u >> 16 & 0xFF), UInt8(u >> 24)]
}

/// Writes marshal bytes by hand (for layouts no local CPython can produce).
private struct MarshalBuilder {
    var bytes: [UInt8] = []
    mutating func byte(_ b: UInt8) { bytes.append(b) }
    mutating func raw(_ b: [UInt8]) { bytes += b }
    mutating func int32(_ v: Int32) { bytes += le(v) }
    /// `i` object.
    mutating func int(_ v: Int32) { byte(0x69); int32(v) }
    /// `r` object.
    mutating func ref(_ i: Int32) { byte(0x72); int32(i) }
    mutating func shortASCII(_ s: String, flagged: Bool = false) {
        byte(flagged ? 0xDA : 0x5A); byte(UInt8(s.utf8.count)); raw(Array(s.utf8))
    }

    /// A code object of `layout` with `args` as its parameters and locals, constants
    /// `(None,)` + `extraConstants` (or the given constants tuple), no names.
    static func code(layout: PythonCodeLayout, name: String, args: [String], posonly: Int32 = 0, code: [UInt8],
                     extraConstants: [UInt8] = [], constantsTuple: [UInt8]? = nil) -> [UInt8] {
        var b = MarshalBuilder()
        let py2 = layout == .python2
        func str(_ s: String) {
            if py2 { b.byte(0x74); b.int32(Int32(s.utf8.count)); b.raw(Array(s.utf8)) } else { b.shortASCII(s) }
        }
        func tuple(_ items: [String]) {
            if py2 { b.byte(0x28); b.int32(Int32(items.count)) } else { b.byte(0x29); b.byte(UInt8(items.count)) }
            items.forEach(str)
        }
        let n = Int32(args.count)
        b.byte(py2 ? 0x63 : 0xE3)
        switch layout {
        case .python2: for v in [n, n, 2, 0x43] { b.int32(v) }
        case .python30to37: for v in [n, 0, n, 2, 0x43] { b.int32(v) }
        case .python38to310: for v in [n, posonly, 0, n, 2, 0x43] { b.int32(v) }
        case .python311plus: for v in [n, posonly, 0, 2, 0x03] { b.int32(v) }
        }
        b.byte(0x73); b.int32(Int32(code.count)); b.raw(code)
        if let constantsTuple {
            b.raw(constantsTuple)
        } else {
            if py2 { b.byte(0x28); b.int32(extraConstants.isEmpty ? 1 : 2) } else {
                b.byte(0x29); b.byte(extraConstants.isEmpty ? 1 : 2)
            }
            b.byte(0x4E)
            b.raw(extraConstants)
        }
        tuple([])
        tuple(args)
        if layout == .python311plus {
            b.byte(0x73); b.int32(n); b.raw(Array(repeating: 0x26, count: args.count))
        } else {
            tuple([]); tuple([])
        }
        str("built.py")
        str(name)
        if layout == .python311plus { str(name) }
        b.int32(3)
        b.byte(0x73); b.int32(0)
        if layout == .python311plus { b.byte(0x73); b.int32(0) }
        return b.bytes
    }
}

