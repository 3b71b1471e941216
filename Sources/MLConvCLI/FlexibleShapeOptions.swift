import MLGraph

// `--flexible-shape NAME=SPEC` (repeatable) of `mlconv keras` (docs/FLEXIBLE_SHAPES.md).
// SPEC is in the Keras (IR) order, NHWC with the batch first (the batch may be left out):
// - per-dimension: `1..*,224,224,3`, `1,32..512,32..512,3` — each item `n` (fixed), `a..b` or
//   `a..*` (no upper bound);
// - enumerated: `1x224x224x3,1x299x299x3` — each item a shape written with `x`.

/// `--flexible-shape NAME=SPEC`, repeatable.
let flexibleShapeOptionSpec = OptionSpec(repeatable: ["--flexible-shape"])

/// The help lines of `--flexible-shape`.
let flexibleShapeOptionsHelp = """
  --flexible-shape NAME=SPEC other shapes input NAME accepts, Keras order (N,H,W,C; the batch
                             may be left out): ranges `1..*,32..512,32..512,3` (n, a..b, a..*)
                             or enumerated shapes `1x224x224x3,1x299x299x3`; written as Core ML
                             shapeRange / enumeratedShapes (images: size ranges / enumerated
                             sizes; spec 3). Checked through every layer; repeatable
"""

/// Parses one SPEC of `--flexible-shape`.
/// - Throws: `UsageError` quoting the option and the bad item.
func parseFlexibleShape(_ name: String, _ spec: String) throws -> ShapeFlexibility {
    let items = spec.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
    func bad(_ why: String) -> UsageError {
        UsageError("--flexible-shape \(name)=\(spec): \(why); write ranges as 1..*,224,224,3 (n, a..b, a..*) or shapes as 1x224x224x3,1x299x299x3")
    }
    func size(_ s: Substring) throws -> Int {
        guard let v = Int(s), v >= 1, v <= TensorType.maxElementCount else { throw bad("'\(s)' is not a size 1…2^40") }
        return v
    }
    guard !items.isEmpty, !items.contains(where: \.isEmpty) else { throw bad("an item is empty") }
    if items.contains(where: { $0.contains("x") }) {
        guard items.count <= ShapeFlexibility.maximumEnumeratedShapes else { throw bad("more than \(ShapeFlexibility.maximumEnumeratedShapes) shapes") }
        let shapes = try items.map { item -> [Int] in
            guard !item.contains("..") else { throw bad("'\(item)' mixes a shape with a range") }
            return try item.split(separator: "x", omittingEmptySubsequences: false).map(size)
        }
        guard Set(shapes.map(\.count)).count == 1 else { throw bad("the shapes have different ranks") }
        return .enumerated(shapes)
    }
    return .ranges(try items.map { item -> DimensionRange in
        guard let r = item.range(of: "..") else { return .fixed(try size(Substring(item))) }
        let low = try size(item[..<r.lowerBound])
        let highText = item[r.upperBound...]
        if highText == "*" { return DimensionRange(lowerBound: low, upperBound: DimensionRange.unbounded) }
        let high = try size(highText)
        guard high >= low else { throw bad("'\(item)': the upper bound is below the lower bound") }
        return DimensionRange(lowerBound: low, upperBound: high)
    })
}

/// The `--flexible-shape` options by input name, parsed.
func flexibleShapeOptions(_ args: ParsedArguments) throws -> [(name: String, flexibility: ShapeFlexibility)] {
    var out: [(String, ShapeFlexibility)] = []
    for (name, spec) in try args.pairs("--flexible-shape") {
        guard !out.contains(where: { $0.0 == name }) else { throw UsageError("--flexible-shape \(name) given twice") }
        out.append((name, try parseFlexibleShape(name, spec)))
    }
    return out
}

/// A default shape (without the batch) for a Keras input of unknown (None) dimensions that has
/// a flexible shape: the first enumerated shape, or every range's lower bound. `kerasRank` is the
/// input's rank with the batch (the flexibility may include the batch or leave it out).
func defaultKerasShape(for flex: ShapeFlexibility, kerasRank: Int) -> [Int]? {
    let withBatch = flex.rank == kerasRank
    switch flex {
    case let .enumerated(s): return s.first.map { withBatch ? Array($0.dropFirst()) : $0 }
    case let .ranges(r): return (withBatch ? Array(r.dropFirst()) : r).map(\.lowerBound)
    }
}

/// Records each flexible shape on its graph input (`FeatureDescription.shapeFlexibility`, with
/// a leading batch range 1 added when the SPEC left the batch out) and checks by shape inference
/// that the layers take it (`Graph.checkFlexibleShapes`).
/// - Throws: `CLIError` for an unknown input or a rank that does not fit; `FlexibleShapeError`
///   naming the layer that cannot take an allowed shape.
func applyFlexibleShapes(_ shapes: [(name: String, flexibility: ShapeFlexibility)], to graph: inout Graph) throws {
    for (name, given) in shapes {
        guard let input = graph.inputs.first(where: { $0.name == name }) else {
            throw CLIError("--flexible-shape: the model has no input '\(name)'; its inputs are \(graph.inputs.map(\.name).joined(separator: ", "))")
        }
        var flex = given
        let rank = input.type.rank
        if flex.rank == rank - 1 {
            switch flex {
            case let .ranges(r): flex = .ranges([.fixed(1)] + r)
            case let .enumerated(s): flex = .enumerated(s.map { [1] + $0 })
            }
        }
        if let p = flex.problem(defaultShape: input.type.shape) {
            throw CLIError("--flexible-shape \(name): \(p) (the input's shape is \(formatShape(input.type.shape)), batch first, Keras order)")
        }
        if let i = graph.description.inputs.firstIndex(where: { $0.name == name }) {
            graph.description.inputs[i].shapeFlexibility = flex
        } else {
            graph.description.inputs.append(FeatureDescription(name: name, shapeFlexibility: flex))
        }
    }
    try graph.checkFlexibleShapes()
}

/// The `inspect` JSON of a flexibility (IR layout): `{"ranges": [{"lowerBound", "upperBound"}]}`
/// (upper −1 = unbounded) or `{"enumerated": [[…]]}`, plus `"text"` as `ShapeFlexibility.description`.
func flexibilityJSON(_ flex: ShapeFlexibility) -> [String: Any] {
    switch flex {
    case let .ranges(r):
        return ["ranges": r.map { ["lowerBound": $0.lowerBound, "upperBound": $0.upperBound] }, "text": flex.description]
    case let .enumerated(s):
        return ["enumerated": s, "text": flex.description]
    }
}

// MARK: flexible shapes checked against the Keras inputs before converting

/// Checks each `--flexible-shape` against the model's inputs (names and shapes with the batch,
/// nil = unknown dimension, as the Keras config gives them), so a wrong option is reported as
/// such and not as a conversion error of the model. A SPEC may have the input's rank or one less
/// (batch left out); each dimension the config fixes (e.g. the channels) must be allowed.
/// - Throws: `UsageError` naming the option, and the model's inputs or the input's dimensions.
func validateFlexibleShapes(_ shapes: [(name: String, flexibility: ShapeFlexibility)],
                            inputs: [(name: String, shape: [Int?])], specs: [String: String]) throws {
    for (name, flex) in shapes {
        let written = "--flexible-shape \(name)=\(specs[name] ?? "…")"
        guard let input = inputs.first(where: { $0.name == name }) else {
            throw UsageError("\(written): the model has no input '\(name)'; its inputs: \(inputs.map(\.name).joined(separator: ", "))")
        }
        let rank = input.shape.count
        let labels: [String]
        switch rank {
        case 4: labels = ["N", "H", "W", "C"]
        case 3: labels = ["N", "steps", "channels"]
        case 5: labels = ["N", "D", "H", "W", "C"]
        case 2: labels = ["N", "features"]
        default: labels = []
        }
        let layout = labels.isEmpty ? "batch first" : labels.joined(separator: ", ")
        let given = flex.rank ?? 0
        guard given == rank || given == rank - 1 else {
            throw UsageError("\(written): \(given) dimensions, but input '\(name)' has \(rank) (\(layout); the batch may be left out)")
        }
        let offset = rank - given  // 1 when the batch is left out
        for axis in 1..<max(rank, 1) {
            guard let fixed = input.shape[axis] else { continue }
            let allowed: [Int]
            switch flex {
            case let .ranges(r): allowed = r[axis - offset].contains(fixed) ? [] : [r[axis - offset].lowerBound]
            case let .enumerated(list): allowed = list.map { $0[axis - offset] }.filter { $0 != fixed }
            }
            guard let found = allowed.first else { continue }
            let label = axis < labels.count ? " (\(labels[axis]))" : ""
            throw UsageError("\(written): dimension \(axis + 1)\(label) of input '\(name)' is \(fixed) in the model, but the flexible shape gives \(found) there (\(layout); the batch may be left out)")
        }
    }
}
