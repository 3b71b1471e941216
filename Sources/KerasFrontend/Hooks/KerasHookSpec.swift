import Diagnostics
import MLGraph

// Declarative hooks: what the `--custom-layer` / `--lower` flags and `--hooks` files say, as
// values that turn into `LayerHook`s. See docs/HOOKS.md.

/// An error in a hook description (a `--custom-layer` / `--lower` value or a hooks file entry):
/// what was given, what is wrong, and the accepted forms.
public struct KerasHookSpecError: Error, CustomStringConvertible, Sendable {
    /// The full message, followed by the underlying error's text when there is one.
    public var message: String { ownMessage + cause.suffix }
    /// `message` without the underlying error's text.
    public let ownMessage: String
    /// The underlying error (the Foundation error of an unreadable hooks file), kept as a value
    /// (issue 13).
    public let cause: DiagnosticCause?
    /// An error with `message`, caused by `cause`.
    public init(_ message: String, cause: (any Error)? = nil) { ownMessage = message; self.cause = cause.map(DiagnosticCause.init) }
    /// The message.
    public var description: String { message }
}

/// Pixels taken off (crop) or added to (pad) each spatial border of an NHWC tensor.
public struct KerasBorders: Hashable, Sendable, CustomStringConvertible {
    /// Rows at the top (start of axis 1).
    public var top: Int
    /// Rows at the bottom (end of axis 1).
    public var bottom: Int
    /// Columns at the left (start of axis 2).
    public var left: Int
    /// Columns at the right (end of axis 2).
    public var right: Int

    /// Borders given one by one.
    public init(top: Int, bottom: Int, left: Int, right: Int) {
        self.top = top; self.bottom = bottom; self.left = left; self.right = right
    }

    /// The same number on every border.
    public init(all n: Int) { self.init(top: n, bottom: n, left: n, right: n) }

    /// Parses "N" (every border), "V,H" (top and bottom V, left and right H) or "T,B,L,R";
    /// numbers are non-negative integers.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let n = parts.map { Int($0) }
        guard [1, 2, 4].contains(parts.count), n.allSatisfy({ ($0 ?? -1) >= 0 }) else {
            throw KerasHookSpecError("'\(text)' is not a list of borders: give N, V,H or TOP,BOTTOM,LEFT,RIGHT as non-negative whole numbers")
        }
        let v = n.map { $0! }
        switch v.count {
        case 1: self.init(all: v[0])
        case 2: self.init(top: v[0], bottom: v[0], left: v[1], right: v[1])
        default: self.init(top: v[0], bottom: v[1], left: v[2], right: v[3])
        }
    }

    /// "T,B,L,R".
    public var description: String { "\(top),\(bottom),\(left),\(right)" }

    /// The IR `[[before, after]]` list for a rank-4 NHWC tensor (batch and channels untouched).
    var nhwcPairs: [[Int]] { [[0, 0], [top, bottom], [left, right], [0, 0]] }
}

/// A lowering of a layer to built-in IR ops, so the model needs no custom code
/// (`--lower MATCH=OP[:ARGS]`).
public enum KerasLowering: Hashable, Sendable, CustomStringConvertible {
    /// `crop:T,B,L,R` (also `crop:N`, `crop:V,H`): removes pixels from each spatial border of an
    /// NHWC input (`Op.crop`). `crop` alone (nil) takes the borders from the output shape Keras
    /// recorded for the layer, split evenly (an odd difference is an error).
    case crop(KerasBorders?)
    /// `affine:SCALE,OFFSET`: y = SCALE·x + OFFSET elementwise (`Op.activation(.linear)`); the
    /// style-transfer `rescale_output`, (x + 1)·127.5, is `affine:127.5,127.5`.
    case affine(scale: Float, offset: Float)
    /// `pad:MODE:T,B,L,R` (also `:N`, `:V,H`) with MODE `reflect`, `edge` or `constant`
    /// (`constant=VALUE` fills with VALUE, default 0): pads each spatial border of an NHWC input
    /// (`Op.pad`). `pad:MODE` alone (nil borders) reads the layer's `padding` config (an integer,
    /// `[V, H]` or `[[T, B], [L, R]]`, as ZeroPadding2D and the usual `ReflectionPadding2D`
    /// classes store it), else the output shape Keras recorded for the layer.
    case pad(mode: PadMode, borders: KerasBorders?, value: Float)
    /// `identity`: the layer's output is its input (no node).
    case identity
    /// An activation without parameters by its Keras name (`swish`, `relu`, `sigmoid`, …; the
    /// keys of `activationNames`): that `Op.activation` elementwise, any shape.
    case activation(String)

    /// The activation names `--lower` takes, as Keras spells them, and the IR activation of each.
    public static let activationNames: [String: Activation] = [
        "relu": .relu, "relu6": .clippedReLU(maxValue: 6, negativeSlope: 0, threshold: 0), "sigmoid": .sigmoid,
        "tanh": .tanh, "softplus": .softplus, "softsign": .softsign, "selu": .selu, "swish": .swish, "silu": .swish,
        "gelu": .gelu(approximate: false), "exponential": .exponential, "mish": .mish, "hard_swish": .hardSwish,
        "log_sigmoid": .logSigmoid, "elu": .elu(alpha: 1),
    ]

    /// The accepted forms, for messages and help.
    public static let syntax = "crop:TOP,BOTTOM,LEFT,RIGHT, affine:SCALE,OFFSET, pad:reflect|edge|constant[=VALUE][:TOP,BOTTOM,LEFT,RIGHT], identity, or an activation (relu, relu6, sigmoid, tanh, swish, silu, gelu, elu, selu, softplus, softsign, exponential, mish, hard_swish, log_sigmoid)"

    /// Parses `OP[:ARGS]` as `--lower` takes it.
    /// - Throws: `KerasHookSpecError` naming the text and listing the accepted forms.
    public init(parsing text: String) throws {
        let t = text.trimmingCharacters(in: .whitespaces)
        let parts = t.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let op = parts[0].lowercased(), args = parts.count > 1 ? parts[1] : nil
        func bad(_ why: String) -> KerasHookSpecError {
            KerasHookSpecError("invalid lowering '\(text)': \(why) (forms: \(KerasLowering.syntax))")
        }
        do {
            switch op {
            case "identity":
                guard args == nil else { throw bad("identity takes no arguments") }
                self = .identity
            case "crop":
                self = .crop(try args.map(KerasBorders.init(parsing:)))
            case "affine":
                let v = (args ?? "").split(separator: ",", omittingEmptySubsequences: false)
                    .map { Float($0.trimmingCharacters(in: .whitespaces)) }
                guard v.count == 2, let s = v[0], let o = v[1], s.isFinite, o.isFinite else {
                    throw bad("affine takes two numbers, SCALE,OFFSET (y = SCALE·x + OFFSET)")
                }
                self = .affine(scale: s, offset: o)
            case "pad":
                guard let args, !args.isEmpty else { throw bad("pad needs a mode: pad:reflect, pad:edge or pad:constant[=VALUE]") }
                let p = args.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                let modeText = p[0].trimmingCharacters(in: .whitespaces)
                var value: Float = 0
                let mode: PadMode
                if modeText.lowercased().hasPrefix("constant=") {
                    guard let v = Float(modeText.dropFirst("constant=".count)), v.isFinite else {
                        throw bad("constant=VALUE needs a number, found '\(modeText)'")
                    }
                    mode = .constant; value = v
                } else {
                    guard let m = PadMode(rawValue: modeText.lowercased()) else {
                        throw bad("unknown padding mode '\(modeText)'; use reflect, edge or constant")
                    }
                    mode = m
                }
                self = .pad(mode: mode, borders: try p.count > 1 ? KerasBorders(parsing: p[1]) : nil, value: value)
            case _ where KerasLowering.activationNames[op] != nil:
                guard args == nil else { throw bad("the activation \(op) takes no arguments") }
                self = .activation(op)
            default:
                throw bad("unknown operation '\(parts[0])'")
            }
        } catch let e as KerasHookSpecError where !e.message.hasPrefix("invalid lowering") {
            throw bad(e.message)
        }
    }

    /// The `OP[:ARGS]` text, parseable by `init(parsing:)`.
    public var description: String {
        switch self {
        case let .crop(b): return "crop" + (b.map { ":\($0)" } ?? "")
        case let .affine(s, o): return "affine:\(formatHookNumber(s)),\(formatHookNumber(o))"
        case let .pad(mode, b, value):
            let m = mode == .constant && value != 0 ? "constant=\(formatHookNumber(value))" : mode.rawValue
            return "pad:\(m)" + (b.map { ":\($0)" } ?? "")
        case .identity: return "identity"
        case let .activation(n): return n
        }
    }

    /// The nodes for one call of a layer.
    /// - Throws: `KerasConversionError.invalidHookResult` when the lowering does not fit the layer
    ///   (rank, number of inputs, borders it cannot determine).
    func nodes(_ ctx: KerasLayerContext) throws -> [Node] {
        func fail(_ message: String) -> KerasConversionError {
            .invalidHookResult(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                               message: "lowering '\(self)': \(message)")
        }
        guard ctx.inputs.count == 1, ctx.outputNames.count == 1 else {
            throw fail("it takes one input and gives one output; this call has \(ctx.inputs.count) inputs and \(ctx.outputNames.count) outputs")
        }
        func requireNHWC() throws {
            guard ctx.inputShape.count == 4 else {
                throw fail("it works on the spatial axes of an NHWC tensor; the input has shape \(formatShape(ctx.inputShape))")
            }
        }
        func one(_ op: Op) -> [Node] { [Node(name: ctx.nodeName, op: op, inputs: ctx.inputs, outputs: ctx.outputNames)] }
        switch self {
        case .identity:
            return []
        case let .affine(s, o):
            return one(.activation(.linear(alpha: s, beta: o)))
        case let .activation(n):
            guard let a = KerasLowering.activationNames[n] else { throw fail("unknown activation '\(n)'") }
            return one(.activation(a))
        case let .crop(given):
            try requireNHWC()
            guard let b = try given ?? ctx.recordedSpatialChange(shrinking: true) else {
                throw fail("no borders given and Keras recorded no output shape for this layer; write crop:TOP,BOTTOM,LEFT,RIGHT")
            }
            return one(.crop(crops: b.nhwcPairs))
        case let .pad(mode, given, value):
            try requireNHWC()
            var b = given
            if b == nil, let p = ctx.value("padding") {
                guard let fromConfig = KerasBorders(kerasPadding: p) else {
                    throw fail("the layer's 'padding' config \(p) is not an integer, [V, H] or [[T, B], [L, R]]; write pad:\(mode.rawValue):TOP,BOTTOM,LEFT,RIGHT")
                }
                b = fromConfig
            }
            if b == nil { b = try ctx.recordedSpatialChange(shrinking: false) }
            guard let b else {
                throw fail("no borders given, the layer has no 'padding' config and Keras recorded no output shape for it; write pad:\(mode.rawValue):TOP,BOTTOM,LEFT,RIGHT")
            }
            return one(.pad(PadAttributes(mode: mode, pads: b.nhwcPairs, value: value)))
        }
    }
}

extension KerasBorders {
    /// Reads a Keras `padding` / `cropping` config value: n, [V, H] or [[T, B], [L, R]].
    init?(kerasPadding v: KerasJSON) {
        if let n = v.int, n >= 0 { self.init(all: n); return }
        guard let a = v.array, a.count == 2 else { return nil }
        if let h = a[0].int, let w = a[1].int, h >= 0, w >= 0 { self.init(top: h, bottom: h, left: w, right: w); return }
        guard let hs = a[0].array, let ws = a[1].array, hs.count == 2, ws.count == 2,
              let t = hs[0].int, let b = hs[1].int, let l = ws[0].int, let r = ws[1].int,
              min(t, b, l, r) >= 0 else { return nil }
        self.init(top: t, bottom: b, left: l, right: r)
    }
}

extension KerasLayerContext {
    /// The borders an NHWC layer removes (`shrinking`) or adds, from the input shape and the output
    /// shape Keras recorded, split evenly between the two sides of each axis; nil when no output
    /// shape is recorded or the channels change.
    /// - Throws: `invalidHookResult` when the change is odd on an axis or goes the other way.
    func recordedSpatialChange(shrinking: Bool) throws -> KerasBorders? {
        guard inputShape.count == 4, let out = recordedOutputShapes.first, out.count == 4,
              let oh = out[1], let ow = out[2] else { return nil }
        let dh = shrinking ? inputShape[1] - oh : oh - inputShape[1]
        let dw = shrinking ? inputShape[2] - ow : ow - inputShape[2]
        let what = shrinking ? "crop" : "pad"
        guard dh >= 0, dw >= 0, dh % 2 == 0, dw % 2 == 0 else {
            throw KerasConversionError.invalidHookResult(
                file: file, layer: qualifiedName, className: className,
                message: "cannot \(what) \(formatShape(inputShape)) evenly to the recorded output \(formatOptionalShape(out)); give the borders: \(what):TOP,BOTTOM,LEFT,RIGHT")
        }
        return KerasBorders(top: dh / 2, bottom: dh / 2, left: dw / 2, right: dw / 2)
    }
}

/// How a custom layer's output shapes are fixed at conversion time (they are stored in the
/// model, as Core ML stores them).
public enum KerasOutputShapeRule: Hashable, Sendable, CustomStringConvertible {
    /// `auto` (the default): the shapes the runtime implementation reports for the input shapes
    /// when the converter is given a way to ask it (`mlconv` asks `MLRuntime.CustomLayerRegistry`),
    /// else the output shape Keras recorded for the layer, else the input shapes.
    case automatic
    /// `same`: each output has the shape of input 0.
    case sameAsInput
    /// Explicit shapes **without** the batch dimension (Keras' convention), one per output:
    /// `[[96, 96, 64]]`.
    case explicit([[Int]])
    /// `crop:T,B,L,R`: input 0 minus these pixels on the spatial borders (NHWC).
    case crop(KerasBorders)
    /// `pad:T,B,L,R`: input 0 plus these pixels on the spatial borders (NHWC).
    case pad(KerasBorders)

    /// Parses `auto`, `same`, `crop:T,B,L,R` or `pad:T,B,L,R` (explicit shapes are JSON lists).
    public init(parsing text: String) throws {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t == "auto" { self = .automatic; return }
        if t == "same" { self = .sameAsInput; return }
        for (prefix, make) in [("crop:", KerasOutputShapeRule.crop), ("pad:", KerasOutputShapeRule.pad)] where t.hasPrefix(prefix) {
            self = make(try KerasBorders(parsing: String(t.dropFirst(prefix.count)))); return
        }
        throw KerasHookSpecError("invalid output shape '\(text)': use \"auto\", \"same\", \"crop:T,B,L,R\", \"pad:T,B,L,R\" or a list of dimensions without the batch, e.g. [96, 96, 64]")
    }

    /// `auto`, `same`, `crop:…`, `pad:…`, or the explicit shapes as JSON.
    public var description: String {
        switch self {
        case .automatic: return "auto"
        case .sameAsInput: return "same"
        case let .crop(b): return "crop:\(b)"
        case let .pad(b): return "pad:\(b)"
        case let .explicit(s): return s.count == 1 ? "\(s[0])" : "\(s)"
        }
    }
}

/// Asks a runtime for a custom layer implementation's output shapes (batch included):
/// nil when no implementation of `className` is known.
public typealias KerasCustomLayerShapeFunction =
    @Sendable (_ className: String, _ parameters: [String: CustomParameterValue], _ inputShapes: [[Int]]) throws -> [[Int]]?

/// A conversion to a custom layer (`Op.custom`, Core ML `CustomLayerParams`), implemented at run
/// time by the class registered under `className` (`MLRuntime.CustomLayerRegistry`, or an
/// `MLCustomLayer` in an app).
public struct KerasCustomLayerSpec: Hashable, Sendable {
    /// The implementation's class name, e.g. "ResCropBlockLambda".
    public var className: String
    /// Text stored with the layer; nil makes one from the Keras layer ("Keras Lambda 'res_crop_0':
    /// Python function res_crop(x) …").
    public var description: String?
    /// Parameters passed to the implementation's `init(parameters:)`.
    public var parameters: [String: CustomParameterValue]
    /// Whether the layer's weights stored in the Keras file are attached, in file order, as
    /// "w0", "w1", … (the implementation's `setWeightData`).
    public var includeWeights: Bool
    /// How the output shapes are fixed.
    public var outputShape: KerasOutputShapeRule

    /// Makes a spec; only the class name is required.
    public init(className: String, description: String? = nil, parameters: [String: CustomParameterValue] = [:],
                includeWeights: Bool = true, outputShape: KerasOutputShapeRule = .automatic) {
        self.className = className; self.description = description; self.parameters = parameters
        self.includeWeights = includeWeights; self.outputShape = outputShape
    }

    /// The custom node for one call.
    func nodes(_ ctx: KerasLayerContext, runtimeShapes: KerasCustomLayerShapeFunction?) throws -> [Node] {
        func fail(_ message: String, cause: (any Error)? = nil) -> KerasConversionError {
            .invalidHookResult(file: ctx.file, layer: ctx.qualifiedName, className: ctx.className,
                               message: "custom layer \(className): \(message)", cause: cause.map(DiagnosticCause.init))
        }
        let ins = ctx.inputTypes.map(\.shape)
        let count = ctx.outputNames.count
        var shapes: [[Int]]
        switch outputShape {
        case .sameAsInput:
            shapes = Array(repeating: ctx.inputShape, count: count)
        case let .explicit(s):
            shapes = s.map { [ctx.inputShape.first ?? 1] + $0 }
        case let .crop(b), let .pad(b):
            guard ctx.inputShape.count == 4 else {
                throw fail("output shape '\(outputShape)' needs an NHWC input; the input has shape \(formatShape(ctx.inputShape))")
            }
            let sign = { if case .crop = outputShape { return -1 } else { return 1 } }()
            let s = ctx.inputShape
            shapes = Array(repeating: [s[0], s[1] + sign * (b.top + b.bottom), s[2] + sign * (b.left + b.right), s[3]], count: count)
        case .automatic:
            let fromRuntime: [[Int]]?
            do { fromRuntime = try runtimeShapes?(className, parameters, ins) } catch {
                throw fail("the runtime implementation rejects input shapes \(ins.map(formatShape).joined(separator: ", "))", cause: error)
            }
            if let r = fromRuntime {
                shapes = r
            } else if ctx.recordedOutputShapes.count == count,
                      ctx.recordedOutputShapes.allSatisfy({ $0.count >= 1 && $0.dropFirst().allSatisfy { $0 != nil } }) {
                shapes = ctx.recordedOutputShapes.map { [ctx.inputShape.first ?? 1] + $0.dropFirst().map { $0! } }
            } else {
                shapes = Array(repeating: ctx.inputShape, count: count)
            }
        }
        guard shapes.count == count else {
            throw fail("\(shapes.count) output shapes for a call with \(count) outputs")
        }
        guard shapes.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 > 0 } }) else {
            throw fail("output shapes \(shapes.map(formatShape).joined(separator: ", ")) must have positive dimensions (input \(ins.map(formatShape).joined(separator: ", ")))")
        }
        var weights: [String: ConstantTensor] = [:]
        if includeWeights {
            for (i, w) in ctx.storedWeights.enumerated() {
                weights["w\(i)"] = try ctx.constant("custom.w\(i)", shape: w.shape) { try ctx.readWeight(w) }
            }
        }
        let text = description ?? ctx.defaultCustomLayerDescription
        let attrs = CustomLayerAttributes(className: className, description: text, parameters: parameters, outputShapes: shapes)
        return [Node(name: ctx.nodeName, op: .custom(attrs), inputs: ctx.inputs, outputs: ctx.outputNames, weights: weights)]
    }
}

extension KerasLayerContext {
    /// "Keras Lambda 'res_crop_0': Python function res_crop(x) from …" or "Keras ReflectionPadding2D
    /// 'reflection_padding2d_1'".
    var defaultCustomLayerDescription: String {
        var s = "Keras \(className) '\(qualifiedName)'"
        if let f = KerasLambdaFunction(layer: layer, kerasVersion: kerasVersion.string) { s += ": " + f.summary }
        return s
    }
}

/// Which layers a declarative hook selects.
public enum KerasHookMatch: Hashable, Sendable, CustomStringConvertible {
    /// The command-line form: a layer name, a glob on layer names, a Lambda function name or a
    /// Keras class name. Text with a glob character (`*`, `?`, `[`) is a glob only; other text
    /// matches a layer by its exact name, its Lambda function's name or its class name (the
    /// converter prefers the hooks matching by name, then glob, then function, then class).
    case any(String)
    /// Exactly this layer name (or "outer/inner" for a layer in a nested model).
    case name(String)
    /// A glob on layer names.
    case glob(String)
    /// Lambda layers whose Python function has this name.
    case function(String)
    /// Layers of this Keras class (a Keras 3 "package>Class" also matches "Class").
    case className(String)

    /// The text matched.
    public var text: String {
        switch self {
        case let .any(s), let .name(s), let .glob(s), let .function(s), let .className(s): return s
        }
    }

    /// The `LayerHook` patterns the match stands for.
    public var patterns: [LayerHook.Pattern] {
        switch self {
        case let .any(s):
            return s.contains(where: { "*?[".contains($0) }) ? [.glob(s)] : [.name(s), .lambdaFunction(s), .className(s)]
        case let .name(s): return [.name(s)]
        case let .glob(s): return [.glob(s)]
        case let .function(s): return [.lambdaFunction(s)]
        case let .className(s): return [.className(s)]
        }
    }

    /// The text for `.any`, else "name:TEXT", "glob:TEXT", "function:TEXT", "class:TEXT".
    public var description: String {
        switch self {
        case let .any(s): return s
        case let .name(s): return "name:\(s)"
        case let .glob(s): return "glob:\(s)"
        case let .function(s): return "function:\(s)"
        case let .className(s): return "class:\(s)"
        }
    }

    /// The hooks file key ("match", "name", "glob", "function" or "class").
    var jsonKey: String {
        switch self {
        case .any: return "match"
        case .name: return "name"
        case .glob: return "glob"
        case .function: return "function"
        case .className: return "class"
        }
    }
}

/// One declarative hook: which layers, and what to make of them. `--custom-layer`, `--lower` and
/// `--hooks` files parse into these; `layerHooks(runtimeShapes:)` turns them into `LayerHook`s.
///
/// ```swift
/// let specs = [try KerasHookSpec(lowerFlag: "res_crop=crop:2,2,2,2"),
///              try KerasHookSpec(customLayerFlag: "rescale_output=RescaleOutputLambda")]
/// let graph = try KerasConverter(options: .init(hooks: specs.layerHooks())).convert(modelAt: url)
/// ```
public struct KerasHookSpec: Hashable, Sendable, CustomStringConvertible {
    /// What the hook makes of a layer.
    public enum Action: Hashable, Sendable {
        /// A custom layer.
        case customLayer(KerasCustomLayerSpec)
        /// Built-in ops.
        case lower(KerasLowering)
    }

    /// The layers selected.
    public var match: KerasHookMatch
    /// What they become.
    public var action: Action

    /// Makes a spec.
    public init(match: KerasHookMatch, action: Action) { self.match = match; self.action = action }

    /// Parses a `--custom-layer` value, `MATCH=ClassName`.
    /// - Throws: `KerasHookSpecError` when the text is not of that form.
    public init(customLayerFlag text: String) throws {
        let (m, cls) = try Self.split(text, flag: "--custom-layer", value: "ClassName")
        guard cls.allSatisfy({ $0.isLetter || $0.isNumber || "_.$".contains($0) }), !cls.first!.isNumber else {
            throw KerasHookSpecError("--custom-layer \(text): '\(cls)' is not a class name (letters, digits, '_', '.')")
        }
        self.init(match: .any(m), action: .customLayer(KerasCustomLayerSpec(className: cls)))
    }

    /// Parses a `--lower` value, `MATCH=OP[:ARGS]`.
    /// - Throws: `KerasHookSpecError` when the text is not of that form or the lowering is invalid.
    public init(lowerFlag text: String) throws {
        let (m, op) = try Self.split(text, flag: "--lower", value: "OP[:ARGS]")
        do { self.init(match: .any(m), action: .lower(try KerasLowering(parsing: op))) } catch let e as KerasHookSpecError {
            throw KerasHookSpecError("--lower \(text): \(e.message)")
        }
    }

    private static func split(_ text: String, flag: String, value: String) throws -> (String, String) {
        guard let eq = text.firstIndex(of: "=") else {
            throw KerasHookSpecError("\(flag) takes MATCH=\(value) (MATCH: a layer name, a glob such as res_crop_*, a Lambda function name or a Keras class name), found '\(text)'")
        }
        let m = text[..<eq].trimmingCharacters(in: .whitespaces), v = text[text.index(after: eq)...].trimmingCharacters(in: .whitespaces)
        guard !m.isEmpty, !v.isEmpty else {
            throw KerasHookSpecError("\(flag) takes MATCH=\(value) with both sides non-empty, found '\(text)'")
        }
        return (m, v)
    }

    /// The equivalent command-line flag ("--lower res_crop=crop:2,2,2,2"), or nil when the spec
    /// needs a hooks file (a match other than `.any`, or custom-layer settings beyond the class).
    public var commandLineFlag: String? {
        guard case let .any(m) = match else { return nil }
        switch action {
        case let .lower(l): return "--lower \(m)=\(l)"
        case let .customLayer(c):
            guard c == KerasCustomLayerSpec(className: c.className) else { return nil }
            return "--custom-layer \(m)=\(c.className)"
        }
    }

    /// The hooks-file entry (one JSON object, keys as docs/HOOKS.md documents).
    public var jsonText: String {
        var parts = ["\(KerasJSON.quote(match.jsonKey)): \(KerasJSON.quote(match.text))"]
        switch action {
        case let .lower(l):
            parts.append("\"lower\": \(KerasJSON.quote(l.description))")
        case let .customLayer(c):
            var inner = ["\"className\": \(KerasJSON.quote(c.className))"]
            if let d = c.description { inner.append("\"description\": \(KerasJSON.quote(d))") }
            if !c.parameters.isEmpty {
                inner.append("\"parameters\": {" + c.parameters.keys.sorted().map { k in
                    KerasJSON.quote(k) + ": " + c.parameters[k]!.hookJSON
                }.joined(separator: ", ") + "}")
            }
            if !c.includeWeights { inner.append("\"weights\": false") }
            switch c.outputShape {
            case .automatic: break
            case let .explicit(s): inner.append("\"outputShape\": \(s.count == 1 ? "\(s[0])" : "\(s)")")
            default: inner.append("\"outputShape\": \(KerasJSON.quote(c.outputShape.description))")
            }
            parts.append("\"customLayer\": {" + inner.joined(separator: ", ") + "}")
        }
        return "{" + parts.joined(separator: ", ") + "}"
    }

    /// The flag when there is one, else the JSON entry.
    public var description: String { commandLineFlag ?? jsonText }

    /// The `LayerHook`s implementing the spec (one per pattern of `match`).
    /// - Parameter runtimeShapes: asked for a custom layer's output shapes under the `automatic`
    ///   rule (`mlconv` passes one that asks `MLRuntime.CustomLayerRegistry`).
    ///   - requireMatch: label the hooks with the MATCH text, so that converting a model where
    ///     it selects no layer throws `KerasConversionError.unmatchedHooks` (the CLI does this for
    ///     `--lower` / `--custom-layer` flags; a hooks file may serve several models and does not).
    public func layerHooks(runtimeShapes: KerasCustomLayerShapeFunction? = nil, requireMatch: Bool = false) -> [LayerHook] {
        let action = self.action
        return match.patterns.map { p in
            LayerHook(p, label: requireMatch ? match.text : nil) { ctx in
                switch action {
                case let .lower(l): return try l.nodes(ctx)
                case let .customLayer(c): return try c.nodes(ctx, runtimeShapes: runtimeShapes)
                }
            }
        }
    }
}

extension Array where Element == KerasHookSpec {
    /// The `LayerHook`s of every spec, in order (see `KerasHookSpec.layerHooks(runtimeShapes:)`).
    public func layerHooks(runtimeShapes: KerasCustomLayerShapeFunction? = nil, requireMatch: Bool = false) -> [LayerHook] {
        flatMap { $0.layerHooks(runtimeShapes: runtimeShapes, requireMatch: requireMatch) }
    }
}

extension CustomParameterValue {
    /// The hooks-file JSON of the value: numbers and strings plainly; a double with an integral
    /// value as {"double": N} so it reads back as a double.
    var hookJSON: String {
        switch self {
        case let .double(d): return d == d.rounded() && abs(d) < 1e15 ? "{\"double\": \(Int(d))}" : "\(d)"
        case let .string(s): return KerasJSON.quote(s)
        case let .int(i): return "\(i)"
        case let .long(l): return "{\"long\": \(l)}"
        case let .bool(b): return b ? "true" : "false"
        }
    }
}

/// A number as hooks texts write it: "2" for integral values, else Swift's shortest form ("127.5").
func formatHookNumber(_ x: Float) -> String {
    x == x.rounded() && abs(x) < 1e9 ? String(Int(x)) : "\(x)"
}

/// "(None, 96, 96, 64)".
func formatOptionalShape(_ s: [Int?]) -> String {
    "(" + s.map { $0.map(String.init) ?? "None" }.joined(separator: ", ") + ")"
}
