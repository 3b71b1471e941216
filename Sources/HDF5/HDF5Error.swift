import Diagnostics

/// The one error type the `HDF5` module throws.
///
/// Every failure names the file, the object inside it (group or dataset path, and the attribute
/// when there is one), what was expected and what was found, the text of libhdf5's own error
/// stack when the library reported one, and a hint about what to do. `description` renders all of
/// it on several lines, ready to be shown to a user:
///
/// ```text
/// HDF5 error (corrupt file): cannot open 'cut.h5': the file is truncated (an incomplete download or copy?)
///   file: cut.h5
///   libhdf5 error stack:
///     H5Fopen(): unable to open file (File accessibility: Unable to open file)
///     H5F_open(): unable to read superblock (File accessibility: Read failed)
///     H5F__super_read(): truncated file: eof = 1000, sblock->base_addr = 0, stored_eof = 2374200 (File accessibility: File has been truncated)
///   hint: the file may be truncated or damaged (an incomplete download or copy?): re-download or re-copy it, or re-save the model from Keras as HDF5 with `model.save('model.h5')` (full model) or `model.save_weights('weights.h5')` (weights only)
/// ```
///
/// Missing attributes and paths are not errors where the API returns an optional
/// (`stringAttribute(_:)`, `kind(at:)`, ...).
public struct HDF5Error: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong, coarsely, for callers that want to react to some failures.
    public enum Kind: String, Equatable, Hashable, Sendable, CaseIterable {
        /// No file (or directory) exists at the given path.
        case fileNotFound = "file not found"
        /// The file exists but this process may not read it.
        case fileNotReadable = "file not readable"
        /// The path is a directory, or the file does not start with an HDF5 signature (a ZIP
        /// `.keras` archive, JSON text, a Core ML model, an empty file, ...).
        case notHDF5 = "not an HDF5 file"
        /// The file has an HDF5 signature but libhdf5 cannot read its structure: truncated,
        /// damaged, or written by an incompatible writer.
        case corruptFile = "corrupt file"
        /// No group, dataset or link exists at the requested path inside the file.
        case objectNotFound = "object not found"
        /// The path names an object of another kind (a dataset where a group was expected, ...).
        case wrongObjectKind = "wrong object kind"
        /// The stored element type cannot be read as the requested Swift type (strings read as
        /// floats, floats read as integers, an integer attribute read as a string, ...).
        case typeMismatch = "type mismatch"
        /// A shape or an element count differs from the one the caller expected or the buffer
        /// the caller provided.
        case shapeMismatch = "shape mismatch"
        /// libhdf5 failed while reading data (I/O error, damaged chunk, missing filter such as
        /// h5py's LZF compression).
        case readFailed = "read failed"
        /// Any other failure reported by libhdf5.
        case libraryFailure = "libhdf5 failure"
        // MARK: errors (issue 13)
        /// A dataset or attribute declares more data than `MemoryLimit.current` (`--max-memory`)
        /// allows; nothing was allocated.
        case memoryLimitExceeded = "memory limit exceeded"
    }

    /// What went wrong, coarsely.
    public var kind: Kind
    /// The file's path, as given to `HDF5File(path:)`.
    public var file: String
    /// The absolute path of the object inside the file (`"/"` for the root group), or `nil` when
    /// the failure concerns the file as a whole.
    public var objectPath: String?
    /// The attribute's name, when the failure concerns an attribute.
    public var attribute: String?
    /// One sentence saying what failed.
    public var summary: String
    /// What the caller expected (a type, a shape, an object kind), when that applies.
    public var expected: String?
    /// What the file holds instead, when that applies.
    public var found: String?
    /// libhdf5's error stack at the time of the failure, outermost call first (one line per
    /// record: `function(): description (major: minor)`); empty when libhdf5 reported nothing.
    public var libraryStack: [String]
    /// What the user can do about it.
    public var hint: String?
    /// The error that caused this one, kept as a value (issue 13): the `MemoryLimitExceeded` of
    /// a `.memoryLimitExceeded` refusal; nil for libhdf5's failures (their record is
    /// `libraryStack`).
    public var cause: DiagnosticCause?

    /// Makes an error; most callers only read errors, the module makes them.
    public init(kind: Kind, file: String, objectPath: String? = nil, attribute: String? = nil,
                summary: String, expected: String? = nil, found: String? = nil,
                libraryStack: [String] = [], hint: String? = nil, cause: (any Error)? = nil) {
        self.kind = kind
        self.file = file
        self.objectPath = objectPath
        self.attribute = attribute
        self.summary = summary
        self.expected = expected
        self.found = found
        self.libraryStack = libraryStack
        self.hint = hint
        self.cause = cause.map(DiagnosticCause.init)
    }

    /// A multi-line human-readable message: the summary, then the file, object, attribute,
    /// expected, found, the libhdf5 error stack and the hint, each on its own indented line.
    public var description: String { lines(includingCause: true).joined(separator: "\n") }

    /// The lines of `description`; the "caused by:" line of `cause` only when `includingCause`.
    func lines(includingCause: Bool) -> [String] {
        var lines = ["HDF5 error (\(kind.rawValue)): \(summary)"]
        lines.append("  file: \(file)")
        if let objectPath {
            lines.append("  object: \(objectPath)")
        }
        if let attribute {
            lines.append("  attribute: \(attribute)")
        }
        if let expected {
            lines.append("  expected: \(expected)")
        }
        if let found {
            lines.append("  found: \(found)")
        }
        if !libraryStack.isEmpty {
            lines.append("  libhdf5 error stack:")
            lines.append(contentsOf: libraryStack.map { "    " + $0 })
        }
        if includingCause, let cause {
            lines.append("  caused by: \(cause.text)")
        }
        if let hint {
            lines.append("  hint: \(hint)")
        }
        return lines
    }
}

/// The hints shared by several failures.
enum HDF5Hint {
    static let resave =
        "re-save the model from Keras as HDF5 with `model.save('model.h5')` (full model) or "
        + "`model.save_weights('weights.h5')` (weights only)"
    static let notHDF5 = "is this an HDF5 file? Keras models must be in the HDF5 format: " + resave
    static let corrupt =
        "the file may be truncated or damaged (an incomplete download or copy?): re-download or "
        + "re-copy it, or " + resave
    static let readFailed =
        "the file may be damaged, or compressed with a filter this libhdf5 lacks (h5py's 'lzf', "
        + "Blosc, ...): re-save it without compression or with gzip"
}
