import Foundation
import HDF5

/// The only view of an HDF5 file the rest of KerasFrontend uses: groups, string attributes and
/// float datasets addressed by absolute paths ("/" is the root group, "/model_weights/conv2d").
///
/// `HDF5KerasFile` implements it with the `HDF5` module (libhdf5); `InMemoryKerasFile` builds one
/// by hand for unit tests.
protocol KerasWeightFile: AnyObject {
    /// The file's path, for messages.
    var path: String { get }
    /// Whether a group exists at `path`.
    func isGroup(_ path: String) -> Bool
    /// Whether a dataset exists at `path`.
    func isDataset(_ path: String) -> Bool
    /// Names of the members of the group at `path`, sorted by name; [] when it is not a group.
    func childNames(_ path: String) throws -> [String]
    /// Names of the attributes of the object at `path`; [] when there is none.
    func attributeNames(_ path: String) throws -> [String]
    /// String attribute `name` of the object at `path` (fixed or variable length, bytes or text),
    /// or nil when absent.
    func stringAttribute(_ name: String, of path: String) throws -> String?
    /// String-array attribute `name` of the object at `path` ([] for an empty array of any type),
    /// or nil when absent.
    func stringArrayAttribute(_ name: String, of path: String) throws -> [String]?
    /// Shape of the dataset at `path`.
    func datasetShape(_ path: String) throws -> [Int]
    /// Values of the dataset at `path` as float32, C order.
    func readFloats(_ path: String) throws -> [Float]
    /// A value equal for every path reaching the same object (hard and soft links), for walks
    /// that must visit each group once; nil when unknown (the path is then the identity).
    func objectIdentity(_ path: String) -> AnyHashable?
}

extension KerasWeightFile {
    func objectIdentity(_ path: String) -> AnyHashable? { nil }
}

/// Joins HDF5 path components ("/" + "a" → "/a", "/a" + "b/c" → "/a/b/c").
func h5Join(_ base: String, _ child: String) -> String {
    if child.hasPrefix("/") { return child }
    if base.hasSuffix("/") { return base + child }
    return base + "/" + child
}

/// Opens a Keras HDF5 file with the `HDF5` module.
/// - Throws: `KerasConversionError.hdf5` wrapping the `HDF5Error` (file missing, not HDF5, …).
func openKerasWeightFile(_ url: URL) throws -> KerasWeightFile {
    do {
        return HDF5KerasFile(try HDF5File(path: url.path))
    } catch {
        throw KerasConversionError.hdf5(file: url.path, cause: error)
    }
}

/// `KerasWeightFile` over libhdf5 through the `HDF5` module.
final class HDF5KerasFile: KerasWeightFile {
    let file: HDF5File
    var path: String { file.path }

    init(_ file: HDF5File) { self.file = file }

    private func wrap<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let e as HDF5Error {
            // MARK: errors (issue 13): a memory-limit refusal keeps its own type (exit status 6)
            if e.kind == .memoryLimitExceeded { throw e }
            throw KerasConversionError.hdf5(file: file.path, cause: e)
        }
    }

    func isGroup(_ path: String) -> Bool {
        (try? file.kind(at: path)) == .group
    }

    func isDataset(_ path: String) -> Bool {
        (try? file.kind(at: path)) == .dataset
    }

    func childNames(_ path: String) throws -> [String] {
        guard isGroup(path) else { return [] }
        return try wrap { try file.group(at: path).childNames(order: .name) }
    }

    private func object(_ path: String) throws -> HDF5Object? {
        switch try wrap({ try file.kind(at: path) }) {
        case .group: return try wrap { try file.group(at: path) }
        case .dataset: return try wrap { try file.dataset(at: path) }
        default: return nil
        }
    }

    func attributeNames(_ path: String) throws -> [String] {
        guard let o = try object(path) else { return [] }
        return try wrap { try o.attributeNames() }
    }

    func stringAttribute(_ name: String, of path: String) throws -> String? {
        guard let o = try object(path) else { return nil }
        return try wrap { try o.stringAttribute(name) }
    }

    func stringArrayAttribute(_ name: String, of path: String) throws -> [String]? {
        guard let o = try object(path) else { return nil }
        return try wrap { try o.stringArrayAttribute(name) }
    }

    func datasetShape(_ path: String) throws -> [Int] {
        try wrap { try file.dataset(at: path).shape }
    }

    func readFloats(_ path: String) throws -> [Float] {
        try wrap { try file.dataset(at: path).readFloats() }
    }

    func objectIdentity(_ path: String) -> AnyHashable? {
        file.objectIdentity(at: path).map(AnyHashable.init)
    }
}

/// A hand-built `KerasWeightFile` for tests: groups, attributes and float datasets in memory.
final class InMemoryKerasFile: KerasWeightFile {
    let path: String
    private(set) var groups: Set<String> = ["/"]
    private(set) var datasets: [String: (shape: [Int], values: [Float])] = [:]
    private var stringAttrs: [String: [String: String]] = [:]
    private var arrayAttrs: [String: [String: [String]]] = [:]

    init(path: String = "memory.h5") { self.path = path }

    private func norm(_ p: String) -> String {
        let parts = p.split(separator: "/").map(String.init)
        return "/" + parts.joined(separator: "/")
    }

    private func addParents(_ p: String) {
        var parts = norm(p).split(separator: "/").map(String.init)
        while !parts.isEmpty {
            parts.removeLast()
            groups.insert("/" + parts.joined(separator: "/"))
        }
    }

    /// Adds a group (and its parents).
    func addGroup(_ p: String) { groups.insert(norm(p)); addParents(p) }
    /// Adds a float dataset (and its parent groups).
    func addDataset(_ p: String, shape: [Int], values: [Float]) {
        precondition(shape.reduce(1, *) == values.count)
        datasets[norm(p)] = (shape, values); addParents(p)
    }
    /// Sets a string attribute.
    func setAttribute(_ name: String, of p: String, _ value: String) { stringAttrs[norm(p), default: [:]][name] = value }
    /// Sets a string-array attribute.
    func setAttribute(_ name: String, of p: String, _ value: [String]) { arrayAttrs[norm(p), default: [:]][name] = value }

    func isGroup(_ p: String) -> Bool { groups.contains(norm(p)) }
    func isDataset(_ p: String) -> Bool { datasets[norm(p)] != nil }
    func childNames(_ p: String) throws -> [String] {
        let base = norm(p), prefix = base == "/" ? "/" : base + "/"
        var names = Set<String>()
        for q in groups.union(datasets.keys) where q.hasPrefix(prefix) && q != base {
            let rest = q.dropFirst(prefix.count)
            if let first = rest.split(separator: "/").first { names.insert(String(first)) }
        }
        return names.sorted()
    }
    func attributeNames(_ p: String) throws -> [String] {
        Array((stringAttrs[norm(p)] ?? [:]).keys) + Array((arrayAttrs[norm(p)] ?? [:]).keys)
    }
    func stringAttribute(_ name: String, of p: String) throws -> String? {
        if let s = stringAttrs[norm(p)]?[name] { return s }
        if let a = arrayAttrs[norm(p)]?[name], a.count == 1 { return a[0] }
        return nil
    }
    func stringArrayAttribute(_ name: String, of p: String) throws -> [String]? {
        if let a = arrayAttrs[norm(p)]?[name] { return a }
        if let s = stringAttrs[norm(p)]?[name] { return [s] }
        return nil
    }
    func datasetShape(_ p: String) throws -> [Int] {
        guard let d = datasets[norm(p)] else {
            throw KerasConversionError.hdf5(file: path, cause: HDF5Error(kind: .objectNotFound, file: path, objectPath: p, summary: "no dataset at '\(p)'"))
        }
        return d.shape
    }
    func readFloats(_ p: String) throws -> [Float] {
        guard let d = datasets[norm(p)] else {
            throw KerasConversionError.hdf5(file: path, cause: HDF5Error(kind: .objectNotFound, file: path, objectPath: p, summary: "no dataset at '\(p)'"))
        }
        return d.values
    }
}
