// MARK: errors (issue 13): the libhdf5 guard for variable-length strings.
//
// Variable-length data (h5py's `str` attributes such as Keras' `model_config` and
// `keras_version`, vlen string datasets) lives in "global heap collections" (signature "GCOL").
// libhdf5 1.10 copies a heap object with the size recorded in the collection without checking
// that it stays inside the collection: a damaged size makes H5Aread / H5Dread read wild memory
// and the process dies of SIGSEGV (Fixtures/crashes/keras/global_heap_object_size_*.h5).
// Before the first variable-length read of a file, `GlobalHeapCheck` walks every global heap
// collection of the file and refuses the file when an object runs past its collection's end.
// See docs/ERRORS.md for what this check does not cover.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

enum GlobalHeapCheck {
    /// Files already checked (path, size, modification time) → the problem found, if any.
    /// Used with the HDF5 lock held.
    nonisolated(unsafe) private static var checked: [String: String?] = [:]

    /// The smallest collection libhdf5 writes (H5HG_MINSIZE).
    static let minimumCollectionSize = 4096

    /// Returns a description of the first damaged global heap object of the file at `path`, or
    /// nil when every collection is consistent (or the file cannot be mapped: libhdf5 reports
    /// that itself). Call with the HDF5 lock held.
    static func problem(inFileAt path: String) -> String? {
        guard let key = fileVersionKey(path) else { return nil }
        if let known = checked[key] { return known }
        let found: String?
        if let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) {
            found = data.withUnsafeBytes { problem(in: $0) }
        } else {
            found = nil
        }
        if checked.count >= 256 { checked.removeAll() }  // bounded for long-running processes
        checked[key] = found
        return found
    }

    /// The check on the bytes of a whole file (see `problem(inFileAt:)`).
    static func problem(in file: UnsafeRawBufferPointer) -> String? {
        guard let lengthSize = sizeOfLengths(file), lengthSize == 8 else { return nil }
        let n = file.count
        let signature: [UInt8] = Array("GCOL".utf8)
        var p = 0
        while p + 16 <= n {
            // Find the next "GCOL".
            guard let base = file.baseAddress,
                  let hit = memchr(base + p, Int32(signature[0]), n - p) else { break }
            let at = base.distance(to: UnsafeRawPointer(hit))
            p = at + 1
            guard at + 4 <= n, file[at + 1] == signature[1], file[at + 2] == signature[2], file[at + 3] == signature[3] else { continue }
            guard at + 16 <= n, file[at + 4] == 1, file[at + 5] == 0, file[at + 6] == 0, file[at + 7] == 0 else { continue }
            let size = load64(file, at + 8)
            // A collection whose own size is impossible is refused by libhdf5 itself (it checks
            // the collection against the file); only plausible collections are walked.
            guard size >= UInt64(minimumCollectionSize), size <= UInt64(n - at) else { continue }
            let end = at + Int(size)
            var o = at + 16
            var objects = 0
            while o + 16 <= end {
                let index = load16(file, o)
                let objectSize = load64(file, o + 8)
                if index == 0 { break }  // the free-space object ends the list
                let room = UInt64(end - (o + 16))
                guard objectSize <= room else {
                    return "global heap collection at byte \(at) (\(size) bytes): object \(index) claims \(objectSize) bytes, "
                        + "but only \(room) bytes remain in the collection"
                }
                let padded = (objectSize + 7) & ~7
                guard padded <= room else { break }
                o += 16 + Int(padded)
                objects += 1
                if objects > 1 << 20 { break }
            }
        }
        return nil
    }

    /// The superblock's "size of lengths" (the width of a heap object's size field), or nil when
    /// no superblock is found at 0, 512, 1024, … (libhdf5's own search).
    static func sizeOfLengths(_ file: UnsafeRawBufferPointer) -> Int? {
        let magic: [UInt8] = [0x89, 0x48, 0x44, 0x46, 0x0D, 0x0A, 0x1A, 0x0A]
        var at = 0
        while at + 16 <= file.count {
            if (0..<8).allSatisfy({ file[at + $0] == magic[$0] }) {
                switch file[at + 8] {
                case 0, 1: return Int(file[at + 14])
                case 2, 3: return Int(file[at + 10])
                default: return nil
                }
            }
            at = at == 0 ? 512 : at * 2
        }
        return nil
    }

    private static func load16(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    private static func load64(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) }
    }
}

/// A key naming one version of the file at `path` (path, size, modification time), for caches of
/// per-file verdicts; nil when the file cannot be stat'ed.
func fileVersionKey(_ path: String) -> String? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    return "\(path)\u{0}\(st.st_size)\u{0}\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
}

extension DataReader {
    /// Throws `.corruptFile` when a global heap collection of the file is damaged (see
    /// `GlobalHeapCheck`); called before libhdf5 reads variable-length data.
    func checkGlobalHeap() throws(HDF5Error) {
        if let problem = GlobalHeapCheck.problem(inFileAt: context.file) {
            throw context.error(.corruptFile,
                                "the variable-length data of \(context.subject) cannot be read safely: the file's global heap is damaged",
                                expected: "every global heap object inside its collection",
                                found: problem,
                                hint: HDF5Hint.corrupt)
        }
    }
}
