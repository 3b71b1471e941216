import Foundation
import XCTest
@testable import KerasFrontend
import MLGraph

/// Parsing of `--lower` / `--custom-layer` values and hooks files, with their error messages.
final class HookSpecTests: XCTestCase {
    func testLoweringForms() throws {
        let cases: [(String, KerasLowering, String)] = [
            ("crop:2,2,2,2", .crop(KerasBorders(all: 2)), "crop:2,2,2,2"),
            ("crop:2", .crop(KerasBorders(all: 2)), "crop:2,2,2,2"),
            ("crop:1,3", .crop(KerasBorders(top: 1, bottom: 1, left: 3, right: 3)), "crop:1,1,3,3"),
            ("crop", .crop(nil), "crop"),
            ("affine:127.5,127.5", .affine(scale: 127.5, offset: 127.5), "affine:127.5,127.5"),
            ("affine:2,-1", .affine(scale: 2, offset: -1), "affine:2,-1"),
            ("affine: 0.5 , 1e-3", .affine(scale: 0.5, offset: 0.001), "affine:0.5,0.001"),
            ("pad:reflect:40,40,40,40", .pad(mode: .reflect, borders: KerasBorders(all: 40), value: 0), "pad:reflect:40,40,40,40"),
            ("pad:edge:1,2,3,4", .pad(mode: .edge, borders: KerasBorders(top: 1, bottom: 2, left: 3, right: 4), value: 0), "pad:edge:1,2,3,4"),
            ("pad:constant", .pad(mode: .constant, borders: nil, value: 0), "pad:constant"),
            ("pad:constant=255:1", .pad(mode: .constant, borders: KerasBorders(all: 1), value: 255), "pad:constant=255:1,1,1,1"),
            ("pad:reflect", .pad(mode: .reflect, borders: nil, value: 0), "pad:reflect"),
            ("identity", .identity, "identity"),
        ]
        for (text, expected, rendered) in cases {
            let l = try KerasLowering(parsing: text)
            XCTAssertEqual(l, expected, text)
            XCTAssertEqual(l.description, rendered, text)
            XCTAssertEqual(try KerasLowering(parsing: rendered), l, "round trip of \(rendered)")
        }
    }

    func testLoweringErrorsNameTheTextAndTheForms() {
        let bad = ["scale:2", "crop:2,2,2", "crop:-1", "crop:a", "affine:2", "affine:x,1", "pad", "pad:mirror:1",
                   "pad:constant=x", "identity:1", "", "affine:inf,0"]
        for text in bad {
            XCTAssertThrowsError(try KerasLowering(parsing: text), text) { e in
                let m = "\(e)"
                XCTAssertTrue(m.contains("invalid lowering '\(text)'"), m)
                XCTAssertTrue(m.contains("crop:TOP,BOTTOM,LEFT,RIGHT") && m.contains("affine:SCALE,OFFSET"), m)
            }
        }
    }

    func testFlags() throws {
        let l = try KerasHookSpec(lowerFlag: "res_crop=crop:2,2,2,2")
        XCTAssertEqual(l.match, .any("res_crop"))
        XCTAssertEqual(l.action, .lower(.crop(KerasBorders(all: 2))))
        XCTAssertEqual(l.commandLineFlag, "--lower res_crop=crop:2,2,2,2")
        XCTAssertEqual(l.match.patterns, [.name("res_crop"), .lambdaFunction("res_crop"), .className("res_crop")])
        XCTAssertEqual(try KerasHookSpec(lowerFlag: "res_crop_*=crop:2").match.patterns, [.glob("res_crop_*")])

        let c = try KerasHookSpec(customLayerFlag: "rescale_output=RescaleOutputLambda")
        XCTAssertEqual(c.action, .customLayer(KerasCustomLayerSpec(className: "RescaleOutputLambda")))
        XCTAssertEqual(c.commandLineFlag, "--custom-layer rescale_output=RescaleOutputLambda")
        XCTAssertEqual(c.jsonText, #"{"match": "rescale_output", "customLayer": {"className": "RescaleOutputLambda"}}"#)

        for (flag, text, needle) in [("lower", "res_crop", "MATCH=OP[:ARGS]"), ("lower", "=crop:2", "both sides"),
                                     ("lower", "x=crop:2,2,2", "invalid lowering 'crop:2,2,2'"),
                                     ("custom", "x=", "both sides"), ("custom", "x", "MATCH=ClassName"),
                                     ("custom", "x=My Class", "not a class name")] {
            XCTAssertThrowsError(flag == "lower" ? try KerasHookSpec(lowerFlag: text) : try KerasHookSpec(customLayerFlag: text), text) { e in
                XCTAssertTrue("\(e)".contains(needle), "\(e)")
                XCTAssertTrue("\(e)".contains(text), "\(e)")
            }
        }
    }

    func testOutputShapeRules() throws {
        XCTAssertEqual(try KerasOutputShapeRule(parsing: "auto"), .automatic)
        XCTAssertEqual(try KerasOutputShapeRule(parsing: "same"), .sameAsInput)
        XCTAssertEqual(try KerasOutputShapeRule(parsing: "crop:2"), .crop(KerasBorders(all: 2)))
        XCTAssertEqual(try KerasOutputShapeRule(parsing: "pad:1,2,3,4"), .pad(KerasBorders(top: 1, bottom: 2, left: 3, right: 4)))
        XCTAssertThrowsError(try KerasOutputShapeRule(parsing: "bigger")) { e in XCTAssertTrue("\(e)".contains("'bigger'"), "\(e)") }
    }

    // MARK: Hooks files

    func testHooksFileAllFeatures() throws {
        let specs = try KerasHooksFile.parse("""
            {"version": 1, "comment": "style transfer",
             "hooks": [
              {"match": "res_crop", "lower": "crop:2,2,2,2", "comment": "x[:, 2:-2, 2:-2]"},
              {"function": "rescale_output",
               "customLayer": {"className": "RescaleOutputLambda", "description": "(x + 1) * 127.5",
                               "parameters": {"scale": 127.5, "offset": 127, "big": 5000000000, "name": "tanh", "on": true,
                                              "d": {"double": 2}, "l": {"long": 3}},
                               "weights": false, "outputShape": "same"}},
              {"class": "ReflectionPadding2D", "lower": "pad:reflect"},
              {"name": "res_crop_4", "customLayer": "ResCropBlockLambda"},
              {"glob": "conv2d_1?", "customLayer": {"className": "X", "outputShape": [96, 96, 64]}},
              {"match": "two", "customLayer": {"className": "Y", "outputShape": [[4], [5, 6]]}}
             ]}
            """)
        XCTAssertEqual(specs.count, 6)
        XCTAssertEqual(specs[0], KerasHookSpec(match: .any("res_crop"), action: .lower(.crop(KerasBorders(all: 2)))))
        XCTAssertEqual(specs[1].match, .function("rescale_output"))
        guard case let .customLayer(c) = specs[1].action else { return XCTFail() }
        XCTAssertEqual(c.className, "RescaleOutputLambda")
        XCTAssertEqual(c.description, "(x + 1) * 127.5")
        XCTAssertEqual(c.parameters, ["scale": .double(127.5), "offset": .int(127), "big": .long(5_000_000_000), "name": .string("tanh"),
                                      "on": .bool(true), "d": .double(2), "l": .long(3)])
        XCTAssertFalse(c.includeWeights)
        XCTAssertEqual(c.outputShape, .sameAsInput)
        XCTAssertEqual(specs[2], KerasHookSpec(match: .className("ReflectionPadding2D"), action: .lower(.pad(mode: .reflect, borders: nil, value: 0))))
        XCTAssertEqual(specs[3], KerasHookSpec(match: .name("res_crop_4"), action: .customLayer(KerasCustomLayerSpec(className: "ResCropBlockLambda"))))
        XCTAssertEqual(specs[4].match.patterns, [.glob("conv2d_1?")])
        guard case let .customLayer(x) = specs[4].action, case let .customLayer(y) = specs[5].action else { return XCTFail() }
        XCTAssertEqual(x.outputShape, .explicit([[96, 96, 64]]))
        XCTAssertEqual(y.outputShape, .explicit([[4], [5, 6]]))
        // Every spec's JSON reads back to itself.
        for s in specs {
            let again = try KerasHooksFile.parse("{\"hooks\": [\(s.jsonText)]}")
            XCTAssertEqual(again, [s], s.jsonText)
        }
        XCTAssertEqual(try KerasHooksFile.parse(#"[{"match": "a", "lower": "identity"}]"#).count, 1, "a bare list")
    }

    func testCommittedStyleTransferHooksFiles() throws {
        for name in ["style_transfer.json", "style_transfer_lowered.json"] {
            let url = KerasTestPaths.repositoryRoot.appendingPathComponent("Fixtures/hooks/\(name)")
            let specs = try KerasHooksFile.load(contentsOf: url)
            XCTAssertEqual(specs.count, 3, name)
        }
    }

    func testMalformedHooksFilesNameTheFileAndTheProblem() {
        let cases: [(String, String)] = [
            ("{\"hooks\": [\n  {\"match\": \"a\", \"lower\": \"crop:2\"},\n  {\"match\": \"b\" \"lower\": \"identity\"}\n]}", "h.json:3:"),
            ("", "not valid JSON"),
            ("{\"hook\": []}", "unknown top-level key 'hook'"),
            ("{\"hooks\": {}}", "\"hooks\": an object"),
            ("{\"version\": 2, \"hooks\": []}", "version"),
            ("42", "found a number"),
            ("{\"hooks\": [\"res_crop\"]}", "hooks[0]: expected an object"),
            ("{\"hooks\": [{\"lower\": \"identity\"}]}", "hooks[0]: no selector"),
            ("{\"hooks\": [{\"match\": \"a\", \"class\": \"B\", \"lower\": \"identity\"}]}", "several selectors"),
            ("{\"hooks\": [{\"match\": \"a\"}]}", "hooks[0] (a): no action"),
            ("{\"hooks\": [{\"match\": \"a\", \"lower\": \"identity\", \"customLayer\": \"X\"}]}", "both \"lower\" and \"customLayer\""),
            ("{\"hooks\": [{\"match\": \"a\", \"lowr\": \"identity\"}]}", "unknown key 'lowr'"),
            ("{\"hooks\": [{\"match\": \"a\", \"lower\": \"crop:1,2,3\"}]}", "invalid lowering 'crop:1,2,3'"),
            ("{\"hooks\": [{\"match\": \"a\", \"lower\": 3}]}", "\"lower\" must be a string"),
            ("{\"hooks\": [{\"match\": \"\", \"lower\": \"identity\"}]}", "non-empty string"),
            ("{\"hooks\": [{\"match\": \"a\", \"customLayer\": {\"description\": \"x\"}}]}", "needs \"className\""),
            ("{\"hooks\": [{\"match\": \"a\", \"customLayer\": {\"className\": \"\"}}]}", "needs \"className\""),
            ("{\"hooks\": [{\"match\": \"a\", \"customLayer\": {\"className\": \"X\", \"weights\": \"yes\"}}]}", "weights must be true or false"),
            ("{\"hooks\": [{\"match\": \"a\", \"customLayer\": {\"className\": \"X\", \"parameters\": {\"p\": [1]}}}]}", "parameters.p"),
            ("{\"hooks\": [{\"match\": \"a\", \"customLayer\": {\"className\": \"X\", \"outputShape\": [0, 3]}}]}", "positive whole numbers"),
            ("{\"hooks\": [{\"match\": \"a\", \"customLayer\": {\"className\": \"X\", \"outputShape\": \"big\"}}]}", "invalid output shape 'big'"),
            ("{\"hooks\": [{\"match\": \"a\", \"customLayer\": {\"className\": \"X\", \"shape\": \"same\"}}]}", "customLayer: unknown key 'shape'"),
        ]
        for (text, needle) in cases {
            XCTAssertThrowsError(try KerasHooksFile.parse(text, file: "h.json"), text) { e in
                let m = "\(e)"
                XCTAssertTrue(m.hasPrefix("h.json"), m)
                XCTAssertTrue(m.contains(needle), "'\(needle)' not in: \(m)")
            }
        }
        XCTAssertThrowsError(try KerasHooksFile.load(contentsOf: URL(fileURLWithPath: "/nonexistent/hooks.json"))) { e in
            XCTAssertTrue("\(e)".contains("/nonexistent/hooks.json: cannot read"), "\(e)")
        }
    }
}
