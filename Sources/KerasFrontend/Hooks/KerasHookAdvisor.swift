import MLGraph

/// A hook that would convert an unsupported layer, as `KerasConversionError.unsupportedLayers`
/// suggests it: the exact `--lower` / `--custom-layer` flag and the equivalent hooks-file entry.
public struct KerasHookSuggestion: Hashable, Sendable, CustomStringConvertible {
    /// The MATCH text (a function, class or layer name).
    public var match: String
    /// The hook, nil for a template (`isTemplate`).
    public var spec: KerasHookSpec?
    /// The flag as it should be typed ("--lower res_crop=crop:2,2,2,2"); for a template, with the
    /// values to fill in as upper-case words ("--lower rescale_output=affine:SCALE,OFFSET").
    public var flag: String
    /// The hooks-file entry (`{"match": "res_crop", "lower": "crop:2,2,2,2"}`), a template when
    /// `isTemplate`.
    public var json: String
    /// Whether `flag` and `json` hold placeholders (values the shapes do not reveal).
    public var isTemplate: Bool

    /// A complete suggestion.
    init(_ spec: KerasHookSpec) {
        self.spec = spec
        match = spec.match.text
        flag = spec.commandLineFlag ?? ""
        json = spec.jsonText
        isTemplate = false
        if flag.isEmpty, case let .customLayer(c) = spec.action {
            flag = "--custom-layer \(spec.match.text)=\(c.className)"
        }
    }

    /// A template lowering whose OP text holds placeholders.
    init(match: String, templateLowering: String) {
        self.match = match
        spec = nil
        flag = "--lower \(match)=\(templateLowering)"
        json = "{\"match\": \(KerasJSON.quote(match)), \"lower\": \(KerasJSON.quote(templateLowering))}"
        isTemplate = true
    }

    /// The flag.
    public var description: String { flag }
}

/// Suggests hooks for unsupported layers from their shapes (see docs/HOOKS.md): a `crop` when the
/// output is smaller than the input on the spatial axes, a `pad` when larger (reflect for classes
/// named like reflection padding, edge for replication padding, else constant; reading the
/// layer's own `padding` config when it has one), an `affine` template when the shapes are equal
/// (or the output is unknown and the Lambda calls no functions), and always a custom layer.
/// Layers running the same Python function (or of the same custom class) share one suggestion
/// matched by that name when their shapes agree.
enum KerasHookAdvisor {
    /// Custom layer classes the runtime ships, by the Lambda function they implement (the names
    /// the book's Core ML conversion of the style-transfer model used).
    static let wellKnownCustomClasses = ["res_crop": "ResCropBlockLambda", "rescale_output": "RescaleOutputLambda"]

    struct Item {
        var entry: KerasUnsupportedLayer
        var layer: KerasLayerConfig?
        /// Whether a built-in converter exists (the layer failed on a configuration instead).
        var hasConverter: Bool
    }

    /// Fills `suggestions` of each entry.
    static func annotate(_ items: [Item], kerasVersion: String?) -> [KerasUnsupportedLayer] {
        // The name to match each layer by: its Lambda function, its (bare) custom class, else itself.
        func groupKey(_ it: Item) -> String {
            guard let l = it.layer, !it.hasConverter else { return it.entry.name }
            if let f = KerasLambdaFunction(layer: l, kerasVersion: kerasVersion), let n = f.name, n != "<lambda>",
               !n.isEmpty, !n.contains(where: { "*?[=".contains($0) }) { return n }
            if l.className != "Lambda" { return bareKerasClassName(l.className) }
            return it.entry.name
        }
        let keys = items.map(groupKey)
        var lowerings: [String: Set<String>] = [:]  // group → distinct inferred lowerings (known ones)
        var perItem: [LoweringGuess?] = []
        for (it, k) in zip(items, keys) {
            let g = guessLowering(it)
            perItem.append(g)
            if let g { lowerings[k, default: []].insert(g.text) }
        }
        return items.indices.map { i in
            var e = items[i].entry
            guard items[i].layer != nil, !items[i].hasConverter else { return e }
            var key = keys[i]
            var guess = perItem[i]
            if key != e.name, (lowerings[key]?.count ?? 0) > 1 { key = e.name }  // instances disagree
            if guess == nil, key != e.name, let only = lowerings[key], only.count == 1 {
                guess = perItem.indices.lazy.filter { keys[$0] == key }.compactMap { perItem[$0] }.first
            }
            var out: [KerasHookSuggestion] = []
            if let g = guess {
                if let l = g.lowering {
                    out.append(KerasHookSuggestion(KerasHookSpec(match: .any(key), action: .lower(l))))
                } else {
                    out.append(KerasHookSuggestion(match: key, templateLowering: g.text))
                }
            }
            var custom = KerasCustomLayerSpec(className: customClassName(key: key, item: items[i]))
            if let s = guess?.customShape { custom.outputShape = s }
            out.append(KerasHookSuggestion(KerasHookSpec(match: .any(key), action: .customLayer(custom))))
            e.suggestions = out
            return e
        }
    }

    struct LoweringGuess {
        /// The lowering when it is complete, nil for a template.
        var lowering: KerasLowering?
        /// The OP text (a template's has placeholders).
        var text: String
        /// The output-shape rule a custom layer needs for the same change (nil: same shape).
        var customShape: KerasOutputShapeRule?
    }

    /// What the input and output shapes of a layer suggest.
    static func guessLowering(_ it: Item) -> LoweringGuess? {
        let e = it.entry
        let className = bareKerasClassName(it.layer?.className ?? e.className)
        let lc = className.lowercased()
        let padMode: PadMode = lc.contains("reflect") ? .reflect : (lc.contains("replicat") || lc.contains("edge")) ? .edge : .constant
        if lc.contains("padding"), let p = it.layer?.config["padding"], KerasBorders(kerasPadding: p) != nil {
            let l = KerasLowering.pad(mode: padMode, borders: nil, value: 0)
            return LoweringGuess(lowering: l, text: l.description, customShape: KerasBorders(kerasPadding: p).map { .pad($0) })
        }
        let affineTemplate = LoweringGuess(lowering: nil, text: "affine:SCALE,OFFSET", customShape: nil)
        if e.outputShapes.allSatisfy(\.isEmpty), let l = it.layer, let f = KerasLambdaFunction(layer: l) {
            // Output shape unknown (e.g. the model's output): a Lambda calling no functions
            // ((x + 1) * 127.5) is most likely elementwise arithmetic.
            return f.info?.code?.names.isEmpty ?? true ? affineTemplate : nil
        }
        guard e.inputShapes.count == 1, e.outputShapes.count == 1 else { return nil }
        let i = e.inputShapes[0], o = e.outputShapes[0]
        guard i.count == o.count, i.count >= 2 else { return nil }
        // Same known shape (batch aside): an elementwise function.
        if zip(i.dropFirst(), o.dropFirst()).allSatisfy({ $0 != nil && $0 == $1 }) {
            return affineTemplate
        }
        guard i.count == 4, let ih = i[1], let iw = i[2], let oh = o[1], let ow = o[2], i[3] == o[3] else { return nil }
        let dh = ih - oh, dw = iw - ow
        if dh >= 0, dw >= 0 {
            let b = KerasBorders(top: dh / 2, bottom: dh - dh / 2, left: dw / 2, right: dw - dw / 2)
            return LoweringGuess(lowering: .crop(b), text: "crop:\(b)", customShape: .crop(b))
        }
        if dh <= 0, dw <= 0 {
            let b = KerasBorders(top: -dh / 2, bottom: -dh - (-dh / 2), left: -dw / 2, right: -dw - (-dw / 2))
            let l = KerasLowering.pad(mode: padMode, borders: b, value: 0)
            return LoweringGuess(lowering: l, text: l.description, customShape: .pad(b))
        }
        return nil
    }

    /// The suggested custom layer class: a well-known runtime class, else the custom Keras class
    /// itself, else CamelCase of the function (or layer) name + "Lambda" (`rescale_output` →
    /// `RescaleOutputLambda`, as coremltools users named them).
    static func customClassName(key: String, item: Item) -> String {
        if let k = wellKnownCustomClasses[key] { return k }
        if let l = item.layer, l.className != "Lambda" { return bareKerasClassName(l.className) }
        let words = key.split(whereSeparator: { !($0.isLetter || $0.isNumber) })
        let camel = words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        return (camel.first?.isLetter ?? false ? camel : "Layer" + camel) + "Lambda"
    }
}

extension KerasHookSuggestion {
    /// The closing lines of the unsupported-layers message: one command-line fragment and one
    /// hooks file covering every listed layer (complete suggestions preferred), or "" when there
    /// are no suggestions.
    static func summary(_ layers: [KerasUnsupportedLayer]) -> String {
        var seen = Set<String>(), picks: [KerasHookSuggestion] = []
        for l in layers {
            guard let pick = l.suggestions.first(where: { !$0.isTemplate }) ?? l.suggestions.first,
                  seen.insert(pick.match).inserted else { continue }
            picks.append(pick)
        }
        guard !picks.isEmpty else { return "" }
        return "\n    all at once: " + picks.map(\.flag).joined(separator: " ")
            + "\n    or with --hooks hooks.json: {\"hooks\": [" + picks.map(\.json).joined(separator: ", ") + "]}"
            + (picks.contains(where: \.isTemplate) ? "\n    (replace the UPPER-CASE placeholders with the layer's values)" : "")
    }
}
