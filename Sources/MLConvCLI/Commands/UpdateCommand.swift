import CoreMLFormat
import Foundation
import MLPrediction
import MLTraining
#if canImport(Glibc)
import Glibc
#endif

/// `mlconv update Model.mlmodel --training-data examples.json|examples.csv|DIR -o Personal.mlmodel`
enum UpdateCommand: Command {
    static let name = "update"
    static let summary = "train an updatable Core ML model on examples (on-device personalisation)"
    static let help = """
    Usage: mlconv update <model.mlmodel> --training-data <examples.json|examples.csv|DIR> -o <out.mlmodel>
                         [--epochs N] [--learning-rate X] [--seed N] [--shuffle | --no-shuffle]
                         [--add-loss cross-entropy|mse [--loss-input NAME] [--target NAME]]

    Updates an updatable Core ML model as Core ML's MLUpdateTask does and writes the personalised
    model (still updatable): neural networks (convolution / innerProduct layers marked updatable,
    one cross-entropy or mean-squared-error loss, SGD or Adam), k-nearest-neighbours classifiers
    (the examples are added), and pipelines whose last stage is one of those.

    Training data, typed by the model's training inputs (`mlconv inspect` lists them):
      examples.json   a list of objects, feature name → value
      examples.csv    a header row of feature names, one example per row
      DIR             one sub-folder per label holding PNG/JPEG images (as Create ML lays out
                      image data), for a model with one image input

    Prints the loss of every epoch (a progress bar when the output is a terminal). --epochs and
    --learning-rate override the model's values and must lie within what the model allows.

    A model marked updatable whose update parameters have no loss layer (Core ML refuses it, and
    so does mlconv by default) can be repaired explicitly with --add-loss: it adds the loss layer
    as coremltools' set_categorical_cross_entropy_loss / set_mean_squared_error_loss write it,
    the training inputs (the model's inputs and the target: a classifier's label feature, or
    <loss input>_true), and raises specificationVersion to 4. The written model then updates
    again without the flag.

    Options:
      -o, --output FILE     the updated .mlmodel (written atomically)
      --add-loss KIND       add the missing loss layer first: cross-entropy (on a softmax output;
                            default: the classifier's probabilities, else the last softmax) or
                            mse (default: the only multi-array output)
      --loss-input NAME     the blob the added loss reads
      --target NAME         the added loss layer's target (default: <loss input>_true)
      --epochs N            epochs to run
      --learning-rate X     the optimizer's learning rate
      --seed N              seed of the example shuffle
      --shuffle, --no-shuffle   reorder the examples every epoch (default: the model's setting)
    """
    static let spec = OptionSpec(flags: ["--shuffle", "--no-shuffle"],
                                 single: ["--training-data", "--output", "--epochs", "--learning-rate", "--seed",
                                          "--add-loss", "--loss-input", "--target"],
                                 aliases: ["-o": "--output"], positionalRange: 1...1)

    // Swift 6.3.1 crashes in release builds optimising this function (SIL CopyPropagation:
    // "Found outside of lifetime use" on the switch over Spec.ModelType); not optimised until fixed.
    @_optimize(none)
    static func run(_ args: ParsedArguments, console: Console) throws -> Int32 {
        let path = args.positional[0]
        let output = try args.required("--output")
        let dataPath = try args.required("--training-data")
        var model = try Spec.Model.load(contentsOf: path)
        let name = URL(fileURLWithPath: path).lastPathComponent
        if let repair = try lossRepair(args) {
            model = try repair.repaired(model, name: name)
            if let p = try model.neuralNetwork?.updateParameters(file: name), let l = p.lossLayers.first {
                let (input, target): (String, String)
                switch l.lossLayerType {
                case let .categoricalCrossEntropyLossLayer(c)?: (input, target) = (c.input, c.target)
                case let .meanSquaredErrorLossLayer(m)?: (input, target) = (m.input, m.target)
                case nil: (input, target) = ("", "")
                }
                console.print("\(name): added loss layer '\(l.name)' (\(repair.loss.name) of '\(input)' vs '\(target)'); training inputs "
                    + (model.description?.trainingInput.map(\.name).joined(separator: ", ") ?? ""))
            }
        }
        var overrides = UpdateParameterOverrides()
        overrides.epochs = try args.int("--epochs")
        if let lr = args.value("--learning-rate") {
            guard let v = Double(lr), v.isFinite else { throw UsageError("--learning-rate takes a number, found '\(lr)'") }
            overrides.learningRate = v
        }
        if let s = args.value("--seed") {
            guard let v = Int64(s) else { throw UsageError("--seed takes a whole number, found '\(s)'") }
            overrides.seed = v
        }
        if args.has("--shuffle") && args.has("--no-shuffle") { throw UsageError("give --shuffle or --no-shuffle, not both") }
        if args.has("--shuffle") { overrides.shuffle = true }
        if args.has("--no-shuffle") { overrides.shuffle = false }
        // A k-nearest-neighbours update only adds the examples: training options do not apply.
        let knn = model.kind == .kNearestNeighborsClassifier || model.pipelineModels.last?.kind == .kNearestNeighborsClassifier
        if knn, let opt = ["--epochs", "--learning-rate", "--seed", "--shuffle", "--no-shuffle"].first(where: { args.has($0) || args.value($0) != nil }) {
            throw UsageError("\(opt) does not apply to a k-nearest-neighbours classifier: its update adds the examples to the index")
        }

        // A neural network's update description is checked before the examples are read, so a
        // model Core ML would refuse is refused with the rule (and the repair hint), whatever the data.
        if model.neuralNetwork != nil {
            do {
                _ = try NetworkUpdateDescription(model: model, name: name, overrides: overrides)
            } catch let e as TrainingError {
                if case let .invalidUpdateDescription(_, _, rule, _) = e, rule == "the update parameters have no loss layer" {
                    throw CLIError("\(e); to add one as coremltools would have, give --add-loss cross-entropy (on a softmax output) or --add-loss mse")
                }
                throw e
            }
        }
        let rows = try trainingRows(dataPath, model: model, name: name)
        let bar = isatty(STDOUT_FILENO) == 1
        var totalBatches = 0
        // Read before the closure: Swift 6.3.1's release optimiser crashes on the captured `var model`.
        let isKNearestNeighbors = model.kind == .kNearestNeighborsClassifier
            || model.pipelineModels.last?.kind == .kNearestNeighborsClassifier
        let task = try UpdateTask(model: model, name: name, trainingData: rows, parameters: overrides) { ctx in
            let s = ctx.parameters
            switch ctx.event {
            case .trainingBegin:
                if isKNearestNeighbors {
                    console.print("\(name): \(rows.count) example\(rows.count == 1 ? "" : "s") added to the k-nearest-neighbours index")
                } else if let s {
                    let opt: String
                    switch s.optimizer {
                    case let .sgd(lr, m): opt = "SGD (learning rate \(lr), momentum \(m))"
                    case let .adam(lr, b1, b2, e): opt = "Adam (learning rate \(lr), beta1 \(b1), beta2 \(b2), eps \(e))"
                    }
                    totalBatches = (rows.count + max(1, s.miniBatchSize) - 1) / max(1, s.miniBatchSize)
                    console.print("\(name): \(rows.count) examples, \(s.epochs) epoch(s), mini-batch \(s.miniBatchSize), \(opt)"
                        + (s.shuffle ? ", shuffled (seed \(s.seed))" : ""))
                }
            case .miniBatchEnd:
                if bar, let s {
                    let done = ctx.metrics.miniBatchIndex + 1
                    let width = 30
                    let filled = totalBatches > 0 ? width * done / totalBatches : width
                    let line = "\r  epoch \(ctx.metrics.epochIndex + 1)/\(s.epochs) ["
                        + String(repeating: "#", count: filled) + String(repeating: " ", count: max(0, width - filled))
                        + "] \(done)/\(totalBatches)  loss \(format(ctx.metrics.lossValue))"
                    fputs(line, stdout)
                    fflush(stdout)
                }
            case .epochEnd:
                if bar { fputs("\r\u{1B}[K", stdout) }
                let total = s?.epochs ?? 1
                console.print("epoch \(ctx.metrics.epochIndex + 1)/\(total)  loss \(ctx.metrics.lossValue.isNaN ? "n/a (examples added)" : format(ctx.metrics.lossValue))")
            }
        }
        let result = try task.run()
        let updated = try result.model()
        try updated.write(toFile: output)
        console.print("wrote \(output) (updatable: \(updated.isUpdatable ? "yes" : "no"))")
        return 0
    }

    static func format(_ x: Double) -> String { String(format: "%.6f", x) }

    /// The --add-loss repair, or nil without the flag (--loss-input / --target need it).
    static func lossRepair(_ args: ParsedArguments) throws -> NetworkUpdateRepair? {
        guard let kind = args.value("--add-loss") else {
            if args.value("--loss-input") != nil || args.value("--target") != nil {
                throw UsageError("--loss-input and --target describe the loss added by --add-loss; give --add-loss too")
            }
            return nil
        }
        let loss: LossFunction
        switch kind.lowercased() {
        case "cross-entropy", "categorical-cross-entropy", "ce": loss = .categoricalCrossEntropy
        case "mse", "mean-squared-error": loss = .meanSquaredError
        default: throw UsageError("--add-loss takes cross-entropy or mse, found '\(kind)'")
        }
        return NetworkUpdateRepair(loss: loss, lossInput: args.value("--loss-input"), target: args.value("--target"))
    }

    /// Rows from a JSON / CSV file or a folder of labelled image folders.
    static func trainingRows(_ path: String, model: Spec.Model, name: String) throws -> [FeatureProvider] {
        let desc = UpdateTask.trainingDescription(of: model)
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw CLIError("--training-data '\(path)' does not exist")
        }
        if isDir.boolValue { return try imageFolderRows(path, description: desc, model: model, name: name) }
        let data = try readUserFile(URL(fileURLWithPath: path), what: "--training-data")
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "json": return try FeatureJSON.rows(from: data, description: desc, model: name)
        case "csv":
            guard let text = String(data: data, encoding: .utf8) else { throw CLIError("'\(path)' is not UTF-8 text") }
            return try FeatureCSV.rows(from: text, description: desc, model: name)
        default:
            throw CLIError("--training-data '\(path)': give a .json or .csv file, or a folder of labelled image folders")
        }
    }

    /// One row per image in DIR/<label>/: the model's image training input and its label feature.
    static func imageFolderRows(_ dir: String, description desc: Spec.ModelDescription, model: Spec.Model,
                                name: String) throws -> [FeatureProvider] {
        let images = desc.input.compactMap { f -> (String, Spec.ImageFeatureType)? in
            if case let .image(t)? = f.type?.kind { return (f.name, t) } else { return nil }
        }
        guard images.count == 1, let (imageName, imageType) = images.first else {
            throw CLIError("a folder of images needs a model with exactly one image training input; this one has \(images.count)")
        }
        let prediction = Set((model.description?.input ?? []).map(\.name))
        guard let label = desc.input.first(where: { !prediction.contains($0.name) && $0.name != imageName }) else {
            throw CLIError("the model's training inputs name no label feature besides '\(imageName)'")
        }
        let fm = FileManager.default
        var rows: [FeatureProvider] = []
        for sub in try fm.contentsOfDirectory(atPath: dir).sorted() {
            var isDir: ObjCBool = false
            let subPath = dir + "/" + sub
            guard !sub.hasPrefix("."), fm.fileExists(atPath: subPath, isDirectory: &isDir), isDir.boolValue else { continue }
            let labelValue: FeatureValue
            if case .int64? = label.type?.kind {
                guard let v = Int64(sub) else { throw CLIError("folder '\(sub)': the label '\(label.name)' is an Int64; name the folder with a number") }
                labelValue = .int64(v)
            } else {
                labelValue = .string(sub)
            }
            for file in try fm.contentsOfDirectory(atPath: subPath).sorted()
            where ["png", "jpg", "jpeg"].contains(URL(fileURLWithPath: file).pathExtension.lowercased()) {
                let img = try FeatureImage(contentsOf: URL(fileURLWithPath: subPath + "/" + file), fittedTo: imageType, crop: .center,
                                           feature: imageName, model: name)
                rows.append([imageName: .image(img), label.name: labelValue])
            }
        }
        guard !rows.isEmpty else { throw CLIError("no PNG/JPEG images in the label folders of '\(dir)'") }
        return rows
    }
}
