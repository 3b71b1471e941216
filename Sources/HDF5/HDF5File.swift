import CHDF5
import Foundation

/// An HDF5 file opened read-only, such as a Keras `.h5` model or weights file.
///
/// ```swift
/// let file = try HDF5File(path: "model.h5")
/// let version = try file.stringAttribute("keras_version")          // "2.0.6"
/// let layers = try file.stringArrayAttribute("layer_names") ?? []  // Keras order
/// let kernel = try file.dataset(at: "conv2d_1/conv2d_1/kernel:0")
/// kernel.shape                                                     // [9, 9, 3, 64]
/// let weights = try kernel.readFloats()                            // 15 552 Floats, C order
/// ```
///
/// The file stays open while this object or any group or dataset obtained from it is alive, and
/// closes when the last of them is released. All objects may be used from any thread: calls into
/// libhdf5 are serialized through one process-wide lock (Debian's libhdf5 is not thread-safe), so
/// reads from several threads do not run in parallel.
///
/// The attributes of the file (h5py's `file.attrs`) are those of its root group; the attribute
/// readers here forward to `root`.
public final class HDF5File: @unchecked Sendable {
    /// The path the file was opened with.
    public let path: String
    /// The root group, `/`.
    public let root: HDF5Group

    /// Opens the file at `path` read-only.
    ///
    /// - Throws: `HDF5Error` with kind
    ///   - `.fileNotFound` when nothing exists at `path`;
    ///   - `.fileNotReadable` when the process may not read it;
    ///   - `.notHDF5` when `path` is a directory (a TensorFlow SavedModel?) or the file has no
    ///     HDF5 signature (the hint recognizes empty files, ZIP archives such as Keras 3 `.keras`
    ///     files, and JSON text);
    ///   - `.corruptFile` when the signature is there but libhdf5 cannot open the file (truncated
    ///     or damaged); the libhdf5 error stack is attached.
    public init(path: String) throws(HDF5Error) {
        let context = HDF5ErrorContext(file: path, objectPath: nil, attribute: nil)
        try Self.checkPlainReadableFile(path, context: context)

        HDF5Library.enter(); defer { HDF5Library.leave() }
        let signature = path.withCString { H5Fis_hdf5($0) }
        if signature == 0 {
            let (summary, head, hint) = Self.sniffNonHDF5(path)
            throw context.error(.notHDF5, "'\(path)' is not an HDF5 file: \(summary)",
                                expected: "an HDF5 file (starting with the signature 89 48 44 46 0d 0a 1a 0a, \"\\x89HDF\\r\\n\\x1a\\n\")",
                                found: head, hint: hint)
        }
        if signature < 0 {
            throw context.libraryError(.corruptFile, "cannot check whether '\(path)' is an HDF5 file",
                                       hint: HDF5Hint.corrupt)
        }
        try HDF5Isolation.check(path: path)  // MARK: errors (issue 13): libhdf5 in a child first
        let accessList = mlconv_create_read_only_fapl()
        guard accessList >= 0 else {
            throw context.libraryError(.libraryFailure, "cannot make a file-access property list")
        }
        let fileID = path.withCString { H5Fopen($0, mlconv_H5F_ACC_RDONLY(), accessList) }
        // Take the error stack before H5Pclose, which (like every API call) clears it.
        let openStack = fileID < 0 ? HDF5Library.takeErrorStack() : []
        H5Pclose(accessList)
        guard fileID >= 0 else {
            let stack = openStack
            let truncated = stack.contains { $0.contains("truncated") }
            let summary = truncated
                ? "cannot open '\(path)': the file is truncated (an incomplete download or copy?)"
                : "cannot open '\(path)': libhdf5 cannot read its structure (damaged file?)"
            throw HDF5Error(kind: .corruptFile, file: path, summary: summary,
                            libraryStack: stack, hint: HDF5Hint.corrupt)
        }
        let file = OpenFile(id: fileID, path: path)
        let rootID = H5Gopen2(fileID, "/", mlconv_H5P_DEFAULT())
        guard rootID >= 0 else {
            throw HDF5ErrorContext(file: path, objectPath: "/", attribute: nil)
                .libraryError(.corruptFile, "cannot open the root group of '\(path)'",
                              hint: HDF5Hint.corrupt)
        }
        self.path = path
        self.root = HDF5Group(file: file, id: rootID, path: "/")
    }

    /// Wraps a file identifier opened by this module (the file closes when the last object
    /// opened from it is released); `path` is for messages.
    init(openedFileID fileID: hid_t, path: String) throws(HDF5Error) {
        let file = OpenFile(id: fileID, path: path)
        let rootID = H5Gopen2(fileID, "/", mlconv_H5P_DEFAULT())
        guard rootID >= 0 else {
            throw HDF5ErrorContext(file: path, objectPath: "/", attribute: nil)
                .libraryError(.corruptFile, "cannot open the root group of '\(path)'", hint: HDF5Hint.corrupt)
        }
        self.path = path
        self.root = HDF5Group(file: file, id: rootID, path: "/")
    }

    /// `true` when `path` names a readable file that starts with the HDF5 signature (it may
    /// still be truncated or damaged). Never throws; `false` for missing files and directories.
    public static func isHDF5(path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
              !isDirectory.boolValue else { return false }
        HDF5Library.enter(); defer { HDF5Library.leave() }
        let result = path.withCString { H5Fis_hdf5($0) }
        if result < 0 { _ = HDF5Library.takeErrorStack() }
        return result > 0
    }

    /// The version of the libhdf5 this process runs, such as `"1.10.8"`.
    public static var libraryVersion: String { HDF5Library.version }

    // MARK: Objects (forwarded to `root`)

    /// The group at `path`, absolute or relative to the root. See `HDF5Group.group(at:)`.
    public func group(at path: String) throws(HDF5Error) -> HDF5Group {
        try root.group(at: path)
    }

    /// The dataset at `path`, absolute or relative to the root. See `HDF5Group.dataset(at:)`.
    public func dataset(at path: String) throws(HDF5Error) -> HDF5Dataset {
        try root.dataset(at: path)
    }

    /// `true` when `path` (absolute or relative to the root) resolves to an object. See
    /// `HDF5Group.exists(_:)`.
    public func exists(_ path: String) -> Bool {
        root.exists(path)
    }

    /// The identity of the object at `path`. See `HDF5Group.objectIdentity(at:)`.
    public func objectIdentity(at path: String) -> HDF5ObjectIdentity? {
        root.objectIdentity(at: path)
    }

    /// What `path` resolves to, or `nil` when nothing is there. See `HDF5Group.kind(at:)`.
    public func kind(at path: String) throws(HDF5Error) -> HDF5ObjectKind? {
        try root.kind(at: path)
    }

    // MARK: Attributes of the root group (h5py's `file.attrs`)

    /// Names of the root group's attributes. See `HDF5Object.attributeNames()`.
    public func attributeNames() throws(HDF5Error) -> [String] {
        try root.attributeNames()
    }

    /// Whether the root group has attribute `name`. See `HDF5Object.hasAttribute(_:)`.
    public func hasAttribute(_ name: String) throws(HDF5Error) -> Bool {
        try root.hasAttribute(name)
    }

    /// Shape and type of root attribute `name`. See `HDF5Object.attributeDescription(_:)`.
    public func attributeDescription(_ name: String) throws(HDF5Error) -> HDF5DataDescription? {
        try root.attributeDescription(name)
    }

    /// Root attribute `name` as an `HDF5Value`. See `HDF5Object.attribute(named:)`.
    public func attribute(named name: String) throws(HDF5Error) -> HDF5Value? {
        try root.attribute(named: name)
    }

    /// Root attribute `name` as one string (`keras_version`, `backend`, `model_config`, ...).
    /// See `HDF5Object.stringAttribute(_:)`.
    public func stringAttribute(_ name: String) throws(HDF5Error) -> String? {
        try root.stringAttribute(name)
    }

    /// Root attribute `name` as a list of strings (`layer_names`, ...). See
    /// `HDF5Object.stringArrayAttribute(_:)`.
    public func stringArrayAttribute(_ name: String) throws(HDF5Error) -> [String]? {
        try root.stringArrayAttribute(name)
    }

    /// Root attribute `name` as one integer. See `HDF5Object.integerAttribute(_:)`.
    public func integerAttribute(_ name: String) throws(HDF5Error) -> Int? {
        try root.integerAttribute(name)
    }

    /// Root attribute `name` as a list of integers. See `HDF5Object.integerArrayAttribute(_:)`.
    public func integerArrayAttribute(_ name: String) throws(HDF5Error) -> [Int]? {
        try root.integerArrayAttribute(name)
    }

    /// Root attribute `name` as one number. See `HDF5Object.doubleAttribute(_:)`.
    public func doubleAttribute(_ name: String) throws(HDF5Error) -> Double? {
        try root.doubleAttribute(name)
    }

    /// Root attribute `name` as a list of numbers. See `HDF5Object.doubleArrayAttribute(_:)`.
    public func doubleArrayAttribute(_ name: String) throws(HDF5Error) -> [Double]? {
        try root.doubleArrayAttribute(name)
    }

    // MARK: Opening checks

    private static func checkPlainReadableFile(_ path: String, context: HDF5ErrorContext)
        throws(HDF5Error)
    {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard !path.isEmpty, manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw context.error(
                .fileNotFound, "no file at '\(path)'",
                hint: "check the path; a relative path is resolved against the current directory '"
                    + manager.currentDirectoryPath + "'")
        }
        if isDirectory.boolValue {
            throw context.error(
                .notHDF5, "'\(path)' is a directory, not an HDF5 file",
                expected: "an HDF5 file", found: "a directory (a TensorFlow SavedModel?)",
                hint: HDF5Hint.notHDF5)
        }
        guard manager.isReadableFile(atPath: path) else {
            throw context.error(.fileNotReadable, "'\(path)' exists but cannot be read",
                                hint: "check the file's permissions")
        }
    }

    /// What a file without HDF5 signature looks like (summary, its first bytes in hex, hint).
    private static func sniffNonHDF5(_ path: String) -> (summary: String, head: String, hint: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return ("the file has no HDF5 signature", "an unreadable file", HDF5Hint.notHDF5)
        }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 64)) ?? Data())
        let hex = head.prefix(8).map { byte -> String in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        let found = head.isEmpty ? "0 bytes" : "a file starting with " + hex.joined(separator: " ")
        if head.isEmpty {
            return ("the file is empty", found,
                    "the file may be an incomplete download or copy: re-download or re-copy it, or "
                        + HDF5Hint.resave)
        }
        if head.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            return ("it is a ZIP archive (a Keras 3 `.keras` file?)", found,
                    "is this an HDF5 file? Keras 3 `.keras` files are ZIP archives: "
                        + HDF5Hint.resave)
        }
        // MARK: NumPy arrays
        if head.starts(with: [0x93, 0x4E, 0x55, 0x4D, 0x50, 0x59]) {  // "\x93NUMPY", numpy.lib.format
            return ("it is a NumPy array (.npy), not a Keras model", found,
                    "give the model file written by Keras `model.save('model.h5')` (or `.keras`); "
                        + ".npy files are inputs, e.g. `mlconv predict MODEL --input NAME=FILE.npy`")
        }
        let firstText = head.first { ![0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains($0) }
        if firstText == UInt8(ascii: "{") || firstText == UInt8(ascii: "[") {
            return ("it is JSON text (a model architecture from `model.to_json()`?)", found,
                    "the architecture JSON holds no weights: " + HDF5Hint.resave)
        }
        return ("the file has no HDF5 signature", found, HDF5Hint.notHDF5)
    }
}

/// An open libhdf5 file identifier, shared by the `HDF5File` and every object opened from it;
/// closes the file when the last of them is released.
final class OpenFile: @unchecked Sendable {
    let id: hid_t
    let path: String

    init(id: hid_t, path: String) {
        self.id = id
        self.path = path
    }

    deinit {
        HDF5Library.enter(); defer { HDF5Library.leave() }
        H5Fclose(id)
    }
}
