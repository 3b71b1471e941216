import Diagnostics
import CZip
import Foundation
import HDF5

/// A Keras 3 native `.keras` archive (`model.save('model.keras')`): a ZIP file holding
/// `config.json` (the architecture, as `model.to_json()`), `model.weights.h5` (the weights in
/// Keras 3's `layers/<layer>/vars/<i>` layout) and `metadata.json` (`keras_version`, date),
/// read with libzip. Nothing is extracted to disk: the members are read into memory, the
/// weights opened as an HDF5 file image (`HDF5File(image:name:)`).
///
/// Untrusted input: every member's declared size is bounded (`Limits`) before it is read, and
/// reading stops at the declared size (a member that inflates past it — a ZIP bomb — is
/// refused, as is one whose CRC does not match: libzip checks it at the end of the member).
/// Member names that are absolute or climb out of the archive (`..`) are refused, as are
/// encrypted members.
struct KerasArchive {
    /// Bounds on what is read from an archive.
    struct Limits {
        /// Largest uncompressed `model.weights.h5` (default 4 GiB).
        var maxWeightsBytes: UInt64 = 4 << 30
        /// Largest uncompressed `config.json` / `metadata.json` (default 64 MiB).
        var maxJSONBytes: UInt64 = 64 << 20
        /// Most members in the archive.
        var maxEntries: Int64 = 100_000
    }

    static let configMember = "config.json"
    static let weightsMember = "model.weights.h5"
    static let metadataMember = "metadata.json"

    /// `config.json` text.
    let config: String
    /// `metadata.json` text (nil when absent).
    let metadata: String?
    /// The bytes of `model.weights.h5`.
    let weights: [UInt8]

    /// The `keras_version` of `metadata.json`, nil when absent or unreadable.
    var kerasVersion: String? {
        guard let m = metadata, let j = try? KerasJSON.parse(m) else { return nil }
        return j["keras_version"]?.string
    }

    /// Whether the file at `url` starts with a ZIP signature (local file header or, for an empty
    /// archive, the end-of-central-directory record).
    static func isZip(_ url: URL) -> Bool {
        guard let h = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? h.close() }
        // `read(upToCount:)` throws (a directory, an I/O error) where `readData(ofLength:)` traps.
        guard let data = try? h.read(upToCount: 4) else { return false }
        let head = [UInt8](data)
        return head == [0x50, 0x4B, 0x03, 0x04] || head == [0x50, 0x4B, 0x05, 0x06]
    }

    /// Reads the archive at `url`.
    /// - Throws: `KerasConversionError.invalidArchive` naming the archive, the member and the
    ///   problem (not a ZIP file, a missing member, a member over the limits, a name that is
    ///   absolute or contains `..`, an encrypted member, a CRC or inflate error).
    static func read(_ url: URL, limits: Limits = .init()) throws -> KerasArchive {
        let path = url.path
        func fail(_ member: String?, _ problem: String, _ hint: String) -> KerasConversionError {
            .invalidArchive(file: path, member: member, problem: problem, hint: hint)
        }
        let resave = "re-save the model with Keras 3 `model.save('model.keras')`, or as HDF5 with `model.save('model.h5')`"
        var code: Int32 = 0
        guard let za = zip_open(path, mlconv_ZIP_RDONLY() | mlconv_ZIP_CHECKCONS(), &code) else {
            var err = zip_error_t()
            zip_error_init_with_code(&err, code)
            defer { zip_error_fini(&err) }
            throw fail(nil, "libzip cannot open it as a ZIP archive: \(String(cString: zip_error_strerror(&err)))",
                       "a `.keras` file is a ZIP archive written by Keras 3; this one is damaged or is not one: " + resave)
        }
        defer { zip_discard(za) }
        let count = zip_get_num_entries(za, 0)
        guard count >= 0, count <= limits.maxEntries else {
            throw fail(nil, "it lists \(count) members (at most \(limits.maxEntries) are read)", resave)
        }
        for i in 0..<count {
            guard let cname = zip_get_name(za, zip_uint64_t(i), mlconv_ZIP_FL_ENC_GUESS()) else {
                throw fail(nil, "member \(i) has no readable name", resave)
            }
            let name = String(cString: cname)
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            if name.hasPrefix("/") || name.hasPrefix("\\") || name.contains("\\") || parts.contains("..") || name.contains(":") {
                throw fail(name, "the member name is absolute or leaves the archive (path traversal)",
                           "this archive was not written by Keras; do not extract it. " + resave)
            }
        }

        func member(_ name: String, limit: UInt64, required: Bool) throws -> [UInt8]? {
            let index = zip_name_locate(za, name, 0)
            guard index >= 0 else {
                if !required { return nil }
                var names: [String] = []
                for i in 0..<min(count, 20) { if let c = zip_get_name(za, zip_uint64_t(i), mlconv_ZIP_FL_ENC_GUESS()) { names.append(String(cString: c)) } }
                throw fail(name, "the archive has no member '\(name)' (members: \(names.isEmpty ? "none" : names.joined(separator: ", ")))",
                           "a Keras 3 `.keras` archive holds config.json, model.weights.h5 and metadata.json: " + resave)
            }
            var st = zip_stat_t()
            zip_stat_init(&st)
            guard zip_stat_index(za, zip_uint64_t(index), 0, &st) == 0, st.valid & mlconv_ZIP_STAT_SIZE() != 0 else {
                throw fail(name, "libzip cannot read the member's size", resave)
            }
            if st.valid & mlconv_ZIP_STAT_ENCRYPTION_METHOD() != 0, st.encryption_method != mlconv_ZIP_EM_NONE() {
                throw fail(name, "the member is encrypted", "Keras never encrypts archives: " + resave)
            }
            guard st.size <= limit else {
                throw fail(name, "the member inflates to \(st.size) bytes, over the limit of \(limit) bytes (a ZIP bomb, or a model too large to read into memory)",
                           "check where the file comes from; a genuine model this large: save it with `model.save('model.h5')`")
            }
            guard let f = zip_fopen_index(za, zip_uint64_t(index), 0) else {
                throw fail(name, "libzip cannot open the member: \(String(cString: zip_strerror(za)))", resave)
            }
            defer { zip_fclose(f) }
            let size = Int(st.size)
            var bytes = [UInt8](repeating: 0, count: size + 1)
            var total = 0
            while true {
                let n = bytes.withUnsafeMutableBytes { raw -> Int64 in
                    guard let base = raw.baseAddress else { return -1 }
                    return zip_fread(f, base + total, zip_uint64_t(raw.count - total))
                }
                if n < 0 {
                    throw fail(name, "reading the member failed: \(String(cString: zip_file_strerror(f)))",
                               "the archive is damaged (truncated download?): " + resave)
                }
                if n == 0 { break }
                total += Int(n)
                if total > size {
                    throw fail(name, "the member inflates past its declared size of \(size) bytes (a ZIP bomb or a damaged archive)",
                               "check where the file comes from: " + resave)
                }
            }
            guard total == size else {
                throw fail(name, "the member holds \(total) bytes, not the \(size) its header declares", "the archive is damaged: " + resave)
            }
            bytes.removeLast()
            return bytes
        }

        guard let configBytes = try member(configMember, limit: limits.maxJSONBytes, required: true),
              let config = String(bytes: configBytes, encoding: .utf8) else {
            throw fail(configMember, "config.json is not UTF-8 text", resave)
        }
        let metadata = try member(metadataMember, limit: limits.maxJSONBytes, required: false).flatMap { String(bytes: $0, encoding: .utf8) }
        guard let weights = try member(weightsMember, limit: limits.maxWeightsBytes, required: true) else {
            throw fail(weightsMember, "the archive has no model.weights.h5", resave)
        }
        return KerasArchive(config: config, metadata: metadata, weights: weights)
    }

    /// The weights as a `KerasWeightFile` (an in-memory HDF5 file named
    /// "<archive>:model.weights.h5" in messages).
    func weightFile(archivePath: String) throws -> KerasWeightFile {
        let name = archivePath + ":" + Self.weightsMember
        do {
            return HDF5KerasFile(try HDF5File(image: weights, name: name))
        } catch {
            throw KerasConversionError.invalidArchive(file: archivePath, member: Self.weightsMember, problem: "the weights are not a readable HDF5 file",
                                                      hint: "the archive's weights are damaged: re-save the model with Keras 3 `model.save('model.keras')`",
                                                      cause: DiagnosticCause(error))
        }
    }
}

/// What a Keras model path holds: the weight file (HDF5 on disk, or the weights of a `.keras`
/// archive in memory) and, for an archive, its architecture and Keras version.
struct KerasOpenedFile {
    var file: KerasWeightFile
    /// The archive's config.json (nil for HDF5 files).
    var archiveConfig: String?
    /// The archive's `keras_version` (metadata.json).
    var archiveVersion: String?

    /// Opens `url`: a `.keras` archive (detected by its ZIP signature) or an HDF5 file.
    static func open(_ url: URL) throws -> KerasOpenedFile {
        if KerasArchive.isZip(url) {
            let a = try KerasArchive.read(url)
            return KerasOpenedFile(file: try a.weightFile(archivePath: url.path), archiveConfig: a.config, archiveVersion: a.kerasVersion)
        }
        return KerasOpenedFile(file: try openKerasWeightFile(url))
    }
}
