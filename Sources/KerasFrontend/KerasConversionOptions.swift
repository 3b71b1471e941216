import MLGraph

/// Overrides the conversion of some layers: a pattern selecting layers and a closure producing
/// their IR nodes.
///
/// Hooks are tried **before** the built-in converters (and before inlining a nested model, so
/// a hook can replace a whole Sequential/Functional sub-model, and a `.className` hook overrides
/// a built-in class). The hooks whose pattern matches a layer are tried most specific first —
/// exact `.name`, then `.glob`, `.lambdaFunction`, `.className`, `.any` (see
/// `Pattern.precedence`) — and in the order of `KerasConversionOptions.hooks` among equals; the
/// first whose closure returns non-nil wins. A closure returns
/// - `nil` to decline (the next hook, then the built-in table, is tried);
/// - `[]` to make the layer an identity (its output is its first input);
/// - nodes that read `context.inputs` and produce every name of `context.outputNames`
///   (typically one node named `context.nodeName` writing `context.outputNames[0]`; extra
///   nodes should be named `context.nodeName + "__…"`). The converter checks this, infers the
///   nodes' shapes, checks them against the output shapes Keras recorded for the layer
///   (`context.recordedOutputShapes`) and reports problems against the layer.
///
/// The declarative hooks of `mlconv keras --lower / --custom-layer / --hooks` are `KerasHookSpec`
/// values turned into `LayerHook`s with `layerHooks(runtimeShapes:)`; see docs/HOOKS.md.
///
/// ```swift
/// // Lower the style-transfer Lambda `res_crop` (x[:, 2:-2, 2:-2]) to a crop node.
/// let crop = LayerHook(.lambdaFunction("res_crop")) { ctx in
///     [Node(name: ctx.nodeName, op: .crop(crops: [[0, 0], [2, 2], [2, 2], [0, 0]]),
///           inputs: ctx.inputs, outputs: ctx.outputNames)]
/// }
/// let graph = try KerasConverter(options: .init(hooks: [crop])).convert(modelAt: url)
/// ```
public struct LayerHook {
    /// Which layers a hook applies to.
    public enum Pattern: Hashable, Sendable, CustomStringConvertible {
        /// The layer's exact name (for a layer inside a nested model, either its own name or
        /// "outer/inner").
        case name(String)
        /// A shell-style glob on the layer name (`*` any run, `?` one character, `[abc]` a set),
        /// e.g. "res_crop_*".
        case glob(String)
        /// Lambda layers whose Python function has this name (`res_crop`; `<lambda>` for
        /// anonymous lambdas), as `LambdaFunctionDecoder` recovers it from the config (Keras 2
        /// marshalled bytecode, functions saved by name, Keras 3 references) without running Python.
        case lambdaFunction(String)
        /// Every layer of this Keras class ("Lambda", "ReflectionPadding2D", "TensorFlowOpLayer",
        /// or a built-in such as "Conv2D" to override its converter); a Keras 3 registered class
        /// "package>Class" also matches its bare class name.
        case className(String)
        /// Every layer (the closure decides by returning nil or not).
        case any

        /// "name x", "glob res_*", "Lambda function f", "class C" or "any layer".
        public var description: String {
            switch self {
            case let .name(n): return "name \(n)"
            case let .glob(g): return "glob \(g)"
            case let .lambdaFunction(f): return "Lambda function \(f)"
            case let .className(c): return "class \(c)"
            case .any: return "any layer"
            }
        }
    }

    /// The layers the hook applies to.
    public var pattern: Pattern
    /// Produces the layer's nodes, or nil to decline (see the type's documentation).
    public var convert: (KerasLayerContext) throws -> [Node]?
    /// What the user wrote to select layers (the MATCH of `--lower MATCH=…`). When set, the
    /// converter throws `KerasConversionError.unmatchedHooks` if no hook with this label selects
    /// any layer of the model — a misspelt MATCH is an error, not silently ignored.
    public var label: String?

    /// Makes a hook for the layers matching `pattern`.
    public init(_ pattern: Pattern, label: String? = nil, convert: @escaping (KerasLayerContext) throws -> [Node]?) {
        self.pattern = pattern; self.label = label; self.convert = convert
    }

    /// Whether `pattern` selects the layer (before the closure is asked).
    public func matches(layer: KerasLayerConfig, scope: [String]) -> Bool {
        switch pattern {
        case let .name(n): return n == layer.name || n == (scope + [layer.name]).joined(separator: "/")
        case let .glob(g): return globMatch(g, layer.name) || globMatch(g, (scope + [layer.name]).joined(separator: "/"))
        case let .lambdaFunction(f): return KerasLambdaFunction(layer: layer)?.name == f
        case let .className(c):
            // Keras 3 writes registered custom classes as "package>Class".
            return layer.className == c || layer.registeredName == c || bareKerasClassName(layer.className) == c
                || layer.registeredName.map(bareKerasClassName) == c
        case .any: return true
        }
    }
}

/// Shell-style glob: `*`, `?`, `[set]` / `[!set]` (ranges `a-z` allowed).
func globMatch(_ pattern: String, _ text: String) -> Bool {
    let p = Array(pattern), t = Array(text)
    func match(_ i: Int, _ j: Int) -> Bool {
        if i == p.count { return j == t.count }
        switch p[i] {
        case "*":
            var k = j
            while true {
                if match(i + 1, k) { return true }
                if k == t.count { return false }
                k += 1
            }
        case "?":
            return j < t.count && match(i + 1, j + 1)
        case "[":
            guard j < t.count, let close = p[(i + 1)...].firstIndex(of: "]") else {
                return j < t.count && t[j] == "[" && match(i + 1, j + 1)
            }
            var set = Array(p[(i + 1)..<close])
            let negate = set.first == "!" || set.first == "^"
            if negate { set.removeFirst() }
            var found = false
            var k = 0
            while k < set.count {
                if k + 2 < set.count, set[k + 1] == "-" {
                    if set[k] <= t[j] && t[j] <= set[k + 2] { found = true }
                    k += 3
                } else {
                    if set[k] == t[j] { found = true }
                    k += 1
                }
            }
            return found != negate && match(close + 1, j + 1)
        default:
            return j < t.count && p[i] == t[j] && match(i + 1, j + 1)
        }
    }
    return match(0, 0)
}

/// Options of `KerasConverter`.
public struct KerasConversionOptions {
    /// Layer conversion overrides, tried in order before the built-in converters (see `LayerHook`).
    public var hooks: [LayerHook]
    /// Fixed shapes for model inputs whose Keras shape has unknown (None) dimensions, by input
    /// name: the shape **without** the batch dimension (a leading batch of 1 may be included).
    public var inputShapes: [String: [Int]]
    /// Lower `Lambda` layers whose stored bytecode is a pure expression of their inputs to IR
    /// automatically (`KerasLambdaExpression`; after the hooks, which win). `mlconv
    /// --no-auto-lambda` turns it off.
    public var autoLowerLambdas: Bool

    /// Makes options; the defaults convert with the built-in converters and lower pure-expression
    /// Lambdas automatically.
    public init(hooks: [LayerHook] = [], inputShapes: [String: [Int]] = [:], autoLowerLambdas: Bool = true) {
        self.hooks = hooks; self.inputShapes = inputShapes; self.autoLowerLambdas = autoLowerLambdas
    }
}
