import CHDF5

/// A group of an open `HDF5File`: a folder of named links to groups and datasets (a Keras
/// layer's weights live in `/<layer>/<layer>/kernel:0` in weights-only files and under
/// `/model_weights/...` in full-model files).
///
/// Paths given to its methods are relative to this group, or absolute when they start with `/`;
/// repeated slashes and `.` components are ignored.
public final class HDF5Group: HDF5Object, @unchecked Sendable {
    /// The names of the group's links (children), in `order` (by default byte-wise name order,
    /// like h5py: `conv2d_10` comes before `conv2d_2`). Keras does not rely on this order: it
    /// stores the order in the `layer_names` / `weight_names` attributes.
    ///
    /// - Throws: `HDF5Error` (`.corruptFile`) if libhdf5 cannot list the links.
    public func childNames(order: HDF5LinkOrder = .name) throws(HDF5Error) -> [String] {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        return try linkNames(order: order)
    }

    /// The group's links with what each resolves to, in `order` (see `childNames(order:)`).
    /// Dangling soft links and external links are listed with kind `.other`.
    ///
    /// - Throws: `HDF5Error` (`.corruptFile`) if libhdf5 cannot list the links.
    public func children(order: HDF5LinkOrder = .name) throws(HDF5Error) -> [HDF5Child] {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        return try linkNames(order: order).map { name in
            let kind = objectKind(atAbsolutePath: HDF5Path.resolve(name, against: path))
            return HDF5Child(name: name, kind: kind ?? .other)
        }
    }

    /// `true` when `path` resolves to an object (following soft links). Never throws: a path
    /// through a dataset, a dangling link, or a libhdf5 failure all give `false`. `"."`, `""`
    /// and `"/"` always exist.
    public func exists(_ path: String) -> Bool {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        return resolvedExists(HDF5Path.resolve(path, against: self.path))
    }

    /// What `path` resolves to, or `nil` when nothing is there (see `exists(_:)`).
    ///
    /// - Throws: `HDF5Error` (`.corruptFile`) if a link exists but libhdf5 cannot read the
    ///   object it points to.
    public func kind(at path: String) throws(HDF5Error) -> HDF5ObjectKind? {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let absolute = HDF5Path.resolve(path, against: self.path)
        guard resolvedExists(absolute) else { return nil }
        guard let kind = objectKind(atAbsolutePath: absolute) else {
            throw HDF5ErrorContext(file: file.path, objectPath: absolute, attribute: nil)
                .libraryError(.corruptFile, "cannot read the object at '\(absolute)'",
                              hint: HDF5Hint.corrupt)
        }
        return kind
    }

    /// An identity of the object `path` resolves to (following soft links), equal for every
    /// path reaching the same object (hard links, soft links): for walking a group tree that
    /// links back to an ancestor without looping. `nil` when nothing resolvable is there.
    public func objectIdentity(at path: String) -> HDF5ObjectIdentity? {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let absolute = HDF5Path.resolve(path, against: self.path)
        guard resolvedExists(absolute) else { return nil }
        var out: (UInt64, UInt64) = (0, 0)
        let status = withUnsafeMutableBytes(of: &out) { raw in
            absolute.withCString { mlconv_object_identity_by_name(file.id, $0, raw.baseAddress!.assumingMemoryBound(to: UInt64.self)) }
        }
        guard status >= 0 else { mlconv_clear_error_stack(); return nil }
        return HDF5ObjectIdentity(high: out.0, low: out.1)
    }

    /// The group at `path`.
    ///
    /// - Throws: `HDF5Error` `.objectNotFound` when nothing is at `path` (the message lists the
    ///   parent group's children); `.wrongObjectKind` when `path` is a dataset or other object;
    ///   `.corruptFile` when libhdf5 cannot open it.
    public func group(at path: String) throws(HDF5Error) -> HDF5Group {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let absolute = HDF5Path.resolve(path, against: self.path)
        try expectKind(.group, at: absolute)
        let groupID = absolute.withCString { H5Gopen2(file.id, $0, mlconv_H5P_DEFAULT()) }
        guard groupID >= 0 else {
            throw HDF5ErrorContext(file: file.path, objectPath: absolute, attribute: nil)
                .libraryError(.corruptFile, "cannot open group '\(absolute)'",
                              hint: HDF5Hint.corrupt)
        }
        return HDF5Group(file: file, id: groupID, path: absolute)
    }

    /// The dataset at `path`, with its shape and element type read.
    ///
    /// - Throws: `HDF5Error` `.objectNotFound` when nothing is at `path` (the message lists the
    ///   parent group's children); `.wrongObjectKind` when `path` is a group or other object;
    ///   `.corruptFile` when libhdf5 cannot open it or read its type and shape.
    public func dataset(at path: String) throws(HDF5Error) -> HDF5Dataset {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let absolute = HDF5Path.resolve(path, against: self.path)
        try expectKind(.dataset, at: absolute)
        let context = HDF5ErrorContext(file: file.path, objectPath: absolute, attribute: nil)
        let datasetID = absolute.withCString { H5Dopen2(file.id, $0, mlconv_H5P_DEFAULT()) }
        guard datasetID >= 0 else {
            throw context.libraryError(.corruptFile, "cannot open dataset '\(absolute)'",
                                       hint: HDF5Hint.corrupt)
        }
        let reader: DataReader
        do {
            reader = try DataReader.dataset(datasetID, context: context)
        } catch {
            H5Dclose(datasetID)
            throw error
        }
        defer { reader.close() }
        return HDF5Dataset(file: file, id: datasetID, path: absolute,
                           dataDescription: reader.description)
    }

    // MARK: Internals (lock held)

    private func linkNames(order: HDF5LinkOrder) throws(HDF5Error) -> [String] {
        var index = H5_INDEX_NAME
        if order == .creation {
            var tracked: Int32 = 0
            if mlconv_group_tracks_creation_order(id, &tracked) >= 0, tracked != 0 {
                index = H5_INDEX_CRT_ORDER
            } else {
                mlconv_clear_error_stack()
            }
        }
        final class Names { var values: [String] = [] }
        let names = Names()
        let status = mlconv_iterate_link_names(id, index, { name, context in
            guard let name, let context else { return -1 }
            Unmanaged<Names>.fromOpaque(context).takeUnretainedValue()
                .values.append(String(cString: name))
            return 0
        }, Unmanaged.passUnretained(names).toOpaque())
        withExtendedLifetime(names) {}
        guard status >= 0 else {
            throw errorContext.libraryError(.corruptFile, "cannot list the links of group '\(path)'",
                                            hint: HDF5Hint.corrupt)
        }
        return names.values
    }

    /// Whether an absolute normalized path resolves to an object; checks each component in turn
    /// (libhdf5 fails rather than answers for a path whose parent is missing).
    private func resolvedExists(_ absolute: String) -> Bool {
        var prefix = ""
        for component in HDF5Path.components(absolute) {
            prefix += "/" + component
            let linkExists = prefix.withCString { H5Lexists(file.id, $0, mlconv_H5P_DEFAULT()) }
            guard linkExists > 0 else {
                mlconv_clear_error_stack()
                return false
            }
        }
        if prefix.isEmpty { return true }
        let objectExists = absolute.withCString {
            H5Oexists_by_name(file.id, $0, mlconv_H5P_DEFAULT())
        }
        if objectExists < 0 { mlconv_clear_error_stack() }
        return objectExists > 0
    }

    /// The kind at an absolute path, or `nil` if libhdf5 cannot resolve it (error stack left
    /// for the caller to take or clear).
    private func objectKind(atAbsolutePath absolute: String) -> HDF5ObjectKind? {
        var type = H5O_TYPE_UNKNOWN
        let status = absolute.withCString { mlconv_object_type_by_name(file.id, $0, &type) }
        guard status >= 0 else { return nil }
        switch type {
        case H5O_TYPE_GROUP: return .group
        case H5O_TYPE_DATASET: return .dataset
        case H5O_TYPE_NAMED_DATATYPE: return .namedDatatype
        default: return .other
        }
    }

    /// Throws unless `absolute` resolves to an object of kind `expected`.
    private func expectKind(_ expected: HDF5ObjectKind, at absolute: String) throws(HDF5Error) {
        let context = HDF5ErrorContext(file: file.path, objectPath: absolute, attribute: nil)
        guard resolvedExists(absolute) else {
            throw context.error(.objectNotFound,
                                "no \(expected.rawValue) at '\(absolute)' in '\(file.path)'",
                                expected: "a \(expected.rawValue)", found: "nothing",
                                hint: siblingsHint(of: absolute))
        }
        guard let kind = objectKind(atAbsolutePath: absolute) else {
            throw context.libraryError(.corruptFile, "cannot read the object at '\(absolute)'",
                                       hint: HDF5Hint.corrupt)
        }
        guard kind == expected else {
            throw context.error(.wrongObjectKind,
                                "'\(absolute)' in '\(file.path)' is a \(kind.rawValue), not a \(expected.rawValue)",
                                expected: "a \(expected.rawValue)", found: "a \(kind.rawValue)")
        }
    }

    /// "the nearest existing group '/a' holds: b, c, ..." for an object-not-found message.
    private func siblingsHint(of absolute: String) -> String? {
        var parent = HDF5Path.parent(absolute)
        while parent != "/", !(resolvedExists(parent) && objectKind(atAbsolutePath: parent) == .group) {
            parent = HDF5Path.parent(parent)
        }
        let groupID = parent.withCString { H5Gopen2(file.id, $0, mlconv_H5P_DEFAULT()) }
        guard groupID >= 0 else {
            mlconv_clear_error_stack()
            return nil
        }
        let group = HDF5Group(file: file, id: groupID, path: parent)
        guard let names = try? group.linkNames(order: .name) else { return nil }
        let limit = 12
        var listed = names.prefix(limit).joined(separator: ", ")
        if names.count > limit { listed += ", … (\(names.count) in all)" }
        if names.isEmpty { listed = "nothing" }
        return "the nearest existing group '\(parent)' holds: \(listed)"
    }
}
