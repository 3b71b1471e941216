// Graph verifier, layer 5: sizes (see GraphVerifier.Layer.sizes).
import Diagnostics

extension GraphVerifier {
    /// Element counts and byte sizes (checked arithmetic) of every tensor and weight; weight
    /// storage against shape and encoding; the memory limit.
    static func checkSizes(_ run: inout VerifierRun) throws {
        let g = run.graph
        let inferred = run.inferred()
        var largest: (bytes: Int, tensor: String, type: TensorType)?
        func measure(_ t: TensorType, tensor: String, node: Node?) throws {
            guard let count = checkedElementCount(t.shape),
                  case let (bytes, false) = count.multipliedReportingOverflow(by: t.elementType.byteSize) else {
                let m = "tensor '\(tensor)' (\(t)) has more than 2^40 elements" + (node.map { ", as node '\($0.name)' (\($0.op.name)) gives it" } ?? "")
                let expected = "at most 2^40 elements (TensorType.maxElementCount)"
                let found = "the product of \(formatShape(t.shape))"
                if let node { throw GraphVerificationFailure.at(.sizes, node: node, tensor: tensor, m, expected: expected, found: found) }
                throw GraphVerificationFailure.at(.sizes, tensor: tensor, m, expected: expected, found: found)
            }
            if t.isFullyKnown, bytes > largest?.bytes ?? -1 { largest = (bytes, tensor, t) }
        }
        for i in g.inputs { try measure(i.type, tensor: i.name, node: nil) }
        for node in g.nodes {
            for o in node.outputs {
                if let t = inferred.types[o], inferred.producer[o] != nil { try measure(t, tensor: o, node: node) }
            }
        }
        // Weights, each stored object once (a constant may be shared by several nodes).
        var seen = Set<ObjectIdentifier>()
        var resident = 0
        for node in g.allNodes {
            for key in node.weights.keys.sorted() {
                guard let w = node.weights[key], seen.insert(ObjectIdentifier(w)).inserted else { continue }
                let what = "weight '\(key)' of node '\(node.name)' (\(node.op.name))"
                guard let count = checkedElementCount(w.shape) else {
                    throw GraphVerificationFailure.at(.sizes, node: node, weight: key, "\(what) has shape \(formatShape(w.shape)), more than 2^40 elements",
                                                      expected: "at most 2^40 elements (TensorType.maxElementCount)", found: "the product of \(formatShape(w.shape))")
                }
                guard let need = checkedByteCount(w.encoding, elements: count) else {
                    throw GraphVerificationFailure.at(.sizes, node: node, weight: key, "\(what): the byte size of \(count) values in \(w.encoding) overflows",
                                                      expected: "a byte size below 2^63", found: "an overflowing size")
                }
                guard w.storage.count == need else {
                    throw GraphVerificationFailure.at(.sizes, node: node, weight: key,
                        "\(what): shape \(formatShape(w.shape)) in \(w.encoding) needs \(need) bytes, its storage holds \(w.storage.count)",
                        expected: "\(need) bytes", found: "\(w.storage.count) bytes")
                }
                if !w.storage.isBorrowed {
                    let (sum, o) = resident.addingReportingOverflow(w.storage.count)
                    resident = o ? Int.max : sum
                }
            }
        }
        // Inference stopped at a tensor or weight whose element count is unusable: named above;
        // this is a backstop.
        switch inferred.stop {
        case let .unusableInput(k, tensor)?:
            throw GraphVerificationFailure.at(.sizes, node: g.nodes[k], tensor: tensor,
                "node '\(g.nodes[k].name)' (\(g.nodes[k].op.name)) reads tensor '\(tensor)', whose type is unusable",
                expected: "a usable type", found: inferred.types[tensor]?.description ?? "none")
        case let .unusableWeight(k)?:
            throw GraphVerificationFailure.at(.sizes, node: g.nodes[k], "node '\(g.nodes[k].name)' (\(g.nodes[k].op.name)) has a weight of unusable shape",
                                              expected: "usable weight shapes", found: "an unusable one")
        case .ruleFailed?, .outputCount?, nil: break
        }
        let limit = MemoryLimit.current
        if let largest, largest.bytes > limit {
            let cause = MemoryLimitExceeded(file: nil, what: "tensor '\(largest.tensor)' (\(largest.type))", requestedBytes: largest.bytes, limitBytes: limit)
            throw GraphVerificationFailure.at(.sizes, tensor: largest.tensor,
                "tensor '\(largest.tensor)' (\(largest.type)) takes \(MemoryLimit.format(largest.bytes)), more than the memory limit of \(MemoryLimit.format(limit))",
                expected: "at most \(MemoryLimit.format(limit)) (--max-memory)", found: MemoryLimit.format(largest.bytes), cause: .memoryLimit(cause))
        }
        if resident > limit {
            let cause = MemoryLimitExceeded(file: nil, what: "the weights held in memory", requestedBytes: resident, limitBytes: limit)
            throw GraphVerificationFailure.at(.sizes, tensor: nil,
                "the weights held in memory take \(MemoryLimit.format(resident)), more than the memory limit of \(MemoryLimit.format(limit))",
                expected: "at most \(MemoryLimit.format(limit)) (--max-memory)", found: MemoryLimit.format(resident), cause: .memoryLimit(cause))
        }
    }

    /// Bytes that `count` values take in `encoding` (as `WeightEncoding.byteCount(forElements:)`,
    /// whose layouts are in CompressedWeights.swift), or nil on overflow. The encoding's fields
    /// were checked by the types layer.
    static func checkedByteCount(_ encoding: WeightEncoding, elements count: Int) -> Int? {
        func mul(_ a: Int, _ b: Int) -> Int? { let (p, o) = a.multipliedReportingOverflow(by: b); return o ? nil : p }
        func add(_ a: Int, _ b: Int) -> Int? { let (s, o) = a.addingReportingOverflow(b); return o ? nil : s }
        func codes(_ bits: Int) -> Int? { mul(count, bits).flatMap { add($0, 7) }.map { Swift.max(1, $0 / 8) } }
        func align4(_ n: Int) -> Int? { add(n, 3).map { $0 & ~3 } }
        func blocks(_ b: [Int]) -> Int? { b.reduce(Optional(1)) { acc, d in acc.flatMap { mul($0, d) } } }
        switch encoding {
        case .float32: return mul(count, 4)
        case .float16: return mul(count, 2)
        case let .linear(q): return codes(q.bits)
        case let .lookupTable(q): return codes(q.bits)
        case let .blockwise(q):
            guard let c = codes(q.bits).flatMap(align4), let b = blocks(q.blocks), let p = mul(b, q.hasZeroPoint ? 8 : 4) else { return nil }
            return add(c, p)
        case let .palettized(q):
            guard let c = codes(q.bits).flatMap(align4), let b = blocks(q.blocks), let p = mul(b, 4 << q.bits) else { return nil }
            return add(c, p)
        case let .sparse(s):
            guard let mask = mul(count, 1).flatMap({ add($0, 7) }).map({ Swift.max(1, $0 / 8) }).flatMap(align4),
                  let values = checkedByteCount(s.values, elements: s.nonzeroCount) else { return nil }
            return add(mask, values)
        }
    }
}
