// Flexible input shapes in the `.mlmodel` writer (docs/FLEXIBLE_SHAPES.md).
import MLGraph

extension ExportWriter {
    /// Writes the flexibility of graph input `input` (`FeatureDescription.shapeFlexibility`, IR
    /// layout) into its Core ML feature type `type`: multi-arrays get `shapeRange` /
    /// `enumeratedShapes` over the declared Core ML shape ([C, H, W] from NHWC [N, H, W, C],
    /// [D] from [N, D], [C, H, W] from an imported [1, C, H, W]), images `imageSizeRange` /
    /// `enumeratedSizes`. The batch dimension is Core ML's run-time batch, not part of the
    /// shape: its range must allow 1 and is not written. Records spec 3 (Core ML 2) as needed.
    /// Failures (flexible channels of an image, a batch that excludes 1, rank-3 sequence inputs)
    /// are collected with `fail`.
    mutating func applyFlexibility(_ flex: ShapeFlexibility, input: ValueInfo, to type: inout Spec.FeatureType) {
        let name = input.name
        func refuse(_ why: String) {
            fail(name, "input", "input '\(name)' has the flexible shape \(flex): \(why)",
                 "Keep that dimension fixed, or write the model as an .mlbundle, which keeps any flexibility.")
        }
        if let p = flex.problem(defaultShape: input.type.shape) { return refuse(p) }
        switch flex {
        case let .ranges(r) where !(r.first?.contains(1) ?? false):
            return refuse("the batch range \(r.first.map(\.description) ?? "?") excludes 1 (Core ML's batch is not part of the shape)")
        case let .enumerated(s) where !s.allSatisfy({ $0.first == 1 }):
            return refuse("an enumerated shape has a batch other than 1 (Core ML's batch is not part of the shape)")
        default: break
        }
        switch type.kind {
        case var .image(img):
            guard let size = flex.specImageSizeFlexibility else {
                return refuse("Core ML images can vary only in width and height")
            }
            img.sizeFlexibility = size
            type.kind = .image(img)
        case var .multiArray(a):
            let core: ShapeFlexibility?
            if nchwFeatures[name] != nil {
                switch flex {  // imported [1, C, H, W] declared [C, H, W]
                case let .ranges(r): core = .ranges(Array(r.dropFirst()))
                case let .enumerated(s): core = .enumerated(s.map { Array($0.dropFirst()) })
                }
            } else {
                core = flex.coreMLRank5(irRank: input.type.rank)
            }
            guard let core else { return refuse("the writer maps flexible multi-array inputs of IR rank 2 ([N, D]) or 4 ([N, H, W, C]) only") }
            a.shapeFlexibility = core.specShapeFlexibility
            type.kind = .multiArray(a)
        default:
            return
        }
        need(3, "flexible input shape (Core ML 2)", node: name)
    }
}
