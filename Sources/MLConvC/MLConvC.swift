// The C ABI of mlconv (Sources/CMLConv/include/mlconv.h), as `@_cdecl` functions over the
// public `MLConv` API. Built as the dynamic library `libmlconv_c.so` (product `mlconv_c`).
//
// Ownership and threading rules are the header's. Every entry point catches every Swift error
// and turns it into a status code plus the thread's last-error message; nothing here traps on
// caller data (counts and shapes are checked, products use overflow-reporting arithmetic).
import CMLConv
import Foundation
import MLConv
import MLRuntime

// MARK: - Boxes behind the opaque pointers

/// What `mlconv_model*` points to.
final class CModel: @unchecked Sendable {
    let model: MLModel
    init(_ model: MLModel) { self.model = model }
}

/// What `mlconv_result*` points to: one prediction's outputs, in C-readable buffers owned here.
final class CResult {
    struct Entry {
        var name: UnsafeMutablePointer<CChar>
        var kind: Int32
        var dtype: Int32 = 0
        var shape: UnsafeMutablePointer<Int64>? = nil
        var rank: Int32 = 0
        var data: UnsafeMutableRawPointer? = nil
        var int64: Int64 = 0
        var double: Double = 0
        var string: UnsafeMutablePointer<CChar>? = nil
    }
    var entries: [Entry] = []

    deinit {
        for e in entries {
            free(e.name)
            free(e.shape)
            free(e.data)
            free(e.string)
        }
    }
}

// MARK: - Errors

/// An error of the ABI layer itself (bad arguments).
struct CABIError: Error, CustomStringConvertible {
    let status: mlconv_status
    /// The message, without the cause's text.
    let message: String
    /// The error this one wraps (a row's `FeatureError` in `mlconv_predict_batch`), kept as a
    /// value (issue 13).
    let cause: DiagnosticCause?
    init(_ status: mlconv_status, _ message: String, cause: (any Error)? = nil) {
        self.status = status; self.message = message; self.cause = cause.map(DiagnosticCause.init)
    }
    /// The message, then the cause's text.
    var description: String { cause.appended(to: message) }
}

/// The status for an error thrown while opening (`opening`) or predicting.
func status(of error: Error, opening: Bool) -> mlconv_status {
    if let e = error as? CABIError { return e.status }
    if let e = error as? MLModelError {
        switch e {
        case .fileNotFound, .notAModelFile, .unreadable, .cacheUnavailable: return MLCONV_ERROR_MODEL
        case .notCompilable: return MLCONV_ERROR_UNSUPPORTED
        case .unknownFeature, .typeMismatch, .invalidImage, .notAnImageInput: return MLCONV_ERROR_FEATURE
        case .invalidOption: return MLCONV_ERROR_INVALID_ARGUMENT
        }
    }
    if let e = error as? FeatureError {
        switch e {
        case .unsupportedModel, .appleProprietary: return MLCONV_ERROR_UNSUPPORTED
        case .invalidModel: return opening ? MLCONV_ERROR_MODEL : MLCONV_ERROR_PREDICTION
        default: return MLCONV_ERROR_FEATURE
        }
    }
    // MARK: input errors of the runtime
    // The header's MLCONV_ERROR_FEATURE: an input that is missing, unknown, of the wrong shape.
    if let e = error as? RuntimeError {
        switch e {
        case .missingInput, .unknownInput, .shapeMismatch, .shapeNotAllowed: return MLCONV_ERROR_FEATURE
        default: break
        }
    }
    return opening ? MLCONV_ERROR_MODEL : MLCONV_ERROR_PREDICTION
}

/// Records `error` as the thread's last error and returns its status.
@discardableResult
func fail(_ error: Error, opening: Bool) -> Int32 {
    let s = status(of: error, opening: opening)
    mlconv__set_last_error(diagnosticMessage(for: error))  // MARK: errors (issue 13): the one renderer
    return Int32(bitPattern: s.rawValue)
}

func succeed() { mlconv__set_last_error(nil) }

/// A `malloc`ed copy of `s` that the caller releases with `free` (`mlconv_string_free`).
/// - Throws: `CABIError` with `code` when the memory cannot be allocated.
func cString(_ s: String, code: mlconv_status = MLCONV_ERROR_PREDICTION) throws -> UnsafeMutablePointer<CChar> {
    guard let p = strdup(s) else {
        throw CABIError(code, "cannot allocate \(s.utf8.count + 1) bytes for a string")
    }
    return p
}

// MARK: - Options

func configuration(_ options: UnsafePointer<CChar>?) throws -> MLModelConfiguration {
    var c = MLModelConfiguration()
    guard let options else { return c }
    let text = String(cString: options)
    if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return c }
    guard let obj = try? JSONSerialization.jsonObject(with: Data(text.utf8)), let dict = obj as? [String: Any] else {
        throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "options_json is not a JSON object: \(text.prefix(200))")
    }
    for (key, value) in dict {
        switch key {
        case "cache_dir":
            guard let s = value as? String, !s.isEmpty else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "options_json: \"cache_dir\" must be a non-empty string") }
            c.cacheDirectory = URL(fileURLWithPath: s, isDirectory: true)
        case "use_cache":
            guard let b = value as? Bool else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "options_json: \"use_cache\" must be true or false") }
            c.usesCache = b
        case "reference":
            guard let b = value as? Bool else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "options_json: \"reference\" must be true or false") }
            c.usesReferenceKernels = b
        case "threads":
            guard let n = jsonInteger(value), n >= 1 else {
                throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "options_json: \"threads\" must be an integer ≥ 1, found \(value)")
            }
            c.threadCount = n
        default:
            throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT,
                            "options_json: unknown key \"\(key)\"; keys: cache_dir, use_cache, reference, threads")
        }
    }
    return c
}

// MARK: - Entry points

@_cdecl("mlconv_abi_version")
public func cABIVersion() -> Int32 { 1 }

@_cdecl("mlconv_open")
public func cOpen(_ path: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?) -> OpaquePointer? {
    do {
        guard let path else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_open: path is NULL") }
        let config = try configuration(options)
        let model = try MLModel(contentsOf: URL(fileURLWithPath: String(cString: path)), configuration: config)
        succeed()
        return OpaquePointer(Unmanaged.passRetained(CModel(model)).toOpaque())
    } catch {
        fail(error, opening: true)
        return nil
    }
}

@_cdecl("mlconv_close")
public func cClose(_ model: OpaquePointer?) {
    guard let model else { return }
    Unmanaged<CModel>.fromOpaque(UnsafeRawPointer(model)).release()
}

func box(_ model: OpaquePointer?) throws -> CModel {
    guard let model else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "the model is NULL") }
    return Unmanaged<CModel>.fromOpaque(UnsafeRawPointer(model)).takeUnretainedValue()
}

@_cdecl("mlconv_describe")
public func cDescribe(_ model: OpaquePointer?) -> UnsafeMutablePointer<CChar>? {
    do {
        let m = try box(model).model
        let data = try JSONSerialization.data(withJSONObject: describeJSON(m.modelDescription), options: [.sortedKeys])
        succeed()
        return try cString(String(decoding: data, as: UTF8.self), code: MLCONV_ERROR_MODEL)
    } catch {
        fail(error, opening: false)
        return nil
    }
}

@_cdecl("mlconv_string_free")
public func cStringFree(_ s: UnsafeMutablePointer<CChar>?) { free(s) }

@_cdecl("mlconv_compile_model")
public func cCompileModel(_ path: UnsafePointer<CChar>?, _ options: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
    do {
        guard let path else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_compile_model: path is NULL") }
        let config = try configuration(options)
        let url = try MLModel.compileModel(at: URL(fileURLWithPath: String(cString: path)), configuration: config)
        succeed()
        return try cString(url.path, code: MLCONV_ERROR_MODEL)
    } catch {
        fail(error, opening: true)
        return nil
    }
}

@_cdecl("mlconv_predict")
public func cPredict(_ model: OpaquePointer?, _ inputs: UnsafePointer<mlconv_feature>?, _ n: Int,
                     _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    do {
        let m = try box(model).model
        guard let out else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_predict: out is NULL") }
        let row = try provider(inputs, count: n, model: m)
        let result = try m.prediction(from: row)
        out.pointee = OpaquePointer(Unmanaged.passRetained(try cResult(result, model: m)).toOpaque())
        succeed()
        return 0
    } catch {
        return fail(error, opening: false)
    }
}

@_cdecl("mlconv_predict_batch")
public func cPredictBatch(_ model: OpaquePointer?, _ inputs: UnsafePointer<mlconv_feature>?, _ counts: UnsafePointer<Int>?,
                          _ batch: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    do {
        let m = try box(model).model
        guard let out else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_predict_batch: out is NULL") }
        guard batch >= 0 else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_predict_batch: batch is negative") }
        if batch == 0 { succeed(); return 0 }
        guard let counts else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_predict_batch: counts is NULL") }
        var rows: [FeatureProvider] = []
        var offset = 0
        for i in 0..<batch {
            let c = counts[i]
            guard c >= 0 else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_predict_batch: counts[\(i)] is negative") }
            let (next, o) = offset.addingReportingOverflow(c)
            guard !o else { throw CABIError(MLCONV_ERROR_INVALID_ARGUMENT, "mlconv_predict_batch: the counts overflow") }
            do {
                rows.append(try provider(c == 0 ? nil : inputs.map { $0 + offset }, count: c, model: m))
            } catch {
                throw CABIError(status(of: error, opening: false), "row \(i)", cause: error)
            }
            offset = next
        }
        let results = try m.predictions(from: rows)
        let boxes = try results.map { try cResult($0, model: m) }
        for (i, b) in boxes.enumerated() { out[i] = OpaquePointer(Unmanaged.passRetained(b).toOpaque()) }
        succeed()
        return 0
    } catch {
        return fail(error, opening: false)
    }
}

@_cdecl("mlconv_result_free")
public func cResultFree(_ result: OpaquePointer?) {
    guard let result else { return }
    Unmanaged<CResult>.fromOpaque(UnsafeRawPointer(result)).release()
}

func entry(_ result: OpaquePointer?, _ index: Int) -> CResult.Entry? {
    guard let result else { return nil }
    let r = Unmanaged<CResult>.fromOpaque(UnsafeRawPointer(result)).takeUnretainedValue()
    guard index >= 0, index < r.entries.count else { return nil }
    return r.entries[index]
}

@_cdecl("mlconv_result_count")
public func cResultCount(_ result: OpaquePointer?) -> Int {
    guard let result else { return 0 }
    return Unmanaged<CResult>.fromOpaque(UnsafeRawPointer(result)).takeUnretainedValue().entries.count
}

@_cdecl("mlconv_result_index")
public func cResultIndex(_ result: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int64 {
    guard let result, let name else { return -1 }
    let r = Unmanaged<CResult>.fromOpaque(UnsafeRawPointer(result)).takeUnretainedValue()
    for (i, e) in r.entries.enumerated() where strcmp(e.name, name) == 0 { return Int64(i) }
    return -1
}

@_cdecl("mlconv_result_name")
public func cResultName(_ r: OpaquePointer?, _ i: Int) -> UnsafePointer<CChar>? { entry(r, i).map { UnsafePointer($0.name) } }
@_cdecl("mlconv_result_kind")
public func cResultKind(_ r: OpaquePointer?, _ i: Int) -> Int32 { entry(r, i)?.kind ?? 0 }
@_cdecl("mlconv_result_dtype")
public func cResultDType(_ r: OpaquePointer?, _ i: Int) -> Int32 { entry(r, i)?.dtype ?? 0 }
@_cdecl("mlconv_result_rank")
public func cResultRank(_ r: OpaquePointer?, _ i: Int) -> Int32 { entry(r, i)?.rank ?? 0 }
@_cdecl("mlconv_result_shape")
public func cResultShape(_ r: OpaquePointer?, _ i: Int) -> UnsafePointer<Int64>? { entry(r, i)?.shape.map { UnsafePointer($0) } }
@_cdecl("mlconv_result_data")
public func cResultData(_ r: OpaquePointer?, _ i: Int) -> UnsafeRawPointer? { entry(r, i)?.data.map { UnsafeRawPointer($0) } }
@_cdecl("mlconv_result_int64")
public func cResultInt64(_ r: OpaquePointer?, _ i: Int) -> Int64 { entry(r, i)?.int64 ?? 0 }
@_cdecl("mlconv_result_double")
public func cResultDouble(_ r: OpaquePointer?, _ i: Int) -> Double { entry(r, i)?.double ?? 0 }
@_cdecl("mlconv_result_string")
public func cResultString(_ r: OpaquePointer?, _ i: Int) -> UnsafePointer<CChar>? { entry(r, i)?.string.map { UnsafePointer($0) } }
