import MLGraph

// `--lower` / `--hooks` on graphs that already hold custom layers (`Op.custom`), as the Core ML
// importer makes them from `CustomLayerParams`: the same vocabulary as the Keras hooks
// (KerasLowering), applied to IR nodes instead of Keras layers. See docs/HOOKS.md.

/// A lowering of a custom layer in an imported graph that cannot be applied.
public enum CustomLayerLoweringError: Error, CustomStringConvertible, Sendable {
    /// The lowering does not fit the layer (number of inputs/outputs, rank, or the shape it makes
    /// differs from the output shape the model stores for the layer).
    case doesNotFit(file: String, layer: String, className: String, lowering: String, message: String)
    /// `--lower` / `--custom-layer` MATCHes that select no custom layer of the model.
    case unmatched(file: String, matches: [String], customLayers: [String])
    /// A hook the graph form cannot apply (a Lambda `function:` match).
    case unsupported(file: String, hook: String, message: String)

    /// The message, naming the file and the layer.
    public var description: String {
        switch self {
        case let .doesNotFit(file, layer, className, lowering, message):
            return "\(file): custom layer '\(layer)' (class \(className)): lowering '\(lowering)' does not fit: \(message)"
        case let .unmatched(file, matches, layers):
            let have = layers.isEmpty ? "the model has no custom layers" : "its custom layers are " + layers.joined(separator: ", ")
            return "\(file): \(matches.map { "'\($0)'" }.joined(separator: ", ")) selects no custom layer (a MATCH is a layer name, a glob on layer names or a class name); \(have)"
        case let .unsupported(file, hook, message):
            return "\(file): hook \(hook): \(message)"
        }
    }
}

extension Array where Element == KerasHookSpec {
    /// `graph` with its custom nodes (`Op.custom`, top level) that a spec selects replaced: a
    /// `.lower` spec by built-in ops of the same output shape, a `.customLayer` spec by a custom
    /// node of that class (parameters added). A node is selected by its name (the Core ML layer
    /// name) or its class name; `.any` text with `*?[` is a glob on names. A name match wins over a
    /// glob, a glob over a class; among equals the first spec wins.
    /// - Parameters:
    ///   - file: for messages.
    ///   - requiredMatches: the number of leading specs (command-line flags) that must select a layer.
    /// - Throws: `CustomLayerLoweringError`.
    public func lowerCustomNodes(in graph: Graph, file: String, requiredMatches: Int = 0) throws -> Graph {
        var g = graph
        var used = Set<Int>()
        let customs = g.nodes.compactMap { n -> String? in if case .custom = n.op { return n.name } else { return nil } }
        for (ni, node) in g.nodes.enumerated() {
            guard case let .custom(attrs) = node.op else { continue }
            var best: (rank: Int, index: Int)?
            for (i, spec) in enumerated() {
                let r: Int?
                switch spec.match {
                case let .any(s) where s.contains(where: { "*?[".contains($0) }): r = globMatch(s, node.name) ? 1 : nil
                case let .any(s): r = s == node.name ? 0 : s == attrs.className ? 2 : nil
                case let .name(s): r = s == node.name ? 0 : nil
                case let .glob(s): r = globMatch(s, node.name) ? 1 : nil
                case let .className(s): r = s == attrs.className ? 2 : nil
                case .function: r = nil
                }
                if let r, best == nil || r < best!.rank { best = (r, i) }
            }
            guard let (_, si) = best else { continue }
            used.insert(si)
            let spec = self[si]
            switch spec.action {
            case let .customLayer(c):
                var a = attrs
                a.className = c.className
                if let d = c.description { a.description = d }
                a.parameters.merge(c.parameters) { _, new in new }
                g.nodes[ni].op = .custom(a)
            case let .lower(l):
                g.nodes[ni] = try l.replacing(node, attrs, in: g, file: file)
            }
        }
        let missing = (0 ..< Swift.min(requiredMatches, count)).filter { !used.contains($0) }.map { self[$0].match.text }
        if !missing.isEmpty { throw CustomLayerLoweringError.unmatched(file: file, matches: missing, customLayers: customs) }
        return g
    }
}

extension KerasLowering {
    /// The built-in node replacing custom node `node`; its output shape must be the one stored.
    func replacing(_ node: Node, _ attrs: CustomLayerAttributes, in g: Graph, file: String) throws -> Node {
        func fail(_ m: String) -> CustomLayerLoweringError {
            .doesNotFit(file: file, layer: node.name, className: attrs.className, lowering: description, message: m)
        }
        guard node.inputs.count == 1, node.outputs.count == 1 else {
            throw fail("it takes one input and gives one output; the layer has \(node.inputs.count) inputs and \(node.outputs.count) outputs")
        }
        guard let inShape = g.tensorTypes[node.inputs[0]]?.shape else { throw fail("the input '\(node.inputs[0])' has no known shape") }
        let outShape = attrs.outputShapes.first ?? g.tensorTypes[node.outputs[0]]?.shape ?? inShape
        func spatial(_ given: KerasBorders?, shrinking: Bool) throws -> KerasBorders {
            guard inShape.count == 4, outShape.count == 4 else {
                throw fail("it works on the spatial axes of a [N, H, W, C] tensor; the input has shape \(formatShape(inShape))")
            }
            if let given { return given }
            let dh = shrinking ? inShape[1] - outShape[1] : outShape[1] - inShape[1]
            let dw = shrinking ? inShape[2] - outShape[2] : outShape[2] - inShape[2]
            guard dh >= 0, dw >= 0, dh % 2 == 0, dw % 2 == 0 else {
                throw fail("cannot split \(formatShape(inShape)) → \(formatShape(outShape)) evenly; give the borders TOP,BOTTOM,LEFT,RIGHT")
            }
            return KerasBorders(top: dh / 2, bottom: dh / 2, left: dw / 2, right: dw / 2)
        }
        let op: Op, made: [Int]
        switch self {
        case .identity: op = .activation(.linear(alpha: 1, beta: 0)); made = inShape
        case let .affine(s, o): op = .activation(.linear(alpha: s, beta: o)); made = inShape
        case let .activation(n):
            guard let a = KerasLowering.activationNames[n] else { throw fail("unknown activation '\(n)'") }
            op = .activation(a); made = inShape
        case let .crop(given):
            let b = try spatial(given, shrinking: true)
            op = .crop(crops: b.nhwcPairs)
            made = [inShape[0], inShape[1] - b.top - b.bottom, inShape[2] - b.left - b.right, inShape[3]]
        case let .pad(mode, given, value):
            let b = try spatial(given, shrinking: false)
            op = .pad(PadAttributes(mode: mode, pads: b.nhwcPairs, value: value))
            made = [inShape[0], inShape[1] + b.top + b.bottom, inShape[2] + b.left + b.right, inShape[3]]
        }
        guard made == outShape else {
            throw fail("it makes shape \(formatShape(made)) from input \(formatShape(inShape)); the model stores \(formatShape(outShape)) for the layer")
        }
        return Node(name: node.name, op: op, inputs: node.inputs, outputs: node.outputs)
    }
}
