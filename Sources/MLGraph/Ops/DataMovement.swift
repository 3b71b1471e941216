// Shape and data-movement ops (issue 9): squeeze, expandDims, stack, split, sliceByIndex,
// sliceBySize, tile, bandPart, cumsum. Definitions follow coremltools' MIL ops
// (ops/defs/iOS15/tensor_transformation.py and tensor_operation.py). Each works on any element type.

// MARK: - squeeze

/// Definition of `Op.squeeze(axes:)`. MIL `squeeze`, ONNX `Squeeze`.
enum SqueezeDefinition: OpDefinition {
    static let kind = OpKind.squeeze
    static let summary = "removes size-1 axes (all of them when none are named)"
    static let milOps = ["squeeze"]
    static let onnxOps = ["Squeeze"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .squeeze(axes) = op else { return [:] }
        return ["axes": .ints(axes)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .squeeze(axes: try a.ints("axes")) }
    static func checkAttributes(of node: Node) throws {
        guard case let .squeeze(axes) = node.op else { return }
        try node.checkAxisList(axes, "axes")
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .squeeze(axes) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let s = ins[0].shape
        let drop: Set<Int>
        if axes.isEmpty {
            drop = Set(s.indices.filter { s[$0] == 1 })
        } else {
            drop = Set(try node.resolveAxes(axes, rank: s.count))
            for d in drop where s[d] != 1 { throw node.fail("axis \(d) of \(formatShape(s)) has size \(s[d]), not 1") }
        }
        let out = s.indices.filter { !drop.contains($0) }.map { s[$0] }
        return [TensorType(out, ins[0].elementType)]
    }
}

// MARK: - expandDims

/// Definition of `Op.expandDims(axes:)`. MIL `expand_dims`, ONNX `Unsqueeze`.
enum ExpandDimsDefinition: OpDefinition {
    static let kind = OpKind.expandDims
    static let summary = "inserts size-1 axes at output positions"
    static let milOps = ["expand_dims"]
    static let onnxOps = ["Unsqueeze"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .expandDims(axes) = op else { return [:] }
        return ["axes": .ints(axes)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .expandDims(axes: try a.ints("axes")) }
    static func checkAttributes(of node: Node) throws {
        guard case let .expandDims(axes) = node.op else { return }
        try node.checkAxisList(axes, "axes")
        guard !axes.isEmpty else { throw node.fail("axes must name at least one axis") }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .expandDims(axes) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let outRank = ins[0].rank + axes.count
        guard outRank <= Node.maxRank else { throw node.fail("output rank \(outRank) exceeds \(Node.maxRank)") }
        let inserted = Set(try node.resolveAxes(axes, rank: outRank))
        var it = ins[0].shape.makeIterator()
        let out = (0..<outRank).map { inserted.contains($0) ? 1 : it.next()! }
        return [TensorType(out, ins[0].elementType)]
    }
}

// MARK: - stack

/// Definition of `Op.stack(axis:)`. MIL `stack`, ONNX `ConcatFromSequence(new_axis=1)`.
enum StackDefinition: OpDefinition {
    static let kind = OpKind.stack
    static let summary = "stacks same-shape inputs along a new axis"
    static let milOps = ["stack"]
    static let onnxOps = ["ConcatFromSequence"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .stack(axis) = op else { return [:] }
        return ["axis": .int(axis)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .stack(axis: try a.int("axis")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .stack(axis) = node.op else { return [] }
        try node.expectInputs(ins, atLeast: 1)
        guard ins.allSatisfy({ $0.shape == ins[0].shape }) else {
            throw node.fail("inputs must have one shape, found \(ins.map { formatShape($0.shape) }.joined(separator: ", "))")
        }
        guard ins[0].rank < Node.maxRank else { throw node.fail("output rank exceeds \(Node.maxRank)") }
        let a = try node.resolveAxis(axis, rank: ins[0].rank + 1)
        var out = ins[0].shape
        out.insert(ins.count, at: a)
        return [TensorType(out, ins[0].elementType)]
    }
}

// MARK: - split

/// `Op.split`: exactly one of `numSplits` (equal parts; must divide the axis, as MIL) and
/// `splitSizes` (positive sizes summing to the axis size).
public struct SplitAttributes: Codable, Hashable, Sendable {
    /// Axis to split (negative allowed).
    public var axis: Int
    public var numSplits: Int?
    public var splitSizes: [Int]?
    public init(axis: Int, numSplits: Int? = nil, splitSizes: [Int]? = nil) {
        self.axis = axis; self.numSplits = numSplits; self.splitSizes = splitSizes
    }
}

/// Definition of `Op.split`. MIL `split`, ONNX `Split`.
enum SplitDefinition: OpDefinition {
    static let kind = OpKind.split
    static let summary = "splits along one axis into equal parts or given sizes (one output each)"
    static let milOps = ["split"]
    static let onnxOps = ["Split"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .split(a) = op else { return [:] }
        var v: [String: AttributeValue] = ["axis": .int(a.axis)]
        if let n = a.numSplits { v["num_splits"] = .int(n) }
        if let s = a.splitSizes { v["split_sizes"] = .ints(s) }
        return v
    }
    static func decodeOp(from a: AttributeReader) throws -> Op {
        .split(SplitAttributes(axis: try a.int("axis"), numSplits: a.has("num_splits") ? try a.int("num_splits") : nil,
                               splitSizes: a.has("split_sizes") ? try a.ints("split_sizes") : nil))
    }
    static func checkAttributes(of node: Node) throws {
        guard case let .split(a) = node.op else { return }
        switch (a.numSplits, a.splitSizes) {
        case let (n?, nil): try node.checkCount(n, "numSplits")
        case let (nil, s?):
            guard !s.isEmpty, s.count <= Node.maxCountAttribute, s.allSatisfy({ $0 >= 1 && $0 <= TensorType.maxElementCount }) else {
                throw node.fail("splitSizes must be 1…\(Node.maxCountAttribute) positive sizes, found \(s.prefix(8))")
            }
        default: throw node.fail("exactly one of numSplits and splitSizes must be given")
        }
    }

    /// The part sizes along the axis for an axis of size `size`.
    static func sizes(_ node: Node, _ a: SplitAttributes, axisSize size: Int) throws -> [Int] {
        if let n = a.numSplits {
            guard size % n == 0 else { throw node.fail("numSplits \(n) does not divide the axis size \(size)") }
            return Array(repeating: size / n, count: n)
        }
        let s = a.splitSizes ?? []
        guard s.reduce(0, +) == size else { throw node.fail("splitSizes \(s.prefix(8)) do not sum to the axis size \(size)") }
        return s
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .split(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let axis = try node.resolveAxis(a.axis, rank: ins[0].rank)
        return try sizes(node, a, axisSize: ins[0].shape[axis]).map {
            var s = ins[0].shape; s[axis] = $0
            return TensorType(s, ins[0].elementType)
        }
    }
}

// MARK: - sliceByIndex

/// `Op.sliceByIndex`, MIL `slice_by_index`: per axis d, the NumPy slice
/// x[begin[d]:end[d]:stride[d]] (negative indices count from the end, out-of-range ones are
/// clamped, negative strides walk backwards), with `begin` / `end` replaced by the slice's
/// default (None in NumPy) where `beginMask[d]` / `endMask[d]`; where `squeezeMask[d]` the axis
/// keeps the single element at `begin[d]` and is removed. All arrays have one entry per axis
/// (masks may be empty: all false).
public struct SliceByIndexAttributes: Codable, Hashable, Sendable {
    public var begin: [Int]
    public var end: [Int]
    public var stride: [Int]
    public var beginMask: [Bool]
    public var endMask: [Bool]
    public var squeezeMask: [Bool]
    public init(begin: [Int], end: [Int], stride: [Int], beginMask: [Bool] = [], endMask: [Bool] = [], squeezeMask: [Bool] = []) {
        self.begin = begin; self.end = end; self.stride = stride
        self.beginMask = beginMask; self.endMask = endMask; self.squeezeMask = squeezeMask
    }

    /// Per input axis: first index, step and element count of the slice; `squeezed` axes have count 1.
    public struct Axis: Hashable, Sendable { public let start: Int, step: Int, count: Int, squeezed: Bool }

    /// Resolves the slice against `shape` (Python `slice.indices` rules), or nil when the arrays do
    /// not have one entry per axis or a stride is 0 or Int.min. A count may be 0 (empty slice).
    public func resolve(_ shape: [Int]) -> [Axis]? {
        let r = shape.count
        func mask(_ m: [Bool], _ d: Int) -> Bool { m.isEmpty ? false : m[d] }
        guard begin.count == r, end.count == r, stride.count == r,
              [beginMask, endMask, squeezeMask].allSatisfy({ $0.isEmpty || $0.count == r }),
              stride.allSatisfy({ $0 != 0 && $0 != Int.min }) else { return nil }
        return (0..<r).map { d in
            let n = shape[d]
            if mask(squeezeMask, d) {  // MIL: end = None, stride = +∞ → the element at begin
                var s = mask(beginMask, d) ? 0 : begin[d]
                if s < 0 { s = Swift.max(s + n, 0) }
                return Axis(start: s, step: 1, count: s < n ? 1 : 0, squeezed: true)
            }
            let step = stride[d]
            var start: Int, stop: Int
            if step > 0 {
                start = mask(beginMask, d) ? 0 : begin[d]
                stop = mask(endMask, d) ? n : end[d]
                if start < 0 { start = Swift.max(start + n, 0) } else if start > n { start = n }
                if stop < 0 { stop = Swift.max(stop + n, 0) } else if stop > n { stop = n }
                let span = stop - start
                return Axis(start: start, step: step, count: span > 0 ? (span - 1) / step + 1 : 0, squeezed: false)
            }
            start = mask(beginMask, d) ? n - 1 : begin[d]
            stop = mask(endMask, d) ? -1 : end[d]
            if start < 0 { start = Swift.max(start + n, -1) } else if start >= n { start = n - 1 }
            if mask(endMask, d) { stop = -1 } else if stop < 0 { stop = Swift.max(stop + n, -1) } else if stop >= n { stop = n - 1 }
            let span = start - stop
            return Axis(start: start, step: step, count: span > 0 ? (span - 1) / (-step) + 1 : 0, squeezed: false)
        }
    }
}

/// Definition of `Op.sliceByIndex`. MIL `slice_by_index`, ONNX `Slice` (+ `Squeeze`).
enum SliceByIndexDefinition: OpDefinition {
    static let kind = OpKind.sliceByIndex
    static let summary = "strided NumPy slice with begin/end/squeeze masks"
    static let milOps = ["slice_by_index"]
    static let onnxOps = ["Slice"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .sliceByIndex(a) = op else { return [:] }
        let bools = { (v: [Bool]) in AttributeValue.list(v.map { .bool($0) }) }
        return ["begin": .ints(a.begin), "end": .ints(a.end), "stride": .ints(a.stride),
                "begin_mask": bools(a.beginMask), "end_mask": bools(a.endMask), "squeeze_mask": bools(a.squeezeMask)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op {
        func bools(_ name: String) throws -> [Bool] {
            guard case let .list(items)? = a.values[name] else { throw a.mismatch(name, expected: "an array of booleans", found: a.values[name]) }
            return try items.map {
                guard case let .bool(b) = $0 else { throw a.mismatch(name, expected: "an array of booleans", found: $0) }
                return b
            }
        }
        return .sliceByIndex(SliceByIndexAttributes(begin: try a.ints("begin"), end: try a.ints("end"), stride: try a.ints("stride"),
                                                    beginMask: try bools("begin_mask"), endMask: try bools("end_mask"),
                                                    squeezeMask: try bools("squeeze_mask")))
    }
    static func checkAttributes(of node: Node) throws {
        guard case let .sliceByIndex(a) = node.op else { return }
        for (v, n) in [(a.begin.count, "begin"), (a.end.count, "end"), (a.stride.count, "stride"), (a.beginMask.count, "beginMask"),
                       (a.endMask.count, "endMask"), (a.squeezeMask.count, "squeezeMask")] where v > Node.maxRank {
            throw node.fail("\(n) has \(v) entries (at most \(Node.maxRank))")
        }
        guard a.stride.allSatisfy({ $0 != 0 && $0 != Int.min }) else { throw node.fail("strides \(a.stride) must be non-zero") }
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .sliceByIndex(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        guard let axes = a.resolve(ins[0].shape) else {
            throw node.fail("begin, end, stride (and non-empty masks) need one entry per axis of \(formatShape(ins[0].shape))")
        }
        for (d, ax) in axes.enumerated() where ax.count == 0 {
            throw node.fail("the slice of axis \(d) (size \(ins[0].shape[d])) is empty")
        }
        let out = axes.filter { !$0.squeezed }.map(\.count)
        return [TensorType(out, ins[0].elementType)]
    }
}

// MARK: - sliceBySize

/// Definition of `Op.sliceBySize`. MIL `slice_by_size`, ONNX `Slice`.
enum SliceBySizeDefinition: OpDefinition {
    static let kind = OpKind.sliceBySize
    static let summary = "slice of given begin and size per axis (size -1: to the end)"
    static let milOps = ["slice_by_size"]
    static let onnxOps = ["Slice"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .sliceBySize(b, s) = op else { return [:] }
        return ["begin": .ints(b), "size": .ints(s)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .sliceBySize(begin: try a.ints("begin"), size: try a.ints("size")) }
    static func checkAttributes(of node: Node) throws {
        guard case let .sliceBySize(b, s) = node.op else { return }
        guard b.count <= Node.maxRank, s.count <= Node.maxRank else { throw node.fail("begin/size have more than \(Node.maxRank) entries") }
    }

    /// First index per axis (negative begins resolved).
    static func starts(_ node: Node, begin: [Int], size: [Int], shape: [Int]) throws -> (starts: [Int], sizes: [Int]) {
        guard begin.count == shape.count, size.count == shape.count else {
            throw node.fail("begin \(begin) and size \(size) need one entry per axis of \(formatShape(shape))")
        }
        var starts: [Int] = [], sizes: [Int] = []
        for d in shape.indices {
            let n = shape[d]
            guard begin[d] >= -n, begin[d] < n else { throw node.fail("begin \(begin[d]) is out of range for axis \(d) of size \(n)") }
            let s0 = begin[d] < 0 ? begin[d] + n : begin[d]
            let len = size[d] == -1 ? n - s0 : size[d]
            guard len >= 1, len <= n - s0 else { throw node.fail("size \(size[d]) from \(s0) does not fit axis \(d) of size \(n)") }
            starts.append(s0); sizes.append(len)
        }
        return (starts, sizes)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .sliceBySize(b, s) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        return [TensorType(try starts(node, begin: b, size: s, shape: ins[0].shape).sizes, ins[0].elementType)]
    }
}

// MARK: - tile

/// Definition of `Op.tile(reps:)`. MIL `tile`, ONNX `Tile`.
enum TileDefinition: OpDefinition {
    static let kind = OpKind.tile
    static let summary = "repeats the tensor along each axis (NumPy tile)"
    static let milOps = ["tile"]
    static let onnxOps = ["Tile"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .tile(reps) = op else { return [:] }
        return ["reps": .ints(reps)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .tile(reps: try a.ints("reps")) }
    static func checkAttributes(of node: Node) throws {
        guard case let .tile(reps) = node.op else { return }
        guard !reps.isEmpty, reps.count <= Node.maxRank, reps.allSatisfy({ $0 >= 1 && $0 <= Node.maxCountAttribute }) else {
            throw node.fail("reps must be 1…\(Node.maxRank) integers in 1…\(Node.maxCountAttribute), found \(reps)")
        }
    }

    /// The input shape and reps, both padded with leading 1s to the output rank.
    static func padded(_ shape: [Int], _ reps: [Int]) -> (shape: [Int], reps: [Int]) {
        let r = Swift.max(shape.count, reps.count)
        return (Array(repeating: 1, count: r - shape.count) + shape, Array(repeating: 1, count: r - reps.count) + reps)
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .tile(reps) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        let (s, r) = padded(ins[0].shape, reps)
        var out: [Int] = []
        for (d, k) in zip(s, r) {
            let (p, o) = d.multipliedReportingOverflow(by: k)  // d ≤ 2^40, k ≤ 2^24
            guard !o else { throw node.fail("tiled size overflows") }
            out.append(p)
        }
        return [TensorType(out, ins[0].elementType)]
    }
}

// MARK: - bandPart

/// Definition of `Op.bandPart`. MIL `band_part`, TF `linalg.band_part`, ONNX `Trilu` (one side).
enum BandPartDefinition: OpDefinition {
    static let kind = OpKind.bandPart
    static let summary = "keeps a band around the diagonal of the last two axes, zeros elsewhere"
    static let milOps = ["band_part"]
    static let onnxOps = ["Trilu"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .bandPart(l, u) = op else { return [:] }
        return ["lower": .int(l), "upper": .int(u)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op { .bandPart(lower: try a.int("lower"), upper: try a.int("upper")) }
    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        try node.expectInputs(ins, 1)
        guard ins[0].rank >= 2 else { throw node.fail("expects rank ≥ 2, found \(formatShape(ins[0].shape))") }
        return [ins[0]]
    }
}

// MARK: - cumsum

/// `Op.cumsum` (MIL `cumsum`): y[i] = Σ x[j] over j ≤ i along `axis` (j < i when `exclusive`;
/// j ≥ i, resp. j > i, when `reverse`).
public struct CumsumAttributes: Codable, Hashable, Sendable {
    /// Negative allowed.
    public var axis: Int
    public var exclusive: Bool
    public var reverse: Bool
    public init(axis: Int, exclusive: Bool = false, reverse: Bool = false) { self.axis = axis; self.exclusive = exclusive; self.reverse = reverse }
}

/// Definition of `Op.cumsum`. MIL `cumsum`, ONNX `CumSum`.
enum CumsumDefinition: OpDefinition {
    static let kind = OpKind.cumsum
    static let summary = "cumulative sum along an axis (exclusive, reverse)"
    static let milOps = ["cumsum"]
    static let onnxOps = ["CumSum"]

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .cumsum(a) = op else { return [:] }
        return ["axis": .int(a.axis), "exclusive": .bool(a.exclusive), "reverse": .bool(a.reverse)]
    }
    static func decodeOp(from a: AttributeReader) throws -> Op {
        .cumsum(CumsumAttributes(axis: try a.int("axis"), exclusive: try a.bool("exclusive"), reverse: try a.bool("reverse")))
    }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        guard case let .cumsum(a) = node.op else { return [] }
        try node.expectInputs(ins, 1)
        _ = try node.resolveAxis(a.axis, rank: ins[0].rank)
        return [ins[0]]
    }
}
