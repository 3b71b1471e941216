import CHDF5
import Foundation

extension HDF5File {
    /// Opens an HDF5 file held in memory (a file image), read-only, through libhdf5's core
    /// (memory) driver: `H5Pset_fapl_core` without a backing store and `H5Pset_file_image`,
    /// which copies `image` (so the caller may release its buffer once this returns).
    ///
    /// - Parameters:
    ///   - image: the file's bytes (such as `model.weights.h5` read from a Keras `.keras` archive).
    ///   - name: a name for messages (e.g. "model.keras:model.weights.h5").
    /// - Throws: `HDF5Error` `.notHDF5` when the bytes do not start with the HDF5 signature,
    ///   `.corruptFile` when libhdf5 cannot open them.
    public convenience init(image: [UInt8], name: String) throws(HDF5Error) {
        let context = HDF5ErrorContext(file: name, objectPath: nil, attribute: nil)
        let signature: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]
        guard image.count >= 8, Array(image.prefix(8)) == signature else {
            let head = image.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
            throw context.error(.notHDF5, "'\(name)' is not an HDF5 file: it has no HDF5 signature",
                                expected: "an HDF5 file (starting with 89 48 44 46 0d 0a 1a 0a)", found: head.isEmpty ? "no bytes" : head,
                                hint: HDF5Hint.notHDF5)
        }
        HDF5Library.enter(); defer { HDF5Library.leave() }
        try HDF5Isolation.check(image: image, name: name)  // MARK: errors (issue 13): libhdf5 in a child first
        let fapl = mlconv_create_read_only_fapl()
        guard fapl >= 0 else { throw context.libraryError(.libraryFailure, "cannot make a file-access property list") }
        let setup = image.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return false }
            return H5Pset_fapl_core(fapl, 1 << 20, false) >= 0
                && H5Pset_file_image(fapl, UnsafeMutableRawPointer(mutating: base), raw.count) >= 0
        }
        guard setup else {
            let stack = HDF5Library.takeErrorStack()
            H5Pclose(fapl)
            throw HDF5Error(kind: .libraryFailure, file: name, summary: "cannot set up libhdf5's in-memory file driver",
                            libraryStack: stack, hint: nil)
        }
        let fileID = name.withCString { H5Fopen($0, mlconv_H5F_ACC_RDONLY(), fapl) }
        let stack = fileID < 0 ? HDF5Library.takeErrorStack() : []
        H5Pclose(fapl)
        guard fileID >= 0 else {
            throw HDF5Error(kind: .corruptFile, file: name, summary: "cannot open '\(name)': libhdf5 cannot read its structure (truncated or damaged?)",
                            libraryStack: stack, hint: HDF5Hint.corrupt)
        }
        try self.init(openedFileID: fileID, path: name)
    }
}
