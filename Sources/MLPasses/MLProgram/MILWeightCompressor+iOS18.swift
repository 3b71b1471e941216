// The iOS18 (opset CoreML8) forms of ML program weight compression, as coremltools 8 writes
// them: the constexpr ops take their data as INPUTS bound to values (not attributes), and sub-byte
// data are typed tensors of the weight's shape stored packed in the weight file
// (MILBlobWriter int4/uint1…uint6):
//
//   linear    constexpr_blockwise_shift_scale(data int8|int4 [shape], scale [shape ÷ block])
//             symmetric: q ∈ −127…127 (int8) / −7…7 (int4), scale = max|w|/qmax per output
//             channel (axis 0), or per block of `blockSize` input channels (axis 1; the block
//             spans the remaining axes). A tensor whose input channels are not a multiple of the
//             block size is left as it is (coremltools skips it too).
//   palettize constexpr_lut_to_dense(indices uintN [shape], lut [G, 1 … 1, 2ᴺ, 1]) with G = 1, or
//             one table per group of `groupSize` output channels (Cout not a multiple: left as is)
//   prune     constexpr_sparse_to_dense(nonzero_data [nnz], mask uint1 [shape]); magnitude, or
//             n:m — in every run of m elements along the input-channel axis (axis 1, the row
//             zero-padded to a multiple of m) the n smallest |w| become 0; a tensor with
//             m > Cin/2 is left as it is (coremltools' rule).
import CoreMLFormat
import MLGraph

extension MILWeightCompressor {
    static func compressedIOS18(name: String, values: [Float], shape: [Int], fp16: Bool, mode: MILCompressionMode,
                                blobs: inout MILBlobWriter) throws -> (Spec.MILSpec.Operation, String, [Float])? {
        let floatType: Spec.MILSpec.DataType = fp16 ? .float16 : .float32
        func stored(_ v: Float) -> Float { fp16 ? Float(Float16(v)) : v }
        func floatValue(_ v: [Float], _ s: [Int]) -> Spec.MILSpec.Value { floatConstant(v, s, fp16: fp16, blobs: &blobs) }
        func intValue(_ codes: [Int], as t: MILBlobWriter.DataType, milType: Spec.MILSpec.DataType) throws -> Spec.MILSpec.Value {
            blobValue(milType, shape, try blobs.append(integers: codes, as: t))
        }
        func op(_ type: String, _ newName: String, _ inputs: [String: Spec.MILSpec.Value]) -> Spec.MILSpec.Operation {
            Spec.MILSpec.Operation(type: type,
                                   inputs: inputs.mapValues { .init(arguments: [.init(binding: .value($0))]) },
                                   outputs: [.init(name: newName, type: tensorType(floatType, shape))],
                                   attributes: ["name": stringValue(newName)])
        }
        let n = values.count
        let cout = shape[0]
        let rowSize = n / max(cout, 1)                       // elements per output channel
        let cin = shape.count > 1 ? shape[1] : 1
        let spatial = shape.count > 2 ? shape[2...].reduce(1, *) : 1

        switch mode {
        case let .linear(bits, blockSize):
            let qmax = bits == 8 ? 127 : 7
            let block = blockSize ?? cin
            guard block > 0, cin % block == 0 else { return nil }
            let blocks = cin / block
            var scale = [Float](repeating: 0, count: cout * blocks)
            var codes = [Int](repeating: 0, count: n)
            var recon = [Float](repeating: 0, count: n)
            for co in 0..<cout {
                for bl in 0..<blocks {
                    var r: Float = 0
                    for ci in bl * block ..< (bl + 1) * block {
                        for k in 0..<spatial { r = max(r, abs(values[(co * cin + ci) * spatial + k])) }
                    }
                    let sc = Float(Double(r) / Double(qmax))
                    scale[co * blocks + bl] = sc
                    let s = stored(sc)
                    for ci in bl * block ..< (bl + 1) * block {
                        for k in 0..<spatial {
                            let i = (co * cin + ci) * spatial + k
                            let q = sc > 0 ? Int((Double(values[i]) / Double(sc)).rounded(.toNearestOrEven)) : 0
                            codes[i] = min(qmax, max(-qmax, q))
                            recon[i] = Float(codes[i]) * s
                        }
                    }
                }
            }
            var scaleShape = [Int](repeating: 1, count: shape.count)
            scaleShape[0] = cout
            if shape.count > 1 { scaleShape[1] = blocks }
            let newName = name + "_quantized"
            return (op("constexpr_blockwise_shift_scale", newName, [
                "data": try intValue(codes, as: bits == 8 ? .int8 : .int4, milType: bits == 8 ? .int8 : .int4),
                "scale": floatValue(scale, scaleShape),
            ]), newName, recon)

        case let .palettize(bits, kmeans, groupSize):
            let group = groupSize ?? cout
            guard group > 0, cout % group == 0 else { return nil }
            let groups = cout / group
            let entries = 1 << bits
            var lut: [Float] = []
            var codes = [Int](repeating: 0, count: n)
            var recon = [Float](repeating: 0, count: n)
            for g in 0..<groups {
                let range = g * group * rowSize ..< (g + 1) * group * rowSize
                let part = Array(values[range])
                let (table, idx) = try palette(part, bits: bits, kmeans: kmeans)
                lut += table
                for (j, i) in range.enumerated() { codes[i] = idx[j]; recon[i] = stored(table[idx[j]]) }
            }
            let lutShape = [groups] + [Int](repeating: 1, count: shape.count - 1) + [entries, 1]
            let indexType: (MILBlobWriter.DataType, Spec.MILSpec.DataType)
            switch bits {
            case 1: indexType = (.uint1, .uint1)
            case 2: indexType = (.uint2, .uint2)
            case 3: indexType = (.uint3, .uint3)
            case 4: indexType = (.uint4, .uint4)
            case 6: indexType = (.uint6, .uint6)
            default: indexType = (.uint8, .uint8)
            }
            let newName = name + "_palettized"
            return (op("constexpr_lut_to_dense", newName, [
                "indices": try intValue(codes, as: indexType.0, milType: indexType.1),
                "lut": floatValue(lut, lutShape),
            ]), newName, recon)

        case let .prune(sparsity, nm):
            var keep = [Bool](repeating: true, count: n)
            if let (zeros, m) = nm {
                guard shape.count >= 2, shape.count <= 5, m <= cin / 2 || m == 1 else { return nil }
                for co in 0..<cout {
                    for k in 0..<spatial {
                        var start = 0
                        while start < cin {
                            let run = (start ..< min(cin, start + m)).map { (co * cin + $0) * spatial + k }
                            let padded = m - run.count                 // zero padding counts as the smallest
                            let drop = max(0, zeros - padded)
                            let order = run.sorted { abs(values[$0]) < abs(values[$1]) || (abs(values[$0]) == abs(values[$1]) && $0 < $1) }
                            for i in order.prefix(drop) { keep[i] = false }
                            start += m
                        }
                    }
                }
            } else {
                let k = Int((sparsity * Double(n)).rounded(.down))
                if k > 0 {
                    let order = values.indices.sorted { abs(values[$0]) < abs(values[$1]) || (abs(values[$0]) == abs(values[$1]) && $0 < $1) }
                    for i in order.prefix(k) { keep[i] = false }
                }
            }
            for i in values.indices where values[i] == 0 { keep[i] = false }
            let nonzero = values.indices.filter { keep[$0] }.map { values[$0] }
            let recon = values.indices.map { keep[$0] ? stored(values[$0]) : 0 }
            let newName = name + "_sparsified"
            return (op("constexpr_sparse_to_dense", newName, [
                "nonzero_data": floatValue(nonzero, [nonzero.count]),
                "mask": try intValue(keep.map { $0 ? 1 : 0 }, as: .uint1, milType: .uint1),
            ]), newName, recon)
        }
    }

    /// A table of 2^bits values for `values` and each value's index: exact 1-D k-means
    /// (`kmeansLUTQuantize`) or `uniform` (evenly spaced from min to max, nearest entry).
    static func palette(_ values: [Float], bits: Int, kmeans: Bool) throws -> ([Float], [Int]) {
        if kmeans {
            let q = try kmeansLUTQuantize(values, bits: bits)
            return (q.table, q.codes.map(Int.init))
        }
        let lo = values.min() ?? 0, hi = values.max() ?? 0
        let top = (1 << bits) - 1
        let step = top > 0 ? (hi - lo) / Float(top) : 0
        let table = (0...top).map { lo + Float($0) * step }
        let codes = values.map { step > 0 ? min(top, max(0, Int((($0 - lo) / step).rounded()))) : 0 }
        return (table, codes)
    }
}
