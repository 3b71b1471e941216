// Core ML tree ensembles (TreeEnsemble.proto): every tree adds the evaluation values of the leaf
// a feature vector reaches to the base prediction; a post-evaluation transform follows. The
// nodes are compiled at load into a validated flat arena and a whole batch is walked at once.
import CoreMLFormat
import Foundation

/// `TreeEnsembleParameters` (plus the post-evaluation transform of its classifier/regressor).
public struct TreeEnsembleParameters: Equatable, Sendable {
    /// `TreeNode.TreeNodeBehavior`. A branch compares feature `featureIndex` (0-based in the
    /// feature vector) with `threshold` and goes to the true child when the comparison holds.
    public enum Behavior: Equatable, Sendable {
        case lessThanEqual, lessThan, greaterThanEqual, greaterThan, equal, notEqual, leaf
    }
    /// `TreeEnsemblePostEvaluationTransform`.
    public enum Transform: Equatable, Sendable {
        /// The summed values themselves.
        case none
        /// softmax over all dimensions.
        case softmax
        /// 1 / (1 + e^(−v)) on every dimension.
        case logistic
        /// softmax in which class 0 is the reference with score 0: with one dimension v,
        /// (1 − σ(v), σ(v)) → the dimension becomes σ(v); with d ≥ 2 dimensions, dimension 0 is
        /// replaced by 0 before the softmax.
        case softmaxWithZeroClassReference
    }
    public struct Evaluation: Equatable, Sendable {
        public var index: UInt64
        public var value: Double
        public init(index: UInt64, value: Double) { self.index = index; self.value = value }
    }
    public struct Node: Equatable, Sendable {
        public var treeId: UInt64
        public var nodeId: UInt64
        public var behavior: Behavior
        public var featureIndex: UInt64
        public var threshold: Double
        public var trueChild: UInt64
        public var falseChild: UInt64
        /// A NaN feature value follows the true child (else the false child).
        public var missingTracksTrue: Bool
        /// Leaf values: `value` is added to prediction dimension `index`.
        public var evaluation: [Evaluation]

        public init(treeId: UInt64, nodeId: UInt64, behavior: Behavior, featureIndex: UInt64 = 0,
                    threshold: Double = 0, trueChild: UInt64 = 0, falseChild: UInt64 = 0,
                    missingTracksTrue: Bool = false, evaluation: [Evaluation] = []) {
            self.treeId = treeId
            self.nodeId = nodeId
            self.behavior = behavior
            self.featureIndex = featureIndex
            self.threshold = threshold
            self.trueChild = trueChild
            self.falseChild = falseChild
            self.missingTracksTrue = missingTracksTrue
            self.evaluation = evaluation
        }
        /// A leaf adding `values[i]` to dimension i.
        public static func leaf(tree: UInt64, id: UInt64, _ values: [Double]) -> Node {
            Node(treeId: tree, nodeId: id, behavior: .leaf,
                 evaluation: values.enumerated().map { Evaluation(index: UInt64($0.offset), value: $0.element) })
        }
        /// A branch.
        public static func branch(tree: UInt64, id: UInt64, _ behavior: Behavior, feature: UInt64, _ threshold: Double,
                                  true t: UInt64, false f: UInt64, missingTrue: Bool = false) -> Node {
            Node(treeId: tree, nodeId: id, behavior: behavior, featureIndex: feature, threshold: threshold,
                 trueChild: t, falseChild: f, missingTracksTrue: missingTrue)
        }
    }

    public var nodes: [Node]
    public var numPredictionDimensions: UInt64
    /// Empty (zeros) or one value per dimension.
    public var basePrediction: [Double]
    public var transform: Transform

    public init(nodes: [Node], numPredictionDimensions: UInt64, basePrediction: [Double] = [], transform: Transform = .none) {
        self.nodes = nodes
        self.numPredictionDimensions = numPredictionDimensions
        self.basePrediction = basePrediction
        self.transform = transform
    }
}

/// A validated tree ensemble in flat arrays (one entry per node, trees in ascending tree id,
/// each tree's nodes in file order), evaluated for a whole batch at once.
///
/// Validation (as Core ML's tree-ensemble construction): node (tree, id) pairs are unique; every
/// child id exists in the same tree and is not the node itself; a node has at most one parent;
/// each tree has exactly one root and every node is reachable from it (so walks are acyclic and
/// at most `nodeCount` steps long); leaves have ≥ 1 evaluation value, indices
/// < `numPredictionDimensions`, no index twice; feature indices < the input width;
/// `basePrediction` is empty or has `numPredictionDimensions` values.
public struct TreeEnsembleArena: Sendable {
    static let leafMode: UInt8 = 255
    /// Feature index per branch node.
    let feature: [Int32]
    let threshold: [Double]
    /// Behavior code 0…5 (TreeNodeBehavior raw values), `leafMode` for leaves.
    let mode: [UInt8]
    let missingTrue: [Bool]
    /// Branches: child arena indices. Leaves: `left` = first, `right` = end of their evaluation range.
    let left: [Int32]
    let right: [Int32]
    let evalIndex: [Int32]
    let evalValue: [Double]
    /// Arena index of each tree's root, in ascending tree id.
    public let roots: [Int32]
    public let dimensions: Int
    public let base: [Double]
    public let transform: TreeEnsembleParameters.Transform
    /// The smallest feature-vector width every branch can read (max feature index + 1).
    public let minimumWidth: Int
    public var nodeCount: Int { mode.count }

    /// - Parameter inputWidth: the described feature-vector width, when known.
    /// - Throws: `FeatureError.invalidModel` naming the tree and node id of the first violation.
    public init(_ p: TreeEnsembleParameters, inputWidth: Int?, model: String) throws {
        func bad(_ r: String) -> FeatureError { .invalidModel(model: model, reason: r) }
        guard let dims = Int(exactly: p.numPredictionDimensions), dims > 0, dims <= 1 << 24 else {
            throw bad("numPredictionDimensions is \(p.numPredictionDimensions); it must be between 1 and \(1 << 24)")
        }
        guard p.nodes.count < Int(Int32.max) else { throw bad("\(p.nodes.count) tree nodes is too many") }
        if p.basePrediction.isEmpty {
            base = [Double](repeating: 0, count: dims)
        } else if p.basePrediction.count == dims {
            base = p.basePrediction
        } else {
            throw bad("basePredictionValue has \(p.basePrediction.count) values for \(dims) prediction dimensions")
        }
        dimensions = dims
        transform = p.transform

        // Arena order: trees by ascending id (stable: file order within a tree).
        let order = p.nodes.indices.sorted { (p.nodes[$0].treeId, $0) < (p.nodes[$1].treeId, $1) }
        struct Key: Hashable { let tree: UInt64; let node: UInt64 }
        var slot: [Key: Int32] = [:]
        slot.reserveCapacity(p.nodes.count)
        for (a, i) in order.enumerated() {
            let n = p.nodes[i]
            if slot.updateValue(Int32(a), forKey: Key(tree: n.treeId, node: n.nodeId)) != nil {
                throw bad("tree \(n.treeId) node \(n.nodeId) is declared twice")
            }
        }
        let count = order.count
        var feature = [Int32](repeating: 0, count: count)
        var threshold = [Double](repeating: 0, count: count)
        var mode = [UInt8](repeating: Self.leafMode, count: count)
        var missingTrue = [Bool](repeating: false, count: count)
        var left = [Int32](repeating: 0, count: count)
        var right = [Int32](repeating: 0, count: count)
        var parent = [Int32](repeating: -1, count: count)
        var evalIndex: [Int32] = []
        var evalValue: [Double] = []
        var maxFeature = -1
        for (a, i) in order.enumerated() {
            let n = p.nodes[i]
            let at = "tree \(n.treeId) node \(n.nodeId)"
            if n.behavior == .leaf {
                guard !n.evaluation.isEmpty else { throw bad("\(at) is a leaf without evaluation values") }
                left[a] = Int32(evalIndex.count)
                var seen = Set<UInt64>()
                for e in n.evaluation {
                    guard e.index < UInt64(dims) else {
                        throw bad("\(at) adds to prediction dimension \(e.index), but there are \(dims) (numPredictionDimensions)")
                    }
                    guard seen.insert(e.index).inserted else { throw bad("\(at) adds to prediction dimension \(e.index) twice") }
                    evalIndex.append(Int32(e.index))
                    evalValue.append(e.value)
                }
                guard evalIndex.count < Int(Int32.max) else { throw bad("too many leaf evaluation values") }
                right[a] = Int32(evalIndex.count)
                continue
            }
            switch n.behavior {
            case .lessThanEqual: mode[a] = 0
            case .lessThan: mode[a] = 1
            case .greaterThanEqual: mode[a] = 2
            case .greaterThan: mode[a] = 3
            case .equal: mode[a] = 4
            case .notEqual: mode[a] = 5
            case .leaf: break
            }
            guard let f = Int(exactly: n.featureIndex), f < Int(Int32.max) else {
                throw bad("\(at) branches on feature \(n.featureIndex), which is out of range")
            }
            if let inputWidth, f >= inputWidth {
                throw bad("\(at) branches on feature \(f), but the inputs describe \(inputWidth) features")
            }
            maxFeature = max(maxFeature, f)
            feature[a] = Int32(f)
            threshold[a] = n.threshold
            missingTrue[a] = n.missingTracksTrue
            for (which, id) in [("true", n.trueChild), ("false", n.falseChild)] {
                guard let c = slot[Key(tree: n.treeId, node: id)] else {
                    throw bad("\(at): its \(which) child node \(id) does not exist in tree \(n.treeId)")
                }
                guard c != Int32(a) else { throw bad("\(at) is its own \(which) child") }
                guard parent[Int(c)] < 0 else {
                    throw bad("\(at): its \(which) child node \(id) already has a parent (a node may have one)")
                }
                parent[Int(c)] = Int32(a)
                if which == "true" { left[a] = c } else { right[a] = c }
            }
        }
        // One root per tree; every node of the tree reachable from it (no cycles, no islands).
        var roots: [Int32] = []
        var start = 0
        while start < count {
            let tree = p.nodes[order[start]].treeId
            var end = start
            while end < count && p.nodes[order[end]].treeId == tree { end += 1 }
            let treeRoots = (start..<end).filter { parent[$0] < 0 }
            guard treeRoots.count == 1 else {
                if treeRoots.isEmpty { throw bad("tree \(tree) has no root node (its nodes form a cycle)") }
                let ids = treeRoots.prefix(5).map { String(p.nodes[order[$0]].nodeId) }.joined(separator: ", ")
                throw bad("tree \(tree) has \(treeRoots.count) root nodes (nodes \(ids)); a tree has one")
            }
            // Walk from the root; with one parent per node this visits each node at most once.
            var reached = 0
            var stack = [treeRoots[0]]
            while let n = stack.popLast() {
                reached += 1
                guard reached <= end - start else { break }
                if mode[n] != Self.leafMode { stack.append(Int(left[n])); stack.append(Int(right[n])) }
            }
            guard reached == end - start else {
                let unreached = (start..<end).first { i in
                    var k = i, steps = 0
                    while parent[k] >= 0 && steps <= end - start { k = Int(parent[k]); steps += 1 }
                    return k != treeRoots[0]
                } ?? start
                throw bad("tree \(tree) node \(p.nodes[order[unreached]].nodeId) is not reachable from the root (nodes form a cycle)")
            }
            roots.append(Int32(treeRoots[0]))
            start = end
        }
        self.feature = feature
        self.threshold = threshold
        self.mode = mode
        self.missingTrue = missingTrue
        self.left = left
        self.right = right
        self.evalIndex = evalIndex
        self.evalValue = evalValue
        self.roots = roots
        minimumWidth = maxFeature + 1
    }

    /// The raw sums (base + every tree's leaf values, trees in ascending id), `rows × dimensions`
    /// row-major, for the feature vectors `x` (`rows × width` row-major), before the transform.
    public func rawScores(_ x: [Double], rows: Int, width: Int) -> [Double] {
        var out = [Double](repeating: 0, count: rows * dimensions)
        for r in 0..<rows { for d in 0..<dimensions { out[r * dimensions + d] = base[d] } }
        guard rows > 0 else { return out }
        x.withUnsafeBufferPointer { xp in
        feature.withUnsafeBufferPointer { fp in
        threshold.withUnsafeBufferPointer { tp in
        mode.withUnsafeBufferPointer { mp in
        missingTrue.withUnsafeBufferPointer { np in
        left.withUnsafeBufferPointer { lp in
        right.withUnsafeBufferPointer { rp in
        evalIndex.withUnsafeBufferPointer { ep in
        evalValue.withUnsafeBufferPointer { vp in
        out.withUnsafeMutableBufferPointer { op in
            for root in roots {
                for r in 0..<rows {
                    let xo = r * width
                    var n = Int(root)
                    while true {
                        let m = mp[n]
                        if m == Self.leafMode { break }
                        let v = xp[xo + Int(fp[n])]
                        let t = tp[n]
                        let go: Bool
                        if v.isNaN {
                            go = np[n]
                        } else {
                            switch m {
                            case 0: go = v <= t
                            case 1: go = v < t
                            case 2: go = v >= t
                            case 3: go = v > t
                            case 4: go = v == t
                            default: go = v != t
                            }
                        }
                        n = Int(go ? lp[n] : rp[n])
                    }
                    let oo = r * dimensions
                    for e in Int(lp[n])..<Int(rp[n]) { op[oo + Int(ep[e])] += vp[e] }
                }
            }
        }}}}}}}}}}
        return out
    }

    /// Applies the post-evaluation transform to every row of `scores` in place.
    public func applyTransform(_ scores: inout [Double], rows: Int) {
        let d = dimensions
        switch transform {
        case .none: return
        case .logistic:
            for i in scores.indices { scores[i] = NumericMath.logistic(scores[i]) }
        case .softmax:
            for r in 0..<rows { NumericMath.softmax(&scores, r * d..<(r + 1) * d) }
        case .softmaxWithZeroClassReference:
            if d == 1 {
                for i in scores.indices { scores[i] = NumericMath.logistic(scores[i]) }
            } else {
                for r in 0..<rows { scores[r * d] = 0; NumericMath.softmax(&scores, r * d..<(r + 1) * d) }
            }
        }
    }

    /// Transformed scores of a batch, `rows × dimensions`.
    public func scores(_ x: [Double], rows: Int, width: Int) -> [Double] {
        var s = rawScores(x, rows: rows, width: width)
        applyTransform(&s, rows: rows)
        return s
    }
}

/// A runnable `treeEnsembleRegressor`: the transformed sums as the output's declared type
/// (one dimension → Double, several → multiArray).
public struct TreeEnsembleRegressorModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    public let arena: TreeEnsembleArena

    public init(_ p: TreeEnsembleParameters, signature: FeatureSignature) throws {
        self.signature = signature
        modelDescription = signature.description
        arena = try TreeEnsembleArena(p, inputWidth: signature.numericWidth, model: signature.modelName)
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try predictions(from: [inputs])[0]
    }

    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let (x, width) = try signature.featureMatrix(from: batch, minimumWidth: arena.minimumWidth)
        let s = arena.scores(x, rows: batch.count, width: width)
        let d = arena.dimensions
        let out = signature.regressionOutput
        let name = signature.regressionOutputName
        return (0..<batch.count).map { r in [name: signature.regressionValue(Array(s[r * d..<(r + 1) * d]), for: out)] }
    }
}

/// A runnable `treeEnsembleClassifier`.
///
/// Classes: the class labels; without labels Core ML numbers them 0…d−1 (0, 1 for one dimension).
/// With d ≥ 2 dimensions (one per class) the transformed scores are the class probabilities and
/// the label is the first largest. With one dimension and two classes the transformed value v is
/// P(class 1): probabilities (1 − v, v), label class 1 when v ≥ 0.5. The ≥ follows from
/// coremltools' scikit-learn tree converter, which lowers leaf probabilities of exactly 0.5 by
/// 1e-7 so that Core ML picks class 0 where scikit-learn's argmax does — Core ML would otherwise
/// pick class 1 at 0.5.
///
/// Probabilities are the transformed sums as they are: coremltools writes a multiclass random
/// forest's leaf probabilities unscaled, so with `NoTransform` Core ML returns the sum over trees
/// (coremltools issue #1541), and so does mlconv.
public struct TreeEnsembleClassifierModel: FeatureModel {
    public let modelDescription: Spec.ModelDescription
    let signature: FeatureSignature
    public let arena: TreeEnsembleArena
    public let labels: ClassLabels

    /// - Parameter labels: `nil` when the model has no class labels (Core ML numbers the classes).
    /// - Throws: `FeatureError.invalidModel` for an invalid arena or a class count that matches
    ///   neither d (d ≥ 2) nor 2 (d = 1).
    public init(_ p: TreeEnsembleParameters, labels: ClassLabels?, signature: FeatureSignature) throws {
        self.signature = signature
        modelDescription = signature.description
        arena = try TreeEnsembleArena(p, inputWidth: signature.numericWidth, model: signature.modelName)
        let d = arena.dimensions
        let l = labels ?? .int64s(d == 1 ? [0, 1] : (0..<d).map { Int64($0) })
        guard (d == 1 && l.count == 2) || (d >= 2 && l.count == d) else {
            throw FeatureError.invalidModel(model: signature.modelName,
                                            reason: "\(l.count) class labels for \(d) prediction dimensions (need 2 labels for 1 dimension, else one per dimension)")
        }
        self.labels = l
    }

    public func prediction(from inputs: FeatureProvider) throws -> FeatureProvider {
        try predictions(from: [inputs])[0]
    }

    public func predictions(from batch: [FeatureProvider]) throws -> [FeatureProvider] {
        let (x, width) = try signature.featureMatrix(from: batch, minimumWidth: arena.minimumWidth)
        let s = arena.scores(x, rows: batch.count, width: width)
        let d = arena.dimensions
        var out: [FeatureProvider] = []
        out.reserveCapacity(batch.count)
        for r in 0..<batch.count {
            if d == 1 {
                let v = s[r]
                out.append(try signature.classifierOutputs(labels: labels, scores: [1 - v, v], winner: v >= 0.5 ? 1 : 0))
            } else {
                out.append(try signature.classifierOutputs(labels: labels, scores: Array(s[r * d..<(r + 1) * d])))
            }
        }
        return out
    }
}

enum TreeEnsembleFamily {
    /// Rows of `CoreMLModelLoader.table`: `treeEnsembleRegressor`, `treeEnsembleClassifier`.
    static let register: @Sendable (inout [Spec.ModelKind: CoreMLModelLoader.Loader]) -> Void = { t in
        t[.treeEnsembleRegressor] = { spec, ctx in
            guard case let .treeEnsembleRegressor(r) = try CoreMLModelLoader.classical(spec, ctx, .treeEnsembleRegressor) else {
                throw FeatureError.invalidModel(model: ctx.name, reason: "not a treeEnsembleRegressor")
            }
            return try TreeEnsembleRegressorModel(parameters(r.treeEnsemble, r.postEvaluationTransform, ctx),
                                                  signature: FeatureSignature(modelName: ctx.name, description: spec.description))
        }
        t[.treeEnsembleClassifier] = { spec, ctx in
            guard case let .treeEnsembleClassifier(c) = try CoreMLModelLoader.classical(spec, ctx, .treeEnsembleClassifier) else {
                throw FeatureError.invalidModel(model: ctx.name, reason: "not a treeEnsembleClassifier")
            }
            let labels: ClassLabels?
            switch c.classLabels {
            case let .stringClassLabels(s)?: labels = .strings(s.vector)
            case let .int64ClassLabels(s)?: labels = .int64s(s.vector)
            case nil: labels = nil
            }
            return try TreeEnsembleClassifierModel(parameters(c.treeEnsemble, c.postEvaluationTransform, ctx), labels: labels,
                                                   signature: FeatureSignature(modelName: ctx.name, description: spec.description))
        }
    }

    /// Spec → `TreeEnsembleParameters`; unknown enum values are `FeatureError.invalidModel`.
    static func parameters(_ te: Spec.TreeEnsembleParameters?, _ transform: Spec.TreeEnsemblePostEvaluationTransform,
                           _ ctx: ModelLoadContext) throws -> TreeEnsembleParameters {
        guard let te else { throw FeatureError.invalidModel(model: ctx.name, reason: "the tree ensemble has no treeEnsemble parameters") }
        let t: TreeEnsembleParameters.Transform
        switch transform {
        case .noTransform: t = .none
        case .classificationSoftMax: t = .softmax
        case .regressionLogistic: t = .logistic
        case .classificationSoftMaxWithZeroClassReference: t = .softmaxWithZeroClassReference
        default: throw FeatureError.invalidModel(model: ctx.name, reason: "unknown postEvaluationTransform \(transform.rawValue)")
        }
        typealias B = Spec.TreeEnsembleParameters.TreeNode.TreeNodeBehavior
        let behaviors: [B: TreeEnsembleParameters.Behavior] = [
            .branchOnValueLessThanEqual: .lessThanEqual, .branchOnValueLessThan: .lessThan,
            .branchOnValueGreaterThanEqual: .greaterThanEqual, .branchOnValueGreaterThan: .greaterThan,
            .branchOnValueEqual: .equal, .branchOnValueNotEqual: .notEqual, .leafNode: .leaf]
        let nodes = try te.nodes.map { n -> TreeEnsembleParameters.Node in
            guard let b = behaviors[n.nodeBehavior] else {
                throw FeatureError.invalidModel(model: ctx.name, reason: "tree \(n.treeId) node \(n.nodeId) has unknown nodeBehavior \(n.nodeBehavior.rawValue)")
            }
            return .init(treeId: n.treeId, nodeId: n.nodeId, behavior: b, featureIndex: n.branchFeatureIndex,
                         threshold: n.branchFeatureValue, trueChild: n.trueChildNodeId, falseChild: n.falseChildNodeId,
                         missingTracksTrue: n.missingValueTracksTrueChild,
                         evaluation: n.evaluationInfo.map { .init(index: $0.evaluationIndex, value: $0.evaluationValue) })
        }
        return TreeEnsembleParameters(nodes: nodes, numPredictionDimensions: te.numPredictionDimensions,
                                      basePrediction: te.basePredictionValue, transform: t)
    }
}
