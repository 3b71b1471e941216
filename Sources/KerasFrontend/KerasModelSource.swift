import Diagnostics
import Foundation

/// A Keras model as found on disk: the HDF5 file, its weight layout, the architecture (from the
/// `model_config` attribute or the JSON sidecar), the Keras version and backend.
struct KerasModelSource {
    /// The HDF5 file (weights, and the architecture for full models).
    let file: KerasWeightFile
    /// How the file stores weights.
    let layout: KerasWeightLayout
    /// The architecture.
    let model: KerasModelConfig
    /// Keras version used for version-dependent semantics (the JSON's when the architecture
    /// comes from a sidecar, else the file's).
    let version: KerasVersion
    /// `keras_version` recorded in the HDF5 file.
    let fileVersion: KerasVersion
    /// Backend recorded ("tensorflow", "theano", "jax", …), nil when absent.
    let backend: String?
    /// The architecture JSON's path when given.
    let architecturePath: String?

    var isWeightsOnly: Bool { layout != .fullModel }

    /// Detects the kind of Keras file.
    static func detectLayout(_ file: KerasWeightFile) throws -> KerasWeightLayout? {
        let attrs = try file.attributeNames("/")
        if attrs.contains("model_config") { return .fullModel }
        if attrs.contains("layer_names") { return .legacyWeightsOnly }
        if file.isGroup("/layers"), try file.childNames("/layers").contains(where: { file.isGroup("/layers/\($0)/vars") }) {
            return .keras3WeightsOnly
        }
        if file.isGroup("/model_weights"), try file.stringArrayAttribute("layer_names", of: "/model_weights") != nil {
            return .legacyWeightsOnly
        }
        return nil
    }

    /// A short listing of what a non-Keras HDF5 file holds, for `notKerasFile`.
    static func describeRoot(_ file: KerasWeightFile) -> String {
        let attrs = (try? file.attributeNames("/")) ?? []
        let members = ((try? file.childNames("/")) ?? []).prefix(12).map { name -> String in
            let p = "/" + name
            if file.isDataset(p) { return "dataset '\(name)' \(formatShapeText((try? file.datasetShape(p)) ?? []))" }
            if file.isGroup(p) {
                let kids = ((try? file.childNames(p)) ?? [])
                return "group '\(name)' (\(kids.prefix(4).joined(separator: ", "))\(kids.count > 4 ? ", …" : ""))"
            }
            return "'\(name)'"
        }
        return "root attributes [\(attrs.sorted().joined(separator: ", "))], members [\(members.joined(separator: "; "))]"
    }

    /// Loads from an opened file and optional architecture JSON text.
    /// - Parameter versionHint: the Keras version recorded outside the HDF5 file (a `.keras`
    ///   archive's metadata.json), used when neither the file nor the JSON records one.
    static func load(file: KerasWeightFile, architectureJSON: String?, architecturePath: String?,
                     versionHint: String? = nil) throws -> KerasModelSource {
        guard let layout = try detectLayout(file) else {
            throw KerasConversionError.notKerasFile(file: file.path, found: describeRoot(file))
        }
        func attr(_ name: String) throws -> String? {
            if let v = try file.stringAttribute(name, of: "/") { return v }
            if file.isGroup("/model_weights") { return try file.stringAttribute(name, of: "/model_weights") }
            return nil
        }
        let fileVersion = KerasVersion(try attr("keras_version"))
        var backend = try attr("backend")
        var version = fileVersion
        let model: KerasModelConfig
        if let text = architectureJSON {
            let archFile = architecturePath ?? "architecture JSON"
            var json: KerasJSON
            do {
                json = try KerasJSON.parse(text)
                if case let .string(inner) = json { json = try KerasJSON.parse(inner) }
            } catch let e as KerasJSONError {
                throw KerasConversionError.invalidArchitecture(file: archFile, message: "not JSON", cause: DiagnosticCause(e))
            }
            model = try KerasModelConfig.parse(json, file: archFile)
            if let v = json["keras_version"]?.string { version = KerasVersion(v) }
            if backend == nil { backend = json["backend"]?.string }
        } else {
            guard layout == .fullModel, let text = try file.stringAttribute("model_config", of: "/") else {
                var names = (try? file.stringArrayAttribute("layer_names", of: "/")) ?? nil
                if names == nil, layout == .keras3WeightsOnly {
                    names = (try? file.childNames("/layers"))?.compactMap { try? file.stringAttribute("name", of: "/layers/\($0)/vars") ?? $0 }
                }
                throw KerasConversionError.weightsOnlyWithoutArchitecture(file: file.path, layerNames: names ?? [])
            }
            model = try KerasModelConfig.parse(text: text, file: file.path)
        }
        if version.isUnknown, let v = versionHint { version = KerasVersion(v) }
        // Files without a version: Keras 3 configs name the input shape `batch_shape`.
        if version.isUnknown, model.allLayers().contains(where: { $0.layer.config["batch_shape"] != nil }) {
            version = KerasVersion("3.0.0")
        }
        return KerasModelSource(file: file, layout: layout, model: model, version: version, fileVersion: fileVersion,
                                backend: backend, architecturePath: architecturePath)
    }

    /// Loads a model file (and its architecture JSON sidecar for weights-only files). A Keras 3
    /// `.keras` archive brings its own architecture (config.json), which `architectureJSON`
    /// replaces when given.
    static func load(url: URL, architectureJSON: URL?) throws -> KerasModelSource {
        let opened = try KerasOpenedFile.open(url)
        var text: String? = opened.archiveConfig
        var textPath: String? = opened.archiveConfig == nil ? nil : url.path + ":" + KerasArchive.configMember
        if let a = architectureJSON {
            do { text = try String(contentsOf: a, encoding: .utf8) } catch {
                throw KerasConversionError.invalidArchitecture(file: a.path, message: "cannot read the file", cause: DiagnosticCause(error))
            }
            textPath = a.path
        }
        return try load(file: opened.file, architectureJSON: text, architecturePath: textPath, versionHint: opened.archiveVersion)
    }
}
