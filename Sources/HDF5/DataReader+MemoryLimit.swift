// MARK: errors (issue 13): --max-memory at the HDF5 allocation sites.
import Diagnostics

extension DataReader {
    /// Throws `HDF5Error` of kind `.memoryLimitExceeded` when `description.elementCount`
    /// elements of `elementSize` bytes overflow or exceed `MemoryLimit.current`. Called before
    /// every allocation sized by the file's dataspace.
    func checkMemoryLimit(elementSize: Int, what: String) throws(HDF5Error) {
        do {
            try MemoryLimit.check(count: description.elementCount, elementSize: elementSize,
                                  for: "\(what) of \(context.subject)", file: context.file)
        } catch {
            throw context.error(.memoryLimitExceeded, "\(what) of \(context.subject) needs more memory than the limit allows",
                                expected: error.diagnosticExpected,
                                found: description.description,
                                hint: "raise the limit with --max-memory (MemoryLimit.set) if the file is trusted; "
                                    + "a damaged file can declare sizes it does not hold",
                                cause: error)
        }
    }
}
