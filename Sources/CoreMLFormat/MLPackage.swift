// .mlpackage directories: Manifest.json names the root model spec inside Data/.
import Foundation

/// An `.mlpackage` directory: `Manifest.json` plus `Data/<item paths>`. mlconv reads the root
/// model spec; the ML program weights (`weights/weight.bin`) are only located, not read.
public struct MLPackage: Sendable {
    /// The package directory.
    public let path: String
    /// Absolute path of the root model spec (normally `Data/com.apple.CoreML/model.mlmodel`).
    public let rootModelPath: String
    /// The weights directory named by the manifest, if any (ML programs keep `weight.bin` there).
    public let weightsPath: String?
    /// The decoded root model spec.
    public let model: Spec.Model

    /// Reads `Manifest.json`, finds `rootModelIdentifier`'s item and decodes that model.
    ///
    /// - Throws: `CoreMLFormatError.invalidPackage` when the manifest is missing or malformed or
    ///   names a missing file; `.notAModel` when the root model bytes are not a model.
    public static func read(at path: String) throws -> MLPackage {
        let root = URL(fileURLWithPath: path)
        let manifestURL = root.appendingPathComponent("Manifest.json")
        guard let data = try? Data(contentsOf: manifestURL) else {
            throw CoreMLFormatError.invalidPackage(path: path, expected: "a Manifest.json file",
                                                   found: "none (is this an .mlpackage directory?)")
        }
        guard let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw CoreMLFormatError.invalidPackage(path: manifestURL.path, expected: "a JSON object",
                                                   found: "\(data.count) bytes that are not a JSON object")
        }
        guard let rootID = json["rootModelIdentifier"] as? String else {
            throw CoreMLFormatError.invalidPackage(path: manifestURL.path, expected: "a rootModelIdentifier string",
                                                   found: "keys \(json.keys.sorted())")
        }
        guard let items = json["itemInfoEntries"] as? [String: Any] else {
            throw CoreMLFormatError.invalidPackage(path: manifestURL.path, expected: "an itemInfoEntries object",
                                                   found: "keys \(json.keys.sorted())")
        }
        guard let entry = items[rootID] as? [String: Any], let itemPath = entry["path"] as? String else {
            throw CoreMLFormatError.invalidPackage(path: manifestURL.path,
                                                   expected: "an itemInfoEntries entry \(rootID) with a path",
                                                   found: "entries \(items.keys.sorted())")
        }
        let dataDir = root.appendingPathComponent("Data")
        let modelURL = dataDir.appendingPathComponent(itemPath)
        guard FileManager.default.fileExists(atPath: modelURL.path) else {
            throw CoreMLFormatError.invalidPackage(path: path, expected: "the root model at Data/\(itemPath)",
                                                   found: "no such file")
        }
        var weights: String?
        for (id, value) in items where id != rootID {
            if let e = value as? [String: Any], let p = e["path"] as? String, (e["name"] as? String) == "weights" {
                weights = dataDir.appendingPathComponent(p).path
            }
        }
        let model = try Spec.Model.load(contentsOf: modelURL.path)
        return MLPackage(path: path, rootModelPath: modelURL.path, weightsPath: weights, model: model)
    }
}
