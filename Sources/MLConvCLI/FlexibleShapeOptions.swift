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
