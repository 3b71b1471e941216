// Definition of einsum (issue 9): MIL `einsum` (defs/iOS15/linear.py), which accepts a fixed set
// of equations; the IR takes the general form for one or two operands without ellipsis.

/// A parsed einsum equation: each operand's axis labels and the output's, labels numbered by
/// first appearance (0…count−1).
public struct EinsumEquation: Hashable, Sendable {
    /// Labels of each operand's axes, in axis order (a label repeated in one operand: its diagonal).
    public var operands: [[Int]]
    /// Labels of the output's axes, in axis order (distinct; each appears in some operand).
    public var output: [Int]
    /// Number of distinct labels.
    public var labelCount: Int

    public init(operands: [[Int]], output: [Int], labelCount: Int) {
        self.operands = operands; self.output = output; self.labelCount = labelCount
    }

    /// Longest equation accepted (characters).
    public static let maxLength = 256

    /// Parses `equation`: one or two comma-separated operand terms of letters (a–z, A–Z), then
    /// optionally "->" and the output term. Spaces are ignored. Without "->" the output is every
    /// letter used exactly once, in ASCII order (NumPy's implicit mode).
    /// - Returns: the equation, or the reason it is not one (never traps, whatever the string).
    public static func parse(_ equation: String) -> Result<EinsumEquation, EinsumSyntaxError> {
        let chars = Array(equation.unicodeScalars.filter { $0 != " " })
        guard equation.unicodeScalars.count <= maxLength else { return .failure(.init("is longer than \(maxLength) characters")) }
        func isLetter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) }
        // Split at the arrow.
        var lhs: [Unicode.Scalar] = [], rhs: [Unicode.Scalar]? = nil
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "-" {
                guard i + 1 < chars.count, chars[i + 1] == ">" else { return .failure(.init("has '-' not followed by '>'")) }
                guard rhs == nil else { return .failure(.init("has more than one '->'")) }
                rhs = []
                i += 2
                continue
            }
            if c == "." { return .failure(.init("uses an ellipsis ('...'), which is not supported; name every axis with a letter")) }
            guard isLetter(c) || (c == "," && rhs == nil) else {
                return .failure(.init(c == "," ? "has ',' in the output term" : "has the character '\(c)' (only letters a–z, A–Z, ',' and '->' are allowed)"))
            }
            if rhs != nil { rhs?.append(c) } else { lhs.append(c) }
            i += 1
        }
        let terms = lhs.split(separator: ",", omittingEmptySubsequences: false).map(Array.init)
        guard terms.count <= 2 else { return .failure(.init("has \(terms.count) operands (at most 2 are supported)")) }
        for (k, t) in terms.enumerated() where t.isEmpty {
            return .failure(.init("has an empty term for operand \(k) (a scalar operand, which the IR does not support)"))
        }
        for (k, t) in terms.enumerated() where t.count > Node.maxRank {
            return .failure(.init("gives operand \(k) \(t.count) axes (at most \(Node.maxRank))"))
        }
        var labels: [Unicode.Scalar: Int] = [:], order: [Unicode.Scalar] = []
        for t in terms { for c in t where labels[c] == nil { labels[c] = order.count; order.append(c) } }
        let outChars: [Unicode.Scalar]
        if let rhs {
            var seen = Set<Unicode.Scalar>()
            for c in rhs {
                guard labels[c] != nil else { return .failure(.init("has output label '\(c)', which no operand uses")) }
                guard seen.insert(c).inserted else { return .failure(.init("repeats output label '\(c)'")) }
            }
            outChars = rhs
        } else {
            var counts: [Unicode.Scalar: Int] = [:]
            for t in terms { for c in t { counts[c, default: 0] += 1 } }
            outChars = order.filter { counts[$0] == 1 }.sorted { $0.value < $1.value }
        }
        guard !outChars.isEmpty else {
            return .failure(.init("has an empty output (a scalar, which the IR does not support); keep an axis of size 1 instead"))
        }
        guard outChars.count <= Node.maxRank else { return .failure(.init("gives the output \(outChars.count) axes (at most \(Node.maxRank))")) }
        return .success(EinsumEquation(operands: terms.map { $0.compactMap { labels[$0] } }, output: outChars.compactMap { labels[$0] },
                                       labelCount: order.count))
    }

    /// The size of each label for operands of `shapes` (one per operand, ranks already matching),
    /// or nil with the first conflicting label's index when two axes with one label differ.
    public func labelSizes(_ shapes: [[Int]]) -> Result<[Int], EinsumSizeConflict> {
        var sizes = [Int](repeating: 0, count: labelCount)
        for (labels, shape) in zip(operands, shapes) {
            for (l, d) in zip(labels, shape) {
                if sizes[l] == 0 { sizes[l] = d } else if sizes[l] != d {
                    return .failure(EinsumSizeConflict(label: l, sizes: [sizes[l], d]))
                }
            }
        }
        return .success(sizes)
    }
}

/// Why a string is not an einsum equation the IR accepts.
public struct EinsumSyntaxError: Error, Hashable, Sendable {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Two axes with one label but different sizes.
public struct EinsumSizeConflict: Error, Hashable, Sendable {
    public var label: Int
    public var sizes: [Int]
}

enum EinsumDefinition: OpDefinition {
    static let kind = OpKind.einsum
    static let summary = "Einstein summation of one or two float32 operands (explicit or implicit output, no ellipsis)"
    static let milOps = ["einsum"]
    static let onnxOps = ["Einsum"]

    /// Largest iteration space (product of every label's size) the reference kernel walks.
    static let maxWork = TensorType.maxElementCount

    static func parsed(_ node: Node) throws -> EinsumEquation {
        guard case let .einsum(equation) = node.op else { throw node.fail("not an einsum") }
        switch EinsumEquation.parse(equation) {
        case let .success(e): return e
        case let .failure(e): throw node.fail("equation \"\(equation.prefix(80))\" \(e.reason)")
        }
    }

    static func checkAttributes(of node: Node) throws { _ = try parsed(node) }

    static func encodeAttributes(of op: Op) -> [String: AttributeValue] {
        guard case let .einsum(equation) = op else { return [:] }
        return ["equation": .string(equation)]
    }
    static func decodeOp(from r: AttributeReader) throws -> Op { .einsum(equation: try r.string("equation")) }

    static func inferOutputTypes(of node: Node, inputs ins: [TensorType]) throws -> [TensorType] {
        let e = try parsed(node)
        guard ins.count == e.operands.count else {
            throw node.fail("the equation names \(e.operands.count) operand(s), but the node has \(ins.count) input(s)")
        }
        for (k, t) in ins.enumerated() {
            try node.expectElementType(t, .float32, "input \(k)")
            guard t.rank == e.operands[k].count else {
                throw node.fail("input \(k) of shape \(formatShape(t.shape)) has rank \(t.rank), but the equation gives it \(e.operands[k].count) labels")
            }
        }
        let sizes: [Int]
        switch e.labelSizes(ins.map(\.shape)) {
        case let .success(s): sizes = s
        case let .failure(c): throw node.fail("one label names axes of sizes \(c.sizes[0]) and \(c.sizes[1]) (einsum does not broadcast)")
        }
        var work = 1
        for s in sizes {
            let (p, overflow) = work.multipliedReportingOverflow(by: s)
            guard !overflow, p <= maxWork else { throw node.fail("the summation visits more than 2^40 index combinations") }
            work = p
        }
        return [TensorType(e.output.map { sizes[$0] })]
    }
}
