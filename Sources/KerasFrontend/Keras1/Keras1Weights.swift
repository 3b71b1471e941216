import HDF5
/// Converts the weights of a layer saved by Keras 1 into the Keras 2 layout its converter reads,
/// as Keras 2's `preprocess_weights_for_loading(…, original_keras_version='1')` does
/// (keras/engine/topology.py in 2.1, keras/engine/saving.py in 2.2; tf.keras kept it in
/// `hdf5_format.py`). Positional, like Keras:
/// - `LSTM` with 12 arrays (W, U, b per gate in Keras 1's order i, c, f, o) → kernel,
///   recurrent kernel, bias concatenated on the last axis in Keras 2's order i, f, c, o;
/// - `GRU` with 9 arrays (z, r, h) → kernel, recurrent kernel, bias (z, r, h);
/// - `ConvLSTM2D` (channels_last) with 12 arrays → likewise;
/// - `Conv1D`: the Keras 1.2 kernel (k, 1, Cin, filters) loses its unit axis; the Keras 1.1
///   kernel (filters, Cin, k, 1) is transposed first;
/// - `Conv2D` / `Conv3D` with `dim_ordering='th'` (data_format channels_first): kernels
///   (filters, Cin, kH, kW[, kD]) → (kH, kW[, kD], Cin, filters);
/// - `Conv2DTranspose`: (kH, kW, Cin, filters) → (kH, kW, filters, Cin); th-ordered
///   (filters, Cin, kH, kW) → (kH, kW, filters, Cin);
/// - `Bidirectional`: each half as its wrapped layer; `TimeDistributed`: as its wrapped layer.
/// Keras 1 recurrent layers saved with `consume_less='gpu'` already store three concatenated
/// arrays in Keras 2's order and pass unchanged. Every rewrite checks the stored shapes first and
/// leaves weights it does not recognize alone (the converter then reports the mismatch).
///
/// Keras 1 files record no backend, so Theano-trained convolution kernels are not flipped
/// (neither Keras 1 nor Keras 2 flip them without a recorded `backend`; Keras 1 users called
/// `convert_all_kernels_in_model` themselves).
enum Keras1Weights {
    /// The converted weights of `layer` (a Keras 2 config, as `Keras1Config` made it).
    /// - Parameter key: a key unique to the layer (its qualified name), for the derived weights.
    static func preprocess(_ layer: KerasLayerConfig, key: String, stored: [KerasStoredWeight],
                           store: KerasWeightStore) throws -> [KerasStoredWeight] {
        guard !stored.isEmpty else { return stored }
        let cfg = layer.config
        switch layer.className {
        case "Bidirectional":
            guard let inner = BidirectionalConverter.inner(cfg), stored.count % 2 == 0 else { return stored }
            let half = stored.count / 2
            let f = try preprocess(inner, key: key + "/forward", stored: Array(stored.prefix(half)), store: store)
            let b = try preprocess(inner, key: key + "/backward", stored: Array(stored.suffix(half)), store: store)
            return f.map { prefixed($0, "forward_" + inner.name) } + b.map { prefixed($0, "backward_" + inner.name) }
        case "TimeDistributed":
            guard let inner = BidirectionalConverter.inner(cfg) else { return stored }
            return try preprocess(inner, key: key, stored: stored, store: store)
        case "LSTM":
            return try gates(layer, key: key, stored, order: [0, 6, 3, 9], store: store)
        case "GRU":
            return try gates(layer, key: key, stored, order: [0, 3, 6], store: store)
        case "ConvLSTM2D":
            guard cfg["data_format"]?.string != "channels_first" else { return stored }
            return try gates(layer, key: key, stored, order: [0, 6, 3, 9], store: store)
        case "Conv1D":
            let s = stored[0].shape
            guard s.count == 4, let k = kernelSize(cfg, 1)?.first, let f = cfg["filters"]?.int else { return stored }
            var perm: [Int]? = nil
            if s[0] == k, s[1] == 1, s[3] == f {
                perm = nil
            } else if s[0] == f, s[2] == k, s[3] == 1 {
                perm = [2, 3, 1, 0]  // Keras 1.1: (filters, Cin, k, 1) → (k, 1, Cin, filters)
            } else {
                return stored
            }
            let cin = perm == nil ? s[2] : s[1]
            let w = try store.derived(key: key + "/kernel", name: layer.name + "/kernel", shape: [k, cin, f]) {
                let v = try store.read(stored[0])
                return perm.map { WeightLayout.transpose(v, shape: s, perm: $0) } ?? v
            }
            return [w] + stored.dropFirst()
        case "Conv2D", "Conv3D":
            let rank = layer.className == "Conv2D" ? 4 : 5
            let s = stored[0].shape
            guard cfg["data_format"]?.string == "channels_first", s.count == rank, let k = kernelSize(cfg, rank - 2),
                  let f = cfg["filters"]?.int, s[0] == f, Array(s[2...]) == k else { return stored }
            let perm = rank == 4 ? [2, 3, 1, 0] : [2, 3, 4, 1, 0]
            return [try transposed(stored[0], perm: perm, key: key, name: layer.name + "/kernel", store: store)] + stored.dropFirst()
        case "Conv2DTranspose":
            let s = stored[0].shape
            guard s.count == 4, let k = kernelSize(cfg, 2), let f = cfg["filters"]?.int else { return stored }
            if cfg["data_format"]?.string == "channels_first" {
                guard s[0] == f, Array(s[2...]) == k else { return stored }
                return [try transposed(stored[0], perm: [2, 3, 0, 1], key: key, name: layer.name + "/kernel", store: store)] + stored.dropFirst()
            }
            guard Array(s[..<2]) == k, s[3] == f, s[2] != f else { return stored }
            return [try transposed(stored[0], perm: [0, 1, 3, 2], key: key, name: layer.name + "/kernel", store: store)] + stored.dropFirst()
        default:
            return stored
        }
    }

    /// `kernel_size` as `n` integers (an integer repeated, or a list of n).
    private static func kernelSize(_ cfg: KerasJSON, _ n: Int) -> [Int]? {
        if let i = cfg["kernel_size"]?.int { return Array(repeating: i, count: n) }
        if let a = cfg["kernel_size"]?.array, a.count == n, a.allSatisfy({ $0.int != nil }) { return a.map { $0.int! } }
        return nil
    }

    private static func prefixed(_ w: KerasStoredWeight, _ prefix: String) -> KerasStoredWeight {
        KerasStoredWeight(name: prefix + "/" + (w.name.split(separator: "/").last.map(String.init) ?? w.name), path: w.path, shape: w.shape)
    }

    private static func transposed(_ w: KerasStoredWeight, perm: [Int], key: String, name: String,
                                   store: KerasWeightStore) throws -> KerasStoredWeight {
        try store.derived(key: key + "/kernel", name: name, shape: perm.map { w.shape[$0] }) {
            WeightLayout.transpose(try store.read(w), shape: w.shape, perm: perm)
        }
    }

    /// Per-gate arrays (W, U, b for each gate, `3·gates` arrays) → kernel, recurrent kernel and
    /// bias, the gates taken in `order` (indices of each gate's W among the stored arrays) and
    /// concatenated on the last axis.
    private static func gates(_ layer: KerasLayerConfig, key: String, _ stored: [KerasStoredWeight], order: [Int],
                              store: KerasWeightStore) throws -> [KerasStoredWeight] {
        guard stored.count == 3 * order.count else { return stored }
        var out: [KerasStoredWeight] = []
        for (j, role) in ["kernel", "recurrent_kernel", "bias"].enumerated() {
            let parts = order.map { stored[$0 + j] }
            let s0 = parts[0].shape
            guard let last = s0.last, parts.allSatisfy({ $0.shape == s0 }) else { return stored }
            let shape = Array(s0.dropLast()) + [last * parts.count]
            out.append(try store.derived(key: key + "/" + role, name: layer.name + "/" + role, shape: shape) {
                let values = try parts.map { try store.read($0) }
                let rows = s0.dropLast().reduce(1, *)
                guard values.allSatisfy({ $0.count == rows * last }) else {
                    throw KerasConversionError.hdf5(file: store.file.path, cause: HDF5Error(
                        kind: .shapeMismatch, file: store.file.path,
                        summary: "a weight of layer '\(layer.name)' holds a different number of values than its shape \(formatShapeText(s0)) says",
                        expected: "\(rows * last) values per gate", found: values.map { "\($0.count)" }.joined(separator: ", ") + " values"))
                }
                var v: [Float] = []
                v.reserveCapacity(rows * last * parts.count)
                for r in 0..<rows {
                    for p in values { v.append(contentsOf: p[(r * last)..<((r + 1) * last)]) }
                }
                return v
            })
        }
        return out
    }
}
