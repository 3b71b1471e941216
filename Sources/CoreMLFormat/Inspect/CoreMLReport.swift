import Foundation

/// What `CoreMLInspector` found in a Core ML model: the facts Xcode's model viewer shows, as a
/// JSON-ready dictionary and as human-readable text.
///
/// Top-level keys of `jsonObject` (absent when not applicable):
/// - `file`, `fileName`, `format` ("mlmodel" or "mlpackage"), `fileSizeBytes`, `package`
///   (`rootModelPath`, `weightsPath`, `weightsBytes`);
/// - `modelType` (Apple's name, e.g. "neuralNetworkClassifier", "pipeline", "mlProgram"),
///   `specificationVersion`, `minimumDeploymentTarget` (`iOS`, `macOS`, `tvOS`, `watchOS`),
///   `isUpdatable`;
/// - `inputs`, `outputs`, `trainingInputs`, `states`: arrays of features with `name`,
///   `shortDescription`, `type` ("multiArray", "image", "int64", "double", "string",
///   "dictionary", "sequence", "state"), `typeDescription` (text as in the text report),
///   `isOptional`, and per type `shape`, `dataType`, `shapeFlexibility`, `width`, `height`,
///   `colorSpace`, `sizeFlexibility`, `keyType`, `elementType`, `sizeRange`;
/// - `predictedFeatureName`, `predictedProbabilitiesName`, `metadata` (`author`, `license`,
///   `shortDescription`, `versionString`, `userDefined`);
/// - `classLabels` (`count`, `type` "string"/"int64", `first`: up to 10 labels);
/// - `neuralNetwork` (`layerCount`, `layerTypes` {type: count}, `parameterCount`,
///   `weightPrecision` {precision: count of weight tensors}, `customLayerClassNames`
///   {class: count}, `preprocessing`, `layers` [{`name`, `type`, `inputs`, `outputs`, `summary`,
///   `parameterCount`, `precision`, `className`}], `arrayInputShapeMapping`,
///   `imageInputShapeMapping`, `updatableLayerCount`, `hasUpdateParameters`);
/// - `pipeline` (`stageCount`, `stages` [{`index`, `name`, + the stage's own report keys}]);
/// - `details`: what mlconv reads of other model kinds (trees, GLM weights, SVM kernel, k-NN,
///   text models, feature prints, ML program functions and op counts, …);
/// - `mlconv` (`canImport`, `canRun`, `summary`, `unsupportedLayers`, `customLayerClassNames`);
/// - `notes` (plain statements, e.g. "mlProgram: runs with `mlconv predict` …",
///   spec-version inconsistencies) and `warnings` (fields mlconv's schema does not
///   know, from `Spec.Model.unknownFieldWarnings`).
public struct CoreMLReport {
    /// The report as JSON-compatible values (String, Int, Double, Bool, arrays, dictionaries),
    /// for `JSONSerialization` (`mlconv inspect --json`).
    public var jsonObject: [String: Any]
    /// The report as text, one fact per line, sections separated by blank lines.
    public var text: String

    /// A report from its two renderings.
    public init(jsonObject: [String: Any], text: String) {
        self.jsonObject = jsonObject
        self.text = text
    }

    /// Apple's name of the model type, e.g. "neuralNetwork".
    public var modelType: String { jsonObject["modelType"] as? String ?? "none" }

    /// The model's specification version.
    public var specificationVersion: Int { jsonObject["specificationVersion"] as? Int ?? 0 }

    /// `jsonObject` serialized as pretty-printed JSON with sorted keys.
    public func jsonData() throws -> Data {
        try JSONSerialization.data(withJSONObject: jsonObject, options: [.prettyPrinted, .sortedKeys])
    }
}
