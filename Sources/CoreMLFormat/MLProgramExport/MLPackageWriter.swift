// Writing `.mlpackage` directories as coremltools lays them out:
//
//   <name>.mlpackage/
//     Manifest.json                        fileFormatVersion 1.0.0, itemInfoEntries, rootModelIdentifier
//     Data/com.apple.CoreML/model.mlmodel  the model spec (protobuf)
//     Data/com.apple.CoreML/weights/       ML program weights (weight.bin), when there are any
//
// Each item of `itemInfoEntries` is keyed by a UUID and has author "com.apple.CoreML", a
// description ("CoreML Model Specification" / "CoreML Model Weights"), a name and a path
// relative to Data/. The whole directory appears at once (`AtomicDirectory`).
import AtomicFile
import Diagnostics
import Foundation

public enum MLPackageWriter {
    /// The model spec's path inside `Data/`.
    public static let modelItemPath = "com.apple.CoreML/model.mlmodel"
    /// The weights directory's path inside `Data/`.
    public static let weightsItemPath = "com.apple.CoreML/weights"
    /// How a MIL `BlobFileValue.fileName` names the weight file (coremltools' convention).
    public static let weightFileReference = "@model_path/weights/weight.bin"

    /// Writes a package holding the serialized model `modelBytes` and, when given, the weight
    /// file bytes (`weights/weight.bin`, see `MILBlobWriter`). An existing package at `path` is
    /// replaced as a whole; on failure nothing new is left behind and the old one is kept.
    ///
    /// - Throws: `MLProgramExportError.cannotWrite` naming the package path.
    public static func write(modelBytes: [UInt8], weights: MILBlobWriter?, to path: String) throws {
        do {
            try AtomicDirectory.write(to: path) { tmp in
                let fm = FileManager.default
                let data = (tmp as NSString).appendingPathComponent("Data")
                let model = (data as NSString).appendingPathComponent(modelItemPath)
                try fm.createDirectory(atPath: (model as NSString).deletingLastPathComponent,
                                       withIntermediateDirectories: true)
                try Data(modelBytes).write(to: URL(fileURLWithPath: model))
                let modelID = UUID().uuidString
                var items: [String: Any] = [
                    modelID: ["author": "com.apple.CoreML", "description": "CoreML Model Specification",
                              "name": "model.mlmodel", "path": modelItemPath],
                ]
                if let weights {
                    let dir = (data as NSString).appendingPathComponent(weightsItemPath)
                    try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
                    try Data(weights.bytes).write(to: URL(fileURLWithPath: (dir as NSString).appendingPathComponent("weight.bin")))
                    items[UUID().uuidString] = ["author": "com.apple.CoreML", "description": "CoreML Model Weights",
                                                "name": "weights", "path": weightsItemPath]
                }
                let manifest: [String: Any] = ["fileFormatVersion": "1.0.0", "itemInfoEntries": items,
                                               "rootModelIdentifier": modelID]
                let json = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                try json.write(to: URL(fileURLWithPath: (tmp as NSString).appendingPathComponent("Manifest.json")))
            }
        } catch let e as AtomicFileError {
            throw MLProgramExportError.cannotWrite(path: path, reason: "", cause: DiagnosticCause(e))
        } catch let e as MLProgramExportError {
            throw e
        } catch {
            throw MLProgramExportError.cannotWrite(path: path, reason: "", cause: DiagnosticCause(error))
        }
    }

    /// Writes `model` (encoded with `Spec.Model.encode()`) and its weights as a package.
    ///
    /// - Throws: `CoreMLFormatError.cannotEncode` from encoding; `MLProgramExportError.cannotWrite`.
    public static func write(model: Spec.Model, weights: MILBlobWriter?, to path: String) throws {
        try write(modelBytes: try model.encode(), weights: weights, to: path)
    }
}
