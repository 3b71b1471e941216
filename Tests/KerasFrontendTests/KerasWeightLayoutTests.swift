import XCTest
@testable import KerasFrontend
import MLGraph
import MLRuntime

/// Weight layouts, weight matching and conversion rules on tiny hand-made Keras files (in memory).
final class KerasWeightLayoutTests: XCTestCase {
    /// A Functional config with one input of `shape` (no batch) and the given layers chained.
    func chain(_ shape: [Int], _ layers: [(cls: String, name: String, config: String)], version: String = "2.15.0") -> String {
        var entries = [#"{"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, \#(shape.map(String.init).joined(separator: ", "))]}, "inbound_nodes": []}"#]
        var prev = "x"
        for l in layers {
            let cfg = l.config.isEmpty ? #""name": "\#(l.name)""# : #""name": "\#(l.name)", \#(l.config)"#
            entries.append(#"{"class_name": "\#(l.cls)", "name": "\#(l.name)", "config": {\#(cfg)}, "inbound_nodes": [[["\#(prev)", 0, 0, {}]]]}"#)
            prev = l.name
        }
        return #"{"class_name": "Functional", "keras_version": "\#(version)", "config": {"name": "m", "layers": [\#(entries.joined(separator: ", "))], "input_layers": [["x", 0, 0]], "output_layers": [["\#(prev)", 0, 0]]}}"#
    }

    func node(_ g: Graph, _ name: String) throws -> Node { try XCTUnwrap(g.nodes.first { $0.name == name }, "no node \(name)") }

    func testTransposeHelper() {
        // 2×3 → 3×2.
        XCTAssertEqual(WeightLayout.transpose([0, 1, 2, 3, 4, 5], shape: [2, 3], perm: [1, 0]), [0, 3, 1, 4, 2, 5])
        // (a,b,c) → (c,a,b)
        let v = ramp(24)
        let t = WeightLayout.transpose(v, shape: [2, 3, 4], perm: [2, 0, 1])
        for a in 0..<2 { for b in 0..<3 { for c in 0..<4 { XCTAssertEqual(t[c * 6 + a * 3 + b], v[a * 12 + b * 4 + c]) } } }
    }

    /// Conv2D kernel (kH, kW, Cin, Cout) → weight[o][i][h][w] = K[h][w][i][o].
    func testConv2DKernelIsTransposedToOIHW() throws {
        let (kh, kw, cin, cout) = (2, 3, 2, 4)
        let k = ramp(kh * kw * cin * cout)
        let t = TinyKeras(config: chain([5, 5, cin], [("Conv2D", "conv", #""filters": 4, "kernel_size": [2, 3], "padding": "same", "activation": "relu""#)]),
                          weights: ["conv": [("kernel", [kh, kw, cin, cout], k), ("bias", [cout], [1, 2, 3, 4])]])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "conv")
        guard case let .conv2d(a) = n.op else { return XCTFail("\(n.op)") }
        XCTAssertEqual(a.kernel, [2, 3]); XCTAssertEqual(a.padding, .same); XCTAssertEqual(a.activation, .relu)
        let w = try XCTUnwrap(n.weights["weight"])
        XCTAssertEqual(w.shape, [cout, cin, kh, kw])
        let f = w.floats()
        for o in 0..<cout { for i in 0..<cin { for h in 0..<kh { for x in 0..<kw {
            XCTAssertEqual(f[((o * cin + i) * kh + h) * kw + x], k[((h * kw + x) * cin + i) * cout + o])
        } } } }
        XCTAssertEqual(n.weights["bias"]?.floats(), [1, 2, 3, 4])
        XCTAssertEqual(g.tensorTypes["conv"]?.shape, [1, 5, 5, 4])
    }

    /// DepthwiseConv2D kernel (kH, kW, Cin, M) → grouped conv weight [Cin·M, 1, kH, kW], channel c·M+m.
    /// Keras 2 on Theano computes a true convolution: kernels are flipped spatially.
    func testTheanoKernelsAreFlippedSpatially() throws {
        let k = ramp(2 * 3)  // (kH 2, kW 3, Cin 1, Cout 1)
        let t = TinyKeras(config: chain([4, 4, 1], [("Conv2D", "conv", #""filters": 1, "kernel_size": [2, 3], "use_bias": false"#)]),
                          weights: ["conv": [("kernel", [2, 3, 1, 1], k)]])
        t.file.setAttribute("backend", of: "/", "theano")
        let g = try KerasConverter().convert(file: t.file)
        XCTAssertEqual(try node(g, "conv").weights["weight"]?.floats(), [5, 4, 3, 2, 1, 0])
        XCTAssertEqual(g.description.metadata.userDefined["keras.backend"], "theano")
    }

    /// Keras 3 `.weights.h5` (layers/<path>/vars/<i>, each `vars` naming its layer) + JSON.
    func testKeras3WeightsOnlyLayout() throws {
        let f = InMemoryKerasFile(path: "model.weights.h5")
        f.addGroup("/vars"); f.setAttribute("name", of: "/vars", "m")
        f.addGroup("/layers/input_layer/vars"); f.setAttribute("name", of: "/layers/input_layer/vars", "x")
        f.addGroup("/layers/dense/vars"); f.setAttribute("name", of: "/layers/dense/vars", "hidden")
        f.addDataset("/layers/dense/vars/0", shape: [2, 3], values: ramp(6))
        f.addDataset("/layers/dense/vars/1", shape: [3], values: [1, 2, 3])
        f.addGroup("/layers/dense_1/vars"); f.setAttribute("name", of: "/layers/dense_1/vars", "out")
        f.addDataset("/layers/dense_1/vars/0", shape: [3, 1], values: [1, 1, 1])
        f.addDataset("/layers/dense_1/vars/1", shape: [1], values: [9])
        let arch = chain([2], [("Dense", "hidden", #""units": 3"#), ("Dense", "out", #""units": 1"#)], version: "3.5.0")
        let g = try KerasConverter().convert(file: f, architectureJSON: arch)
        XCTAssertEqual(try node(g, "hidden").weights["bias"]?.floats(), [1, 2, 3])
        XCTAssertEqual(try node(g, "out").weights["bias"]?.floats(), [9])
    }

    func testDepthwiseKernelLayoutAndGroups() throws {
        let (kh, kw, cin, m) = (3, 2, 2, 3)
        let k = ramp(kh * kw * cin * m)
        let t = TinyKeras(config: chain([6, 6, cin], [("DepthwiseConv2D", "dw", #""kernel_size": [3, 2], "depth_multiplier": 3, "use_bias": false, "strides": 2"#)]),
                          weights: ["dw": [("depthwise_kernel", [kh, kw, cin, m], k)]])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "dw")
        guard case let .conv2d(a) = n.op else { return XCTFail("\(n.op)") }
        XCTAssertEqual(a.groups, cin); XCTAssertEqual(a.outputChannels, cin * m); XCTAssertEqual(a.strides, [2, 2])
        let f = try XCTUnwrap(n.weights["weight"]).floats()
        XCTAssertEqual(n.weights["weight"]?.shape, [cin * m, 1, kh, kw])
        XCTAssertNil(n.weights["bias"])
        for c in 0..<cin { for j in 0..<m { for h in 0..<kh { for x in 0..<kw {
            XCTAssertEqual(f[((c * m + j) * kh + h) * kw + x], k[((h * kw + x) * cin + c) * m + j])
        } } } }
    }

    /// Conv2DTranspose kernel (kH, kW, Cout, Cin) → deconv weight [Cin, Cout, kH, kW].
    func testConv2DTransposeKernelLayoutAndPadding() throws {
        let (kh, kw, cout, cin) = (3, 3, 2, 3)
        let k = ramp(kh * kw * cout * cin)
        let t = TinyKeras(config: chain([4, 5, cin], [("Conv2DTranspose", "up", #""filters": 2, "kernel_size": 3, "strides": 2, "padding": "same", "use_bias": false"#)]),
                          weights: ["up": [("kernel", [kh, kw, cout, cin], k)]])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "up")
        let f = try XCTUnwrap(n.weights["weight"]).floats()
        XCTAssertEqual(n.weights["weight"]?.shape, [cin, cout, kh, kw])
        for i in 0..<cin { for o in 0..<cout { for h in 0..<kh { for x in 0..<kw {
            XCTAssertEqual(f[((i * cout + o) * kh + h) * kw + x], k[((h * kw + x) * cout + o) * cin + i])
        } } } }
        XCTAssertEqual(g.tensorTypes["up"]?.shape, [1, 8, 10, 2])
        // Keras' deconv_output_length, placed as TensorFlow does.
        let (p1, q1) = Conv2DTransposeConverter.irPadding(input: [5, 5], kernel: [3, 3], strides: [2, 2], dilations: [1, 1], same: true, outputPadding: [1, 1])
        XCTAssertEqual(p1, .explicit(top: 0, bottom: 1, left: 0, right: 1)); XCTAssertEqual(q1, [0, 0])  // out 10 = 11 − 1
        let (p2, q2) = Conv2DTransposeConverter.irPadding(input: [5, 5], kernel: [2, 2], strides: [3, 3], dilations: [1, 1], same: false, outputPadding: nil)
        XCTAssertEqual(p2, .valid); XCTAssertEqual(q2, [1, 1])  // out 15 = 5·3 + max(2 − 3, 0)
    }

    func testDenseKernelTransposedAndSoftmaxSplit() throws {
        let k = ramp(6)  // (Cin 3, Cout 2)
        let t = TinyKeras(config: chain([3], [("Dense", "d", #""units": 2, "activation": "softmax""#)]),
                          weights: ["d": [("kernel", [3, 2], k), ("bias", [2], [0.5, -0.5])]])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "d")
        XCTAssertEqual(n.weights["weight"]?.shape, [2, 3])
        XCTAssertEqual(n.weights["weight"]?.floats(), [0, 2, 4, 1, 3, 5])
        XCTAssertEqual(n.outputs, ["d__preactivation__"])
        let s = try node(g, "d__activation__")
        XCTAssertEqual(s.op, .softmax(axis: 1))
        XCTAssertEqual(g.outputs, ["d"])
    }

    func testBatchNormWithoutScaleAndNegativeAxis() throws {
        let t = TinyKeras(config: chain([4, 3], [("BatchNormalization", "bn", #""axis": -2, "scale": false, "epsilon": 0.01"#)]),
                          weights: ["bn": [("beta", [4], [1, 2, 3, 4]), ("moving_mean", [4], [0, 0, 0, 0]), ("moving_variance", [4], [1, 1, 1, 1])]])
        let g = try KerasConverter().convert(file: t.file)
        let n = try node(g, "bn")
        XCTAssertEqual(n.op, .batchNorm(BatchNormAttributes(axis: 1, epsilon: 0.01)))
        XCTAssertNil(n.weights["gamma"])
        XCTAssertEqual(n.weights["beta"]?.floats(), [1, 2, 3, 4])
    }

    func testSeparableConvBecomesDepthwiseThenPointwise() throws {
        let t = TinyKeras(config: chain([5, 5, 2], [("SeparableConv2D", "sep", #""filters": 3, "kernel_size": 3, "depth_multiplier": 2, "padding": "same", "activation": "relu""#)]),
                          weights: ["sep": [("depthwise_kernel", [3, 3, 2, 2], ramp(36)), ("pointwise_kernel", [1, 1, 4, 3], ramp(12)), ("bias", [3], [0, 0, 0])]])
        let g = try KerasConverter().convert(file: t.file)
        let dw = try node(g, "sep__depthwise"), pw = try node(g, "sep")
        guard case let .conv2d(a) = dw.op, case let .conv2d(b) = pw.op else { return XCTFail() }
        XCTAssertEqual(a.groups, 2); XCTAssertEqual(a.outputChannels, 4); XCTAssertNil(dw.weights["bias"]); XCTAssertNil(a.activation)
        XCTAssertEqual(b.kernel, [1, 1]); XCTAssertEqual(b.activation, .relu); XCTAssertNotNil(pw.weights["bias"])
        XCTAssertEqual(pw.weights["weight"]?.shape, [3, 4, 1, 1])
        XCTAssertEqual(pw.inputs, ["sep__depthwise"])
    }

    func testSharedLayerCallsShareConstants() throws {
        let config = #"""
            {"class_name": "Functional", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 3]}, "inbound_nodes": []},
              {"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 3]}, "inbound_nodes": []},
              {"class_name": "Dense", "name": "dense", "config": {"name": "dense", "units": 2}, "inbound_nodes": [[["a", 0, 0, {}]], [["b", 0, 0, {}]]]},
              {"class_name": "Dense", "name": "dense_1", "config": {"name": "dense_1", "units": 2}, "inbound_nodes": [[["dense", 1, 0, {}]]]},
              {"class_name": "Concatenate", "name": "cat", "config": {"name": "cat", "axis": -1}, "inbound_nodes": [[["dense", 0, 0, {}], ["dense_1", 0, 0, {}]]]}],
             "input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["cat", 0, 0], ["dense", 1, 0]]}}
            """#
        let t = TinyKeras(config: config, weights: ["dense": [("kernel", [3, 2], ramp(6)), ("bias", [2], [0, 1])],
                                                    "dense_1": [("kernel", [2, 2], ramp(4)), ("bias", [2], [0, 1])]])
        let g = try KerasConverter().convert(file: t.file)
        let first = try node(g, "dense")
        // "dense_1" is a real layer name, so the second call of `dense` is named dense_2.
        let second = try node(g, "dense_2")
        XCTAssertTrue(first.weights["weight"] === second.weights["weight"], "shared layer calls must share ConstantTensors")
        XCTAssertEqual(second.inputs, ["b"])
        XCTAssertEqual(try node(g, "dense_1").inputs, ["dense_2"])
        XCTAssertEqual(g.outputs, ["cat", "dense_2"])
        XCTAssertEqual(g.tensorTypes["cat"]?.shape, [1, 4])
    }

    /// Keras matches weights-only files to the layers with weights by order, not by name.
    func testWeightsOnlyFileIsMatchedByOrder() throws {
        let f = InMemoryKerasFile(path: "w.h5")
        f.setAttribute("keras_version", of: "/", "2.0.6")
        f.setAttribute("layer_names", of: "/", ["input_1", "dense_7", "dropout_3", "dense_8"])
        for (g, ws) in [("input_1", [(String, [Int], [Float])]()), ("dropout_3", []),
                        ("dense_7", [("kernel", [2, 3], ramp(6)), ("bias", [3], [1, 1, 1])]),
                        ("dense_8", [("kernel", [3, 1], [1, 2, 3]), ("bias", [1], [7])])] {
            f.addGroup("/\(g)")
            f.setAttribute("weight_names", of: "/\(g)", ws.map { "\(g)/\($0.0):0" })
            for w in ws { f.addDataset("/\(g)/\(g)/\(w.0):0", shape: w.1, values: w.2) }
        }
        let arch = chain([2], [("Dense", "hidden", #""units": 3"#), ("Dropout", "drop", #""rate": 0.5"#), ("Dense", "out", #""units": 1"#)])
        let g = try KerasConverter().convert(file: f, architectureJSON: arch)
        XCTAssertEqual(try node(g, "out").weights["bias"]?.floats(), [7])
        XCTAssertEqual(try node(g, "hidden").weights["weight"]?.shape, [3, 2])
        XCTAssertEqual(try node(g, "out").inputs, ["hidden"], "Dropout is skipped")
        XCTAssertEqual(g.outputs, ["out"])

        // Wrong architecture: shapes disagree → the error names the layer, expected and found shapes.
        let wrong = chain([2], [("Dense", "hidden", #""units": 4"#), ("Dense", "out", #""units": 1"#)])
        XCTAssertThrowsError(try KerasConverter().convert(file: f, architectureJSON: wrong)) { e in
            let s = "\(e)"
            XCTAssertTrue(s.contains("'hidden' (Dense)") && s.contains("(2, 4)") && s.contains("(2, 3)") && s.contains("What to do"), s)
        }
        // Wrong count of layers with weights.
        let fewer = chain([2], [("Dense", "only", #""units": 1"#)])
        XCTAssertThrowsError(try KerasConverter().convert(file: f, architectureJSON: fewer)) { e in
            guard case let KerasConversionError.weightLayerCountMismatch(_, arch, file) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(arch, ["only (Dense)"]); XCTAssertEqual(file, ["dense_7", "dense_8"])
        }
        // Without the architecture.
        XCTAssertThrowsError(try KerasConverter().convert(file: f)) { e in
            guard case KerasConversionError.weightsOnlyWithoutArchitecture = e else { return XCTFail("\(e)") }
            XCTAssertTrue("\(e)".contains("--config"), "\(e)")
        }
    }

    /// channels_first layers keep Keras' [N, C, H, W] tensors: the convolution runs between two
    /// transposes; a 1×1 convolution is y[o, h, w] = Σc x[c, h, w]·k[0, 0, c, o] + b[o].
    func testChannelsFirstConvolutionKeepsTheChannelsFirstLayout() throws {
        let t = TinyKeras(config: chain([3, 2, 2], [("Conv2D", "c", #""filters": 2, "kernel_size": 1, "data_format": "channels_first""#)]),
                          weights: ["c": [("kernel", [1, 1, 3, 2], [1, 2, 3, 4, 5, 6]), ("bias", [2], [0.5, -1])]])
        let g = try KerasConverter().convert(file: t.file)
        XCTAssertEqual(g.nodes.map(\.name), ["c__to_channels_last", "c", "c__to_channels_first"])
        let x: [Float] = (0..<12).map { Float($0) }  // [1, 3, 2, 2]
        let out = try Model(graph: g).prediction(from: [g.inputs[0].name: try NDArray(shape: [1, 3, 2, 2], scalars: x)])
        let y = try XCTUnwrap(out[g.outputs[0]])
        XCTAssertEqual(y.shape, [1, 2, 2, 2])
        let k: [[Float]] = [[1, 2], [3, 4], [5, 6]], b: [Float] = [0.5, -1]
        var expected: [Float] = []
        for o in 0..<2 { for p in 0..<4 { expected.append((0..<3).reduce(b[o]) { $0 + x[$1 * 4 + p] * k[$1][o] }) } }
        XCTAssertEqual(y.scalars, expected)
    }

    func testUnknownInputDimensionNeedsAShape() throws {
        let config = chain([1], [("Dense", "d", #""units": 2"#)]).replacingOccurrences(of: "[null, 1]", with: "[null, null, 3]")
        let t = TinyKeras(config: config, weights: ["d": [("kernel", [3, 2], ramp(6)), ("bias", [2], [0, 0])]])
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { e in
            guard case let KerasConversionError.unknownInputShape(_, input, shape) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(input, "x"); XCTAssertEqual(shape, [nil, nil, 3])
        }
        let g = try KerasConverter(options: .init(inputShapes: ["x": [5, 3]])).convert(file: t.file)
        XCTAssertEqual(g.inputs.first?.type.shape, [1, 5, 3])
        XCTAssertEqual(g.tensorTypes["d"]?.shape, [1, 5, 2])
    }

    func testHardSigmoidDependsOnKerasVersion() throws {
        for (version, alpha) in [("2.15.0", Float(0.2)), ("3.3.3", Float(1.0 / 6.0))] {
            let t = TinyKeras(config: chain([4], [("Activation", "a", #""activation": "hard_sigmoid""#)]), version: version)
            let g = try KerasConverter().convert(file: t.file)
            XCTAssertEqual(try node(g, "a").op, .activation(.hardSigmoid(alpha: alpha, beta: 0.5)), version)
        }
    }

    func testMissingWeightNamesTheLayer() {
        let t = TinyKeras(config: chain([3], [("Dense", "d", #""units": 2"#)]), weights: ["d": [("kernel", [3, 2], ramp(6))]])
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { e in
            let s = "\(e)"
            XCTAssertTrue(s.contains("'d' (Dense)") && s.contains("bias") && s.contains("tiny.h5"), s)
        }
    }

    func testUnsupportedLayersAreAllListedAndHooksOverride() throws {
        let config = #"""
            {"class_name": "Functional", "config": {"name": "m", "layers": [
              {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 4, 4, 2]}, "inbound_nodes": []},
              {"class_name": "Lambda", "name": "double", "config": {"name": "double", "function": {"module": "builtins", "class_name": "function", "config": "times_two", "registered_name": "function"}}, "inbound_nodes": [[["x", 0, 0, {}]]]},
              {"class_name": "MyPad", "name": "pad", "module": "my_layers", "registered_name": "Custom>MyPad", "config": {"name": "pad", "padding": 1}, "inbound_nodes": [[["double", 0, 0, {}]]]},
              {"class_name": "Flatten", "name": "flat", "config": {"name": "flat"}, "inbound_nodes": [[["pad", 0, 0, {}]]]}],
             "input_layers": [["x", 0, 0]], "output_layers": [["flat", 0, 0]]}}
            """#
        let t = TinyKeras(config: config)
        XCTAssertThrowsError(try KerasConverter().convert(file: t.file)) { e in
            guard case let KerasConversionError.unsupportedLayers(_, layers) = e else { return XCTFail("\(e)") }
            XCTAssertEqual(layers.map(\.name), ["double", "pad"])
            XCTAssertEqual(layers.map(\.className), ["Lambda", "MyPad"])
            XCTAssertEqual(layers[0].inputShapes, [[1, 4, 4, 2]])
            let s = "\(e)"
            XCTAssertTrue(s.contains("times_two") && s.contains("Custom>MyPad") && s.contains("--custom-layer") && s.contains("(1, 4, 4, 2)"), s)
        }
        let hooks = [
            LayerHook(.lambdaFunction("times_two")) { ctx in
                [Node(name: ctx.nodeName, op: .activation(.linear(alpha: 2, beta: 0)), inputs: ctx.inputs, outputs: ctx.outputNames)]
            },
            LayerHook(.className("MyPad")) { ctx in
                let p = try ctx.int("padding")
                return [Node(name: ctx.nodeName, op: .pad(PadAttributes(mode: .reflect, pads: [[0, 0], [p, p], [p, p], [0, 0]])),
                             inputs: ctx.inputs, outputs: ctx.outputNames)]
            },
            // Overrides a built-in converter by exact name.
            LayerHook(.name("flat")) { ctx in
                [Node(name: ctx.nodeName, op: .reshape(targetShape: [6, 12]), inputs: ctx.inputs, outputs: ctx.outputNames)]
            },
        ]
        let g = try KerasConverter(options: .init(hooks: hooks)).convert(file: t.file)
        XCTAssertEqual(g.tensorTypes["flat"]?.shape, [1, 6, 12])
        XCTAssertEqual(g.nodes.map(\.op.name), ["activation", "pad", "reshape"])
        // A hook that forgets the layer's output is reported against the layer.
        let bad = LayerHook(.glob("dou*")) { ctx in [Node(name: ctx.nodeName, op: .identity, inputs: ctx.inputs, outputs: ["elsewhere"])] }
        XCTAssertThrowsError(try KerasConverter(options: .init(hooks: [bad] + hooks)).convert(file: t.file)) { e in
            guard case KerasConversionError.invalidHookResult = e else { return XCTFail("\(e)") }
            XCTAssertTrue("\(e)".contains("'double' (Lambda)"), "\(e)")
        }
    }

    /// Nested models are inlined (weights from the nested model's group, split by layer name),
    /// unless a hook replaces the whole sub-model.
    func testNestedModelInlinedOrReplacedByHook() throws {
        let config = #"""
            {"class_name": "Functional", "config": {"name": "outer", "layers": [
              {"class_name": "InputLayer", "name": "x", "config": {"name": "x", "batch_input_shape": [null, 3]}, "inbound_nodes": []},
              {"class_name": "Sequential", "name": "block", "config": {"name": "block", "layers": [
                 {"class_name": "InputLayer", "config": {"name": "block_in", "batch_input_shape": [null, 3]}},
                 {"class_name": "Dense", "config": {"name": "inner_a", "units": 2}},
                 {"class_name": "Dense", "config": {"name": "inner_b", "units": 3, "activation": "tanh"}}]},
               "inbound_nodes": [[["x", 0, 0, {}]]]},
              {"class_name": "Add", "name": "res", "config": {"name": "res"}, "inbound_nodes": [[["x", 0, 0, {}], ["block", 1, 0, {}]]]}],
             "input_layers": [["x", 0, 0]], "output_layers": [["res", 0, 0]]}}
            """#
        let t = TinyKeras(config: config, weights: ["block": [("kernel", [3, 2], ramp(6)), ("bias", [2], [0, 0]),
                                                              ("kernel", [2, 3], ramp(6)), ("bias", [3], [5, 6, 7])]])
        // TinyKeras names the datasets block/<var>:0; rename them as Keras does (inner layer names).
        t.file.setAttribute("weight_names", of: "/model_weights/block",
                            ["inner_a/kernel:0", "inner_a/bias:0", "inner_b/kernel:0", "inner_b/bias:0"])
        t.file.addDataset("/model_weights/block/inner_a/kernel:0", shape: [3, 2], values: ramp(6))
        t.file.addDataset("/model_weights/block/inner_a/bias:0", shape: [2], values: [0, 0])
        t.file.addDataset("/model_weights/block/inner_b/kernel:0", shape: [2, 3], values: ramp(6))
        t.file.addDataset("/model_weights/block/inner_b/bias:0", shape: [3], values: [5, 6, 7])
        let g = try KerasConverter().convert(file: t.file)
        XCTAssertEqual(g.nodes.map(\.name), ["inner_a", "inner_b", "res"])
        XCTAssertEqual(try node(g, "inner_b").weights["bias"]?.floats(), [5, 6, 7])
        XCTAssertEqual(try node(g, "res").inputs, ["x", "inner_b"])

        let hook = LayerHook(.name("block")) { ctx in
            XCTAssertEqual(ctx.storedWeights.count, 4)
            return [Node(name: ctx.nodeName, op: .activation(.tanh), inputs: ctx.inputs, outputs: ctx.outputNames)]
        }
        let h = try KerasConverter(options: .init(hooks: [hook])).convert(file: t.file)
        XCTAssertEqual(h.nodes.map(\.name), ["block", "res"])
    }

    func testNotAKerasFile() {
        let f = InMemoryKerasFile(path: "caffe.h5")
        f.addDataset("/data/conv1/0", shape: [2], values: [1, 2])
        XCTAssertThrowsError(try KerasConverter().convert(file: f)) { e in
            guard case KerasConversionError.notKerasFile = e else { return XCTFail("\(e)") }
            XCTAssertTrue("\(e)".contains("caffe.h5") && "\(e)".contains("data"), "\(e)")
        }
    }
}
