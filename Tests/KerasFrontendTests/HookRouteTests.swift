import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Asks `MLRuntime.CustomLayerRegistry` for custom layer output shapes (what `mlconv` does).
let registryShapes: KerasCustomLayerShapeFunction = { cls, params, ins in
    guard let t = CustomLayerRegistry.implementation(for: cls) else { return nil }
    return try t.init(parameters: params).outputShapes(forInputShapes: ins)
}

/// Each hook route (exact name, glob, Lambda function name from Keras 2 marshal and from Keras 3,
/// weights-only + JSON, class name for Keras 2 and Keras 3 "package>Class") on the issue-3
/// fixtures, both as lowerings and as custom layers, compared with the fixtures' Keras outputs
/// (max error ≤ 1e-4·max(1, max|Keras|)).
final class HookRouteTests: XCTestCase {
    let dir = KerasTestPaths.fixtures

    func fixture(_ name: String) throws -> KerasFixture {
        guard let fx = try KerasFixture.load(dir).first(where: { $0.name == name }) else { throw XCTSkip("fixture \(name) not in the manifest") }
        return fx
    }

    func convert(_ fx: KerasFixture, _ specs: [KerasHookSpec]) throws -> Graph {
        try KerasConverter(options: .init(hooks: specs.layerHooks(runtimeShapes: registryShapes)))
            .convert(modelAt: dir.appendingPathComponent(fx.model), architectureJSON: fx.config.map { dir.appendingPathComponent($0) })
    }

    func lower(_ match: KerasHookMatch, _ op: String) throws -> KerasHookSpec {
        KerasHookSpec(match: match, action: .lower(try KerasLowering(parsing: op)))
    }

    func custom(_ match: KerasHookMatch, _ cls: String) -> KerasHookSpec {
        KerasHookSpec(match: match, action: .customLayer(KerasCustomLayerSpec(className: cls)))
    }

    /// Converts with `specs`, checks Keras parity and the op counts, returns the graph.
    @discardableResult
    func check(_ name: String, _ specs: [KerasHookSpec], crops: Int = 0, customs: Int = 0, pads: Int? = nil,
               file: StaticString = #filePath, line: UInt = #line) throws -> Graph {
        let fx = try fixture(name)
        let g = try convert(fx, specs)
        XCTAssertEqual(g.opCounts["crop"] ?? 0, crops, "crop nodes", file: file, line: line)
        XCTAssertEqual(g.nodes.filter { if case .custom = $0.op { return true } else { return false } }.count, customs,
                       "custom nodes", file: file, line: line)
        if let pads { XCTAssertEqual(g.opCounts["pad"] ?? 0, pads, "pad nodes", file: file, line: line) }
        try assertParity(g, fx, dir: dir, file: file, line: line)
        return g
    }

    // MARK: Routes

    func testExactLayerNamesLowered() throws {
        let specs = try (0..<5).map { try lower(.name("res_crop_\($0)"), "crop:2,2,2,2") } + [try lower(.name("rescale_output"), "affine:127.5,127.5")]
        try check("style_transfer_lambda_k2", specs, crops: 5)
    }

    func testExactLayerNamesAsCommandLineMatch() throws {
        let specs = try (0..<5).map { try KerasHookSpec(lowerFlag: "res_crop_\($0)=crop:2") } + [try KerasHookSpec(lowerFlag: "rescale_output=affine:127.5,127.5")]
        try check("style_transfer_lambda_k3", specs, crops: 5)
    }

    func testGlobOnLayerNamesAsCustomLayers() throws {
        let g = try check("style_transfer_lambda_k3", [custom(.any("res_crop_*"), "ResCropBlockLambda"),
                                                       custom(.any("rescale_outpu?"), "RescaleOutputLambda")], customs: 6)
        let node = try XCTUnwrap(g.nodes.first { $0.name == "res_crop_2" })
        guard case let .custom(a) = node.op else { return XCTFail("\(node.op)") }
        XCTAssertEqual(a.className, "ResCropBlockLambda")
        XCTAssertEqual(a.outputShapes, [[1, 24, 24, 16]])
        XCTAssertTrue(a.description.contains("res_crop"), a.description)
        XCTAssertTrue(node.weights.isEmpty)
    }

    func testFunctionNameFromKeras2MarshalLowered() throws {
        try check("style_transfer_lambda_k2", [lower(.function("res_crop"), "crop:2,2,2,2"), lower(.function("rescale_output"), "affine:127.5,127.5")],
                  crops: 5)
    }

    func testFunctionNameFromKeras2MarshalAsCustomLayers() throws {
        // No shapes recorded in this file: the custom layers' output shapes come from the runtime classes.
        try check("style_transfer_lambda_k2", [custom(.function("res_crop"), "ResCropBlockLambda"),
                                               custom(.function("rescale_output"), "RescaleOutputLambda")], customs: 6)
    }

    func testFunctionNameFromKeras3Lowered() throws {
        // `crop` without numbers takes the borders from the shapes Keras 3 recorded.
        try check("style_transfer_lambda_k3", [lower(.function("res_crop"), "crop"), lower(.function("rescale_output"), "affine:127.5,127.5")],
                  crops: 5)
    }

    func testFunctionNameFromKeras3AsCustomLayersWithoutRuntimeShapes() throws {
        // Without a runtime to ask, `auto` takes the shapes Keras 3 recorded (and the input's for the output layer).
        let fx = try fixture("style_transfer_lambda_k3")
        let specs = [custom(.function("res_crop"), "ResCropBlockLambda"), custom(.function("rescale_output"), "RescaleOutputLambda")]
        let g = try KerasConverter(options: .init(hooks: specs.layerHooks()))
            .convert(modelAt: dir.appendingPathComponent(fx.model))
        try assertParity(g, fx, dir: dir)
    }

    func testWeightsOnlyWithJSONBothWays() throws {
        try check("style_transfer_lambda_weights_k2", [try KerasHookSpec(lowerFlag: "res_crop=crop:2,2,2,2"),
                                                       try KerasHookSpec(lowerFlag: "rescale_output=affine:127.5,127.5")], crops: 5)
        try check("style_transfer_lambda_weights_k2", [try KerasHookSpec(customLayerFlag: "res_crop=ResCropBlockLambda"),
                                                       try KerasHookSpec(customLayerFlag: "rescale_output=RescaleOutputLambda")], customs: 6)
    }

    func testClassNameKeras2ReadsPaddingConfig() throws {
        let g = try check("style_transfer_reflect_k2", [try KerasHookSpec(lowerFlag: "ReflectionPadding2D=pad:reflect")], crops: 5, pads: 1)
        let pad = try XCTUnwrap(g.nodes.first { $0.name == "reflection_padding2d_1" })
        XCTAssertEqual(pad.op, .pad(PadAttributes(mode: .reflect, pads: [[0, 0], [40, 40], [40, 40], [0, 0]])))
    }

    func testClassNameKeras3PackagePrefixIsStripped() throws {
        try check("style_transfer_reflect_k3", [lower(.className("ReflectionPadding2D"), "pad:reflect:40,40,40,40")], crops: 5, pads: 1)
        try check("style_transfer_reflect_k3", [lower(.className("mlconv>ReflectionPadding2D"), "pad:reflect:40")], crops: 5, pads: 1)
        try check("style_transfer_reflect_k3", [try KerasHookSpec(lowerFlag: "ReflectionPadding2D=pad:reflect")], crops: 5, pads: 1)
    }

    func testClassNameOverridesABuiltInClass() throws {
        // Cropping2D and Rescaling are built in; class hooks replace them (with the same maths).
        let g = try check("style_transfer_reflect_k2", [try KerasHookSpec(lowerFlag: "ReflectionPadding2D=pad:reflect"),
                                                        try KerasHookSpec(customLayerFlag: "Cropping2D=ResCropBlockLambda"),
                                                        try KerasHookSpec(lowerFlag: "Rescaling=affine:127.5,127.5")],
                          customs: 5, pads: 1)
        XCTAssertEqual(g.opCounts["crop"] ?? 0, 0)
    }

    // MARK: Precedence

    /// name > glob > function > class, whatever the order the hooks are given in.
    func testMatchPrecedence() throws {
        let fx = try fixture("style_transfer_lambda_k3")  // records the shapes the unregistered classes need
        let specs = [custom(.className("Lambda"), "ByClass"),
                     custom(.function("res_crop"), "ByFunction"),
                     custom(.glob("res_crop_[34]"), "ByGlob"),
                     custom(.name("res_crop_4"), "ByName")]
        let g = try convert(fx, specs)
        func cls(_ n: String) -> String? {
            guard case let .custom(a)? = g.nodes.first(where: { $0.name == n })?.op else { return nil }
            return a.className
        }
        XCTAssertEqual(cls("res_crop_0"), "ByFunction")
        XCTAssertEqual(cls("res_crop_3"), "ByGlob")
        XCTAssertEqual(cls("res_crop_4"), "ByName")
        XCTAssertEqual(cls("rescale_output"), "ByClass")
        XCTAssertEqual(LayerHook.Pattern.name("a").precedence, 0)
        XCTAssertEqual(LayerHook.Pattern.any.precedence, 4)
    }

    /// A Swift closure hook declining (nil) falls through to the next matching hook.
    func testSwiftHookDeclinesAndNextHookRuns() throws {
        let fx = try fixture("style_transfer_lambda_k3")
        var asked: [String] = []
        let decline = LayerHook(.name("res_crop_0")) { ctx in asked.append(ctx.layer.name); return nil }
        let hooks = [decline] + [try KerasHookSpec(lowerFlag: "res_crop=crop:2,2,2,2"),
                                 try KerasHookSpec(lowerFlag: "rescale_output=affine:127.5,127.5")].layerHooks()
        let g = try KerasConverter(options: .init(hooks: hooks)).convert(modelAt: dir.appendingPathComponent(fx.model))
        XCTAssertEqual(asked, ["res_crop_0"])
        XCTAssertEqual(g.opCounts["crop"], 5)
    }

    // MARK: Context given to Swift hooks

    func testSwiftHookSeesConfigShapesAndRecordedShapes() throws {
        let fx = try fixture("style_transfer_lambda_k3")
        var seen: [(String, [Int], [[Int?]], String?)] = []
        let hook = LayerHook(.lambdaFunction("res_crop")) { ctx in
            seen.append((ctx.nodeName, ctx.inputShape, ctx.recordedOutputShapes, ctx.lambda?.functionName))
            return [Node(name: ctx.nodeName, op: .crop(crops: [[0, 0], [2, 2], [2, 2], [0, 0]]), inputs: ctx.inputs, outputs: ctx.outputNames)]
        }
        let rescale = try KerasHookSpec(lowerFlag: "rescale_output=affine:127.5,127.5").layerHooks()
        _ = try KerasConverter(options: .init(hooks: [hook] + rescale)).convert(modelAt: dir.appendingPathComponent(fx.model))
        XCTAssertEqual(seen.map(\.0), (0..<5).map { "res_crop_\($0)" })
        XCTAssertEqual(seen[0].1, [1, 36, 36, 16])
        XCTAssertEqual(seen[0].2, [[nil, 32, 32, 16]])
        XCTAssertEqual(seen[0].3, "res_crop")
    }

    // MARK: Checks against recorded shapes

    func testHookResultDisagreeingWithRecordedShapeIsRejected() throws {
        let fx = try fixture("style_transfer_lambda_k3")
        XCTAssertThrowsError(try convert(fx, [try KerasHookSpec(lowerFlag: "res_crop=crop:1,1,1,1"),
                                              try KerasHookSpec(lowerFlag: "rescale_output=affine:127.5,127.5")])) { e in
            guard case let KerasConversionError.invalidHookResult(_, layer, _, message, _) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(layer, "res_crop_0")
            XCTAssertTrue(message.contains("(1, 34, 34, 16)") && message.contains("(None, 32, 32, 16)"), message)
        }
        // A custom layer given a wrong explicit shape: the same check.
        var c = KerasCustomLayerSpec(className: "ResCropBlockLambda"); c.outputShape = .sameAsInput
        XCTAssertThrowsError(try convert(fx, [KerasHookSpec(match: .function("res_crop"), action: .customLayer(c))])) { e in
            XCTAssertTrue("\(e)".contains("Keras recorded (None, 32, 32, 16)"), "\(e)")
        }
    }

    func testCropWithoutNumbersNeedsRecordedShapes() throws {
        let fx = try fixture("style_transfer_lambda_k2")  // records no shapes
        XCTAssertThrowsError(try convert(fx, [try KerasHookSpec(lowerFlag: "res_crop=crop"),
                                              try KerasHookSpec(lowerFlag: "rescale_output=identity")])) { e in
            XCTAssertTrue("\(e)".contains("crop:TOP,BOTTOM,LEFT,RIGHT"), "\(e)")
            XCTAssertTrue("\(e)".contains("res_crop_0"), "\(e)")
        }
    }

    func testLoweringOnWrongRankIsAnError() throws {
        let fx = try fixture("style_transfer_lambda_k3")
        XCTAssertThrowsError(try convert(fx, [try KerasHookSpec(lowerFlag: "res_crop=crop:2,2,2,2"),
                                              try KerasHookSpec(lowerFlag: "add_1=crop:1")])) { e in
            XCTAssertTrue("\(e)".contains("one input"), "\(e)")
        }
    }
}

/// Custom layers built from the `--custom-layer` / hooks-file specs on small in-memory models:
/// weights, parameters, descriptions, output-shape rules.
final class HookCustomLayerTests: XCTestCase {
    /// Input (1, 6, 6, 2) → custom class `MyScale` with two weights → output.
    func model() -> TinyKeras {
        TinyKeras(config: """
            {"class_name": "Functional", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 6, 6, 2]}, "inbound_nodes": []},
              {"class_name": "MyScale", "name": "scale", "config": {"name": "scale", "padding": [1, 2]},
               "inbound_nodes": [[["x", 0, 0, {}]]]}],
              "input_layers": [["x", 0, 0]], "output_layers": [["scale", 0, 0]]}}
            """, weights: ["scale": [("gamma", [2], [1, 2]), ("beta", [2], [0.5, -0.5])]])
    }

    func convert(_ spec: KerasCustomLayerSpec) throws -> Node {
        let g = try KerasConverter(options: .init(hooks: [KerasHookSpec(match: .className("MyScale"), action: .customLayer(spec))].layerHooks()))
            .convert(file: model().file)
        return try XCTUnwrap(g.nodes.first { $0.name == "scale" })
    }

    func testWeightsParametersAndDescription() throws {
        var spec = KerasCustomLayerSpec(className: "MyScaleLayer", description: "scales channels",
                                        parameters: ["k": .double(0.5), "n": .int(3), "mode": .string("x"), "on": .bool(true)])
        let n = try convert(spec)
        guard case let .custom(a) = n.op else { return XCTFail("\(n.op)") }
        XCTAssertEqual(a.className, "MyScaleLayer")
        XCTAssertEqual(a.description, "scales channels")
        XCTAssertEqual(a.parameters, ["k": .double(0.5), "n": .int(3), "mode": .string("x"), "on": .bool(true)])
        XCTAssertEqual(a.outputShapes, [[1, 6, 6, 2]], "auto without a runtime or recorded shape: the input's")
        XCTAssertEqual(n.weights.keys.sorted(), ["w0", "w1"])
        XCTAssertEqual(n.weights["w0"]?.floats(), [1, 2])
        XCTAssertEqual(n.weights["w1"]?.floats(), [0.5, -0.5])

        spec.includeWeights = false
        spec.description = nil
        let m = try convert(spec)
        XCTAssertTrue(m.weights.isEmpty)
        guard case let .custom(b) = m.op else { return XCTFail("\(m.op)") }
        XCTAssertEqual(b.description, "Keras MyScale 'scale'")
    }

    func testOutputShapeRules() throws {
        func shapes(_ rule: KerasOutputShapeRule) throws -> [[Int]] {
            guard case let .custom(a) = try convert(KerasCustomLayerSpec(className: "C", outputShape: rule)).op else { return [] }
            return a.outputShapes
        }
        XCTAssertEqual(try shapes(.sameAsInput), [[1, 6, 6, 2]])
        XCTAssertEqual(try shapes(.explicit([[3, 4, 5]])), [[1, 3, 4, 5]])
        XCTAssertEqual(try shapes(.crop(KerasBorders(top: 1, bottom: 0, left: 2, right: 1))), [[1, 5, 3, 2]])
        XCTAssertEqual(try shapes(.pad(KerasBorders(all: 2))), [[1, 10, 10, 2]])
        XCTAssertThrowsError(try shapes(.crop(KerasBorders(all: 3)))) { e in
            XCTAssertTrue("\(e)".contains("positive"), "\(e)")
        }
    }

    func testPadLoweringReadsVHPaddingConfig() throws {
        let g = try KerasConverter(options: .init(hooks: [try KerasHookSpec(lowerFlag: "MyScale=pad:constant=7")].layerHooks()))
            .convert(file: model().file)
        XCTAssertEqual(g.nodes.first?.op, .pad(PadAttributes(mode: .constant, pads: [[0, 0], [1, 1], [2, 2], [0, 0]], value: 7)))
        XCTAssertEqual(g.tensorTypes[g.outputs[0]]?.shape, [1, 8, 10, 2])
    }

    func testIdentityLowering() throws {
        let g = try KerasConverter(options: .init(hooks: [try KerasHookSpec(lowerFlag: "scale=identity")].layerHooks()))
            .convert(file: model().file)
        XCTAssertEqual(g.tensorTypes[g.outputs[0]]?.shape, [1, 6, 6, 2])
        XCTAssertFalse(g.nodes.contains { if case .custom = $0.op { return true } else { return false } })
    }
}
