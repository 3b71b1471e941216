/// One weight variable stored for a layer in a Keras HDF5 file.
public struct KerasStoredWeight: Hashable, Sendable, CustomStringConvertible {
    /// The name Keras recorded (`conv2d/kernel:0`, `sequential/dense/kernel`, or `vars/0`).
    public var name: String
    /// The HDF5 dataset path.
    public var path: String
    /// The stored shape (Keras layout, e.g. a Conv2D kernel is (kH, kW, Cin/groups, filters)).
    public var shape: [Int]

    /// The variable's role from its name: the last path component without `:0`
    /// (`kernel`, `bias`, `gamma`, `moving_mean`, …); "" when the name is only an index.
    public var role: String {
        var last = name.split(separator: "/").last.map(String.init) ?? name
        if let colon = last.lastIndex(of: ":"), last[last.index(after: colon)...].allSatisfy(\.isNumber) {
            last = String(last[..<colon])
        }
        if last.allSatisfy(\.isNumber) { return "" }
        switch last {
        case "W": return "kernel"          // Keras 1
        case "b": return "bias"
        case "running_mean": return "moving_mean"
        case "running_std": return "moving_variance"
        default: return last
        }
    }

    /// "conv2d/kernel:0 (3, 3, 1, 32)".
    public var description: String { "\(name) \(formatShapeText(shape))" }
}

func formatShapeText(_ s: [Int]) -> String { "(" + s.map(String.init).joined(separator: ", ") + ")" }

/// How the file stores weights.
enum KerasWeightLayout: Equatable {
    /// `model.save` (Keras 1/2/3 legacy h5): `model_weights/<layer>/…` with `weight_names`.
    case fullModel
    /// `model.save_weights` in Keras 1/2 (or Keras 3 legacy `.h5`): root `layer_names`,
    /// matched to the architecture's layers by order.
    case legacyWeightsOnly
    /// Keras 3 `.weights.h5`: `layers/<path>/vars/<i>`, each `vars` group naming its layer.
    case keras3WeightsOnly
}

/// Finds the stored weights of each layer of an architecture.
///
/// Legacy files (full or weights-only): a top-level layer's weights are its group's
/// `weight_names`, in order. A nested model's group holds the weights of all its layers; they
/// are split by the layer name appearing in each weight name (`Conv1/kernel:0` →
/// layer `Conv1`), falling back to config order. Weights-only legacy files are matched to the
/// top-level layers that have weights **by order** (what Keras `load_weights` does), not by name.
final class KerasWeightStore {
    let file: KerasWeightFile
    let layout: KerasWeightLayout
    /// Root group of the legacy layout ("/model_weights" or "/").
    let root: String
    /// Top-level layer name → its group path (legacy) or `vars` parent path (Keras 3).
    private var groupOfLayer: [String: String] = [:]
    /// Cache: group path → entries.
    private var entriesCache: [String: [KerasStoredWeight]] = [:]
    /// Nested-model assignment: "scope/…/layer" → entries.
    private var nestedAssignment: [String: [KerasStoredWeight]] = [:]
    /// Layer names in the file (legacy `layer_names`; Keras 3: the `vars` names), file order.
    private(set) var fileLayerNames: [String] = []

    init(file: KerasWeightFile, layout: KerasWeightLayout) throws {
        self.file = file
        self.layout = layout
        switch layout {
        case .fullModel:
            root = file.isGroup("/model_weights") ? "/model_weights" : "/"
        case .legacyWeightsOnly:
            let rootHasNames = try file.stringArrayAttribute("layer_names", of: "/") != nil
            root = file.isGroup("/model_weights") && !rootHasNames ? "/model_weights" : "/"
        case .keras3WeightsOnly:
            root = "/layers"
        }
        if layout == .keras3WeightsOnly {
            for child in try file.childNames("/layers") {
                let p = "/layers/" + child
                let name = try file.stringAttribute("name", of: p + "/vars") ?? child
                fileLayerNames.append(name)
            }
        } else {
            fileLayerNames = try file.stringArrayAttribute("layer_names", of: root) ?? file.childNames(root)
        }
    }

    /// The stored entries of a legacy layer group, in `weight_names` order.
    func legacyEntries(group: String) throws -> [KerasStoredWeight] {
        if let e = entriesCache[group] { return e }
        var out: [KerasStoredWeight] = []
        if let names = try file.stringArrayAttribute("weight_names", of: group) {
            for n in names {
                let p = h5Join(group, n)
                if file.isDataset(p) {
                    out.append(KerasStoredWeight(name: n, path: p, shape: try file.datasetShape(p)))
                } else if let found = try findDataset(named: n.split(separator: "/").last.map(String.init) ?? n, under: group) {
                    out.append(KerasStoredWeight(name: n, path: found, shape: try file.datasetShape(found)))
                } else {
                    throw KerasConversionError.missingWeight(
                        file: file.path, layer: String(group.split(separator: "/").last ?? ""), className: "?",
                        expected: "dataset '\(n)' listed in weight_names of \(group)", found: "no such dataset")
                }
            }
        } else {
            // No weight_names: every dataset below the group, in name order.
            for p in try allDatasets(under: group) {
                out.append(KerasStoredWeight(name: String(p.dropFirst(group.count + 1)), path: p, shape: try file.datasetShape(p)))
            }
        }
        entriesCache[group] = out
        return out
    }

    /// The `vars/<i>` entries of a Keras 3 layer group, in index order.
    func keras3Entries(group: String) throws -> [KerasStoredWeight] {
        if let e = entriesCache[group] { return e }
        let vars = group + "/vars"
        let names = try file.childNames(vars).filter { file.isDataset(vars + "/" + $0) }
            .sorted { (Int($0) ?? Int.max, $0) < (Int($1) ?? Int.max, $1) }
        var out = try names.map { KerasStoredWeight(name: "vars/" + $0, path: vars + "/" + $0, shape: try file.datasetShape(vars + "/" + $0)) }
        if out.isEmpty {
            // A layer made of sub-layers (MultiHeadAttention's query_dense, key_dense, …;
            // Bidirectional's forward_layer/cell, backward_layer/cell): their variables, named
            // "<sub-layer name>/…/vars/<i>" after the `vars` groups' names along the path.
            // Depth-bounded: the file is untrusted.
            func walk(_ g: String, label: String, depth: Int) throws {
                guard depth < 8 else { return }
                for child in try file.childNames(g) where child != "vars" && child != "layers" {
                    let sub = g + "/" + child, subVars = sub + "/vars"
                    guard file.isGroup(sub) else { continue }
                    let name = (file.isGroup(subVars) ? try file.stringAttribute("name", of: subVars) : nil) ?? child
                    let path = label.isEmpty ? name : label + "/" + name
                    if file.isGroup(subVars) {
                        let idx = try file.childNames(subVars).filter { file.isDataset(subVars + "/" + $0) }
                            .sorted { (Int($0) ?? Int.max, $0) < (Int($1) ?? Int.max, $1) }
                        out += try idx.map { KerasStoredWeight(name: path + "/vars/" + $0, path: subVars + "/" + $0, shape: try file.datasetShape(subVars + "/" + $0)) }
                    }
                    try walk(sub, label: path, depth: depth + 1)
                }
            }
            try walk(group, label: "", depth: 0)
        }
        entriesCache[group] = out
        return out
    }

    private func findDataset(named name: String, under group: String) throws -> String? {
        try allDatasets(under: group).first { $0.hasSuffix("/" + name) }
    }

    /// Every dataset below `group`, depth first in name order. Each group is visited once (by
    /// object identity): a soft or hard link back to an ancestor, or two links to one group, are
    /// not followed again (such a link once made this walk recurse without end).
    private func allDatasets(under group: String) throws -> [String] {
        var out: [String] = []
        var visited = Set<AnyHashable>()
        func walk(_ g: String) throws {
            guard visited.insert(file.objectIdentity(g) ?? AnyHashable(g)).inserted else { return }
            for c in try file.childNames(g) {
                let p = h5Join(g, c)
                if file.isDataset(p) { out.append(p) } else if file.isGroup(p) { try walk(p) }
            }
        }
        try walk(group)
        return out
    }

    /// Total number of stored weight values (parameters) of the layers in the file.
    func parameterCount() throws -> Int {
        var total = 0
        switch layout {
        case .keras3WeightsOnly:
            for p in try allDatasets(under: "/layers") { total += try file.datasetShape(p).reduce(1, *) }
        default:
            for name in fileLayerNames {
                let g = h5Join(root, name)
                guard file.isGroup(g) else { continue }
                total += try legacyEntries(group: g).reduce(0) { $0 + $1.shape.reduce(1, *) }
            }
        }
        return total
    }

    /// Binds the architecture's top-level layers to the file's groups.
    /// - Parameter weightedLayers: top-level layers that have weights, in `model.layers` order
    ///   (name and class), used for order matching.
    func bind(model: KerasModelConfig, weightedLayers: [(name: String, className: String)]) throws {
        switch layout {
        case .keras3WeightsOnly:
            for child in try file.childNames("/layers") {
                let p = "/layers/" + child
                let name = try file.stringAttribute("name", of: p + "/vars") ?? child
                groupOfLayer[name] = p
            }
        case .fullModel:
            var allFound = true
            for (name, _) in weightedLayers {
                let g = h5Join(root, name)
                if file.isGroup(g) { groupOfLayer[name] = g } else { allFound = false }
            }
            if !allFound { try bindByOrder(weightedLayers) }
        case .legacyWeightsOnly:
            try bindByOrder(weightedLayers)
        }
    }

    private func bindByOrder(_ weightedLayers: [(name: String, className: String)]) throws {
        var fileWeighted: [String] = []
        for n in fileLayerNames {
            let g = h5Join(root, n)
            if file.isGroup(g), try !legacyEntries(group: g).isEmpty { fileWeighted.append(n) }
        }
        guard fileWeighted.count == weightedLayers.count else {
            throw KerasConversionError.weightLayerCountMismatch(
                file: file.path, architectureLayers: weightedLayers.map { "\($0.name) (\($0.className))" },
                fileLayers: fileWeighted)
        }
        groupOfLayer = [:]
        for (l, f) in zip(weightedLayers, fileWeighted) { groupOfLayer[l.name] = h5Join(root, f) }
    }

    /// Whether the file holds weights in a group named after layer `name` (legacy layouts). Used
    /// for layers without a built-in converter (custom classes converted by a hook), whose
    /// weights the architecture does not reveal.
    func hasNamedWeights(_ name: String) -> Bool {
        guard layout != .keras3WeightsOnly else { return false }
        let g = h5Join(root, name)
        return file.isGroup(g) && ((try? legacyEntries(group: g).isEmpty) == false)
    }

    /// The file group bound to top-level layer `name` (nil when it has none).
    func group(ofTopLevelLayer name: String) -> String? { groupOfLayer[name] }

    /// The stored weights of a layer.
    /// - Parameters:
    ///   - scope: names of the enclosing nested models, outermost first ([] for top-level layers).
    ///   - layer: the layer's name.
    ///   - nestedLeaves: for a nested scope, the leaf layers of the outermost nested model in
    ///     config order with their expected weight counts (for the order fallback).
    func weights(scope: [String], layer: String,
                 nestedLeaves: () -> [(key: String, name: String, count: Int)]) throws -> [KerasStoredWeight] {
        let top = scope.first ?? layer
        guard let g = groupOfLayer[top] else { return [] }
        if layout == .keras3WeightsOnly {
            var p = g
            for s in scope.dropFirst() + (scope.isEmpty ? [] : [layer]) {
                guard let c = try file.childNames(p + "/layers").first(where: {
                    (try? file.stringAttribute("name", of: p + "/layers/" + $0 + "/vars")) == s || $0 == s
                }) else { return [] }
                p += "/layers/" + c
            }
            return try keras3Entries(group: p)
        }
        let entries = try legacyEntries(group: g)
        if scope.isEmpty { return entries }
        let key = (scope + [layer]).joined(separator: "/")
        if nestedAssignment.isEmpty || !nestedAssignment.keys.contains(where: { $0.hasPrefix(top + "/") }) {
            try assignNested(top: top, entries: entries, leaves: nestedLeaves())
        }
        return nestedAssignment[key] ?? []
    }

    private func assignNested(top: String, entries: [KerasStoredWeight], leaves: [(key: String, name: String, count: Int)]) throws {
        // 1. By the layer name appearing as a component of the weight name.
        var byName: [String: [KerasStoredWeight]] = [:]
        var used = Set<String>()
        var ok = true
        for leaf in leaves where leaf.count > 0 {
            let mine = entries.filter { e in
                !used.contains(e.path) && e.name.split(separator: "/").dropLast().contains { $0 == leaf.name }
            }
            if mine.count != leaf.count { ok = false; break }
            mine.forEach { used.insert($0.path) }
            byName[leaf.key] = mine
        }
        if ok {
            for (k, v) in byName { nestedAssignment[k] = v }
            nestedAssignment[top + "/"] = []
            return
        }
        // 2. By order.
        let need = leaves.reduce(0) { $0 + $1.count }
        guard need == entries.count else {
            throw KerasConversionError.missingWeight(
                file: file.path, layer: top, className: "nested model",
                expected: "\(need) weights for its layers (\(leaves.filter { $0.count > 0 }.map { "\($0.name)×\($0.count)" }.joined(separator: ", ")))",
                found: "\(entries.count) in group \(groupOfLayer[top] ?? top): \(entries.map(\.name).joined(separator: ", "))")
        }
        var i = 0
        for leaf in leaves {
            nestedAssignment[leaf.key] = Array(entries[i..<(i + leaf.count)])
            i += leaf.count
        }
        nestedAssignment[top + "/"] = []
    }

    /// Reads a weight's values (a derived weight from `derived`, else the file's dataset).
    func read(_ w: KerasStoredWeight) throws -> [Float] {
        if let v = derivedValues[w.path] { return v }
        return try file.readFloats(w.path)
    }

    /// Weights computed from stored ones (Keras 1 gates concatenated, kernels transposed), by
    /// their synthetic path.
    private var derivedValues: [String: [Float]] = [:]

    /// A weight computed from the file's weights (see `Keras1Weights`), stored once under a
    /// synthetic path ("\u{1}derived/<key>") that no HDF5 path can equal; `make` runs only the
    /// first time `key` is asked for.
    func derived(key: String, name: String, shape: [Int], _ make: () throws -> [Float]) rethrows -> KerasStoredWeight {
        let path = "\u{1}derived/" + key
        if derivedValues[path] == nil { derivedValues[path] = try make() }
        return KerasStoredWeight(name: name, path: path, shape: shape)
    }

    /// Whether the weights were written by Keras 1, decided as Keras 2's
    /// `load_weights_from_hdf5_group` does: the weights group (`/model_weights` of a full model,
    /// the root of a `save_weights` file) records no `keras_version` (Keras 2 and later always
    /// write it there). Files whose root names a version ≥ 2 are not Keras 1 either.
    func writtenByKeras1(rootVersion: KerasVersion) -> Bool {
        guard layout != .keras3WeightsOnly else { return false }
        if !rootVersion.isUnknown, rootVersion.major >= 2 { return false }
        return ((try? file.attributeNames(root)) ?? []).contains("keras_version") == false
    }
}
