// Core ML flexible input shapes (spec 3+) ↔ the IR's `ShapeFlexibility` (docs/FLEXIBLE_SHAPES.md).
import MLGraph

extension Spec.ArrayFeatureType {
    /// The flexibility in Core ML's own shape order (one range or one entry per dimension of
    /// `shape`), checked: ranges 1…2⁴⁰ with upper bound ≥ lower bound or −1; enumerated shapes of
    /// positive dimensions. nil when the shape is fixed.
    /// - Throws: `LayerImportFailure` describing the bad field.
    func coreMLOrderFlexibility() throws -> MLGraph.ShapeFlexibility? {
        switch shapeFlexibility {
        case nil: return nil
        case let .shapeRange(ranges):
            guard ranges.count == shape.count else {
                throw LayerImportFailure("has shapeRange with \(ranges.count) ranges for its shape \(shape) of rank \(shape.count)")
            }
            return .ranges(try ranges.map(DimensionRange.checked))
        case let .enumeratedShapes(shapes):
            guard shapes.count <= MLGraph.ShapeFlexibility.maximumEnumeratedShapes else {
                throw LayerImportFailure("has \(shapes.count) enumeratedShapes; at most \(MLGraph.ShapeFlexibility.maximumEnumeratedShapes) are supported")
            }
            return .enumerated(try shapes.map { try Checked.ints($0, "enumerated shape", in: 1...TensorType.maxElementCount) })
        }
    }
}

extension DimensionRange {
    /// A Core ML `SizeRange` as a checked range (lower bound 1…2⁴⁰ — Core ML allows 0, read as 1
    /// since tensors have no empty dimension — upper bound −1 or ≥ the lower bound).
    static func checked(_ r: Spec.SizeRange) throws -> DimensionRange {
        guard let low = Int(exactly: r.lowerBound), low <= TensorType.maxElementCount else {
            throw LayerImportFailure("has a size range with lower bound \(r.lowerBound); expected 0…2^40")
        }
        guard let high = Int(exactly: r.upperBound), high == DimensionRange.unbounded || (high >= Swift.max(low, 1) && high <= TensorType.maxElementCount) else {
            throw LayerImportFailure("has a size range \(r.lowerBound)…\(r.upperBound); the upper bound must be −1 (unbounded) or at least the lower bound")
        }
        return DimensionRange(lowerBound: Swift.max(1, low), upperBound: high)
    }
}

extension ShapeFlexibility {
    /// This flexibility (over Core ML dimensions) with `leading` fixed dimensions of size 1
    /// added in front and the first `dropping` dimensions removed (each must allow size 1):
    /// Core ML [C, H, W] → IR [1, C, H, W] is `leading 1, dropping 0`; [1, 1, C, H, W] → IR
    /// [1, C, H, W] is `leading 0, dropping 1`.
    func mapped(leading: Int, dropping: Int) throws -> ShapeFlexibility {
        switch self {
        case let .ranges(r):
            guard r.prefix(dropping).allSatisfy({ $0.contains(1) }) else {
                throw LayerImportFailure("has a shape range \(self) whose leading (sequence / batch) dimensions exclude 1; the classic layers need 1 there")
            }
            return .ranges(Array(repeating: .fixed(1), count: leading) + r.dropFirst(dropping))
        case let .enumerated(s):
            guard s.allSatisfy({ $0.prefix(dropping).allSatisfy { $0 == 1 } }) else {
                throw LayerImportFailure("has an enumerated shape in \(self) whose leading (sequence / batch) dimensions are not 1; the classic layers need 1 there")
            }
            var out: [[Int]] = []
            for shape in s {
                let m = Array(repeating: 1, count: leading) + shape.dropFirst(dropping)
                if !out.contains(m) { out.append(m) }
            }
            return .enumerated(out)
        }
    }

    /// The flexibility of an image input [1, H, W, C] from Core ML's `SizeFlexibility`: a width
    /// or height range that is absent keeps the default size.
    static func image(_ img: Spec.ImageFeatureType, height: Int, width: Int, channels: Int) throws -> ShapeFlexibility? {
        switch img.sizeFlexibility {
        case nil: return nil
        case let .imageSizeRange(w, h):
            let hr = try h.map(DimensionRange.checked) ?? .fixed(height)
            let wr = try w.map(DimensionRange.checked) ?? .fixed(width)
            return .ranges([.fixed(1), hr, wr, .fixed(channels)])
        case let .enumeratedSizes(sizes):
            guard sizes.count <= ShapeFlexibility.maximumEnumeratedShapes else {
                throw LayerImportFailure("has \(sizes.count) enumeratedSizes; at most \(ShapeFlexibility.maximumEnumeratedShapes) are supported")
            }
            return .enumerated(try sizes.map {
                [1, try Checked.int($0.height, "enumerated image height", in: 1...Node.maxCountAttribute),
                 try Checked.int($0.width, "enumerated image width", in: 1...Node.maxCountAttribute), channels]
            })
        }
    }
}

extension CoreMLImporter {
    /// Records the flexibility of input `f` (IR layout of its graph input) in `description`,
    /// after checking it against the input's default shape. Called by the input importers once
    /// the graph input and its feature description exist.
    static func recordFlexibility(_ f: Spec.FeatureDescription, network: Spec.NeuralNetwork, exact: Bool,
                                  builder b: ImportBuilder, description: inout ModelDescription) throws {
        guard let input = b.inputs.first(where: { $0.name == f.name }),
              let index = description.inputs.firstIndex(where: { $0.name == f.name }) else { return }
        let irShape = input.type.shape
        var flex: MLGraph.ShapeFlexibility?
        switch f.type?.kind {
        case let .multiArray(a)?:
            guard let core = try a.coreMLOrderFlexibility() else { return }
            if exact {
                flex = core
            } else {
                switch a.shape.count {
                case 1, 3: flex = try core.mapped(leading: 1, dropping: 0)   // [C] → [1, C]; [C, H, W] → [1, C, H, W]
                case 4: flex = try core.mapped(leading: 1, dropping: 1)      // [1, C, H, W] → [1, C, H, W]
                case 5: flex = try core.mapped(leading: 1, dropping: 2)      // [1, 1, C, H, W] → [1, C, H, W]
                default: return
                }
            }
        case let .image(img)?:
            guard irShape.count == 4 else { return }
            flex = try ShapeFlexibility.image(img, height: irShape[1], width: irShape[2], channels: irShape[3])
        default: return
        }
        guard let flex else { return }
        if let p = flex.problem(defaultShape: irShape) {
            throw LayerImportFailure("has a flexible shape \(flex) that does not fit its default shape \(formatShape(irShape)): \(p)")
        }
        if !flex.allows(irShape) {
            b.warnings.append("input '\(f.name)': the default shape \(formatShape(irShape)) is not among its allowed shapes \(flex); it is accepted too")
        }
        description.inputs[index].shapeFlexibility = flex
    }
}

// MARK: - Export

extension ShapeFlexibility {
    /// This IR flexibility of an NHWC input [N, H, W, C] as Core ML's rank-5 [C, H, W]
    /// flexibility (the batch is Core ML's run-time batch, not part of the shape: its range must
    /// allow 1 and is not written); of an [N, D] input as [D].
    /// - Returns: nil when the input's rank is neither 2 nor 4.
    public func coreMLRank5(irRank: Int) -> ShapeFlexibility? {
        let perm: [Int]
        switch irRank {
        case 4: perm = [3, 1, 2]
        case 2: perm = [1]
        default: return nil
        }
        switch self {
        case let .ranges(r): return r.count == irRank ? .ranges(perm.map { r[$0] }) : nil
        case let .enumerated(s):
            guard s.allSatisfy({ $0.count == irRank }) else { return nil }
            var out: [[Int]] = []
            for shape in s {
                let m = perm.map { shape[$0] }
                if !out.contains(m) { out.append(m) }
            }
            return .enumerated(out)
        }
    }

    /// The Core ML `ShapeFlexibility` of a multi-array feature (this flexibility already in Core
    /// ML's shape order).
    public var specShapeFlexibility: Spec.ArrayFeatureType.ShapeFlexibility {
        switch self {
        case let .ranges(r):
            return .shapeRange(r.map { Spec.SizeRange(lowerBound: UInt64(Swift.max(0, $0.lowerBound)), upperBound: Int64($0.upperBound)) })
        case let .enumerated(s): return .enumeratedShapes(s.map { $0.map(Int64.init) })
        }
    }

    /// The Core ML `SizeFlexibility` of an image input [N, H, W, C] (ranges of H and W, or the
    /// enumerated (width, height) pairs); nil when the channels or batch are flexible (Core ML
    /// images cannot say so) or the rank is not 4.
    public var specImageSizeFlexibility: Spec.ImageFeatureType.SizeFlexibility? {
        switch self {
        case let .ranges(r):
            guard r.count == 4, r[3].isFixed, r[0].contains(1) else { return nil }
            func spec(_ d: DimensionRange) -> Spec.SizeRange {
                Spec.SizeRange(lowerBound: UInt64(Swift.max(0, d.lowerBound)), upperBound: Int64(d.upperBound))
            }
            return .imageSizeRange(width: spec(r[2]), height: spec(r[1]))
        case let .enumerated(s):
            guard s.allSatisfy({ $0.count == 4 && $0[0] == 1 }), Set(s.map { $0[3] }).count == 1 else { return nil }
            var sizes: [Spec.ImageFeatureType.ImageSize] = []
            for shape in s {
                let size = Spec.ImageFeatureType.ImageSize(width: UInt64(shape[2]), height: UInt64(shape[1]))
                if !sizes.contains(size) { sizes.append(size) }
            }
            return .enumeratedSizes(sizes)
        }
    }
}

// MARK: - Feature checks

extension Spec.ImageFeatureType {
    /// Whether an image of `width` × `height` pixels fits this feature: its declared size, or a
    /// size its `sizeFlexibility` allows (an absent width or height range keeps the declared size).
    public func allowsSize(width w: Int, height h: Int) -> Bool {
        if Int64(w) == width && Int64(h) == height { return true }
        func fits(_ r: Spec.SizeRange?, _ v: Int, declared: Int64) -> Bool {
            guard let r else { return Int64(v) == declared }
            return UInt64(clamping: v) >= r.lowerBound && (r.upperBound < 0 || Int64(v) <= r.upperBound)
        }
        switch sizeFlexibility {
        case nil: return false
        case let .enumeratedSizes(sizes): return sizes.contains { $0.width == UInt64(clamping: w) && $0.height == UInt64(clamping: h) }
        case let .imageSizeRange(wr, hr): return w >= 1 && h >= 1 && fits(wr, w, declared: width) && fits(hr, h, declared: height)
        }
    }
}
