import CoreMLFormat
import Foundation
import ImageIO
import KerasFrontend
import MLBundle
import MLConv
import MLGraph
import MLRuntime

// Format detection (`ModelFileKind`) and image inputs (`ImageInputTensor`) live in the MLConv
// library, which the CLI is a client of.

/// Loads any supported model file into a verified graph.
/// - Parameters:
///   - architectureJSON: for weights-only Keras files.
///   - kerasOptions: hooks and input shapes for Keras files.
/// - Throws: the format's typed error (`KerasConversionError`, `BundleError`, `CoreMLFormatError`,
///   `CoreMLImportError`).
func loadGraph(_ url: URL, architectureJSON: URL? = nil, kerasOptions: KerasConversionOptions = .init()) throws -> Graph {
    try loadGraphAndDisabledPasses(url, architectureJSON: architectureJSON, kerasOptions: kerasOptions).graph
}

/// `loadGraph`, plus the inference passes a bundle records as disabled (`BundleFile.disabledPasses`;
/// empty for other formats), which whoever runs or rewrites the graph should keep disabled.
///   - coreMLHooks: `--lower` / `--custom-layer` / `--hooks` specs applied to the custom layers of
///     a Core ML model (`coreMLHookSpecs`); `required` leading specs must select a layer.
///   - decoded: the `.mlmodel` at `url` when the caller has already decoded it (not decoded again).
func loadGraphAndDisabledPasses(_ url: URL, architectureJSON: URL? = nil, kerasOptions: KerasConversionOptions = .init(),
                                coreMLHooks: (specs: [KerasHookSpec], required: Int) = ([], 0), decoded: Spec.Model? = nil,
                                milOptions: MILImportOptions = MILImportOptions())
    throws -> (graph: Graph, disabledPasses: Set<String>)
{
    switch try ModelFileKind.detect(url) {
    case .keras:
        return (try KerasConverter(options: kerasOptions).convert(modelAt: url, architectureJSON: architectureJSON), [])
    case .bundle:
        let b = try BundleFile(contentsOf: url)
        // A name this mlconv's pipeline does not have (a later version's pass) is not run anyway.
        return (b.graph, b.disabledPasses.intersection(PassPipeline.inference.names))
    case .coreML:
        let spec = try decoded ?? Spec.Model.load(contentsOf: url.path)
        // MARK: ML programs (MILImporter)
        if spec.kind == .mlProgram { return (try importMLProgram(spec, url: url, options: milOptions).graph, []) }
        let g = try CoreMLImporter.graph(from: spec, fileName: url.lastPathComponent)
        return (try coreMLHooks.specs.lowerCustomNodes(in: g, file: url.lastPathComponent, requiredMatches: coreMLHooks.required), [])
    }
}

/// Parses `--input NAME=FILE` values into arrays for `graph`: `.npy` files as they are; PNG/JPEG
/// files for image inputs (or NHWC inputs with 1 or 3 channels), decoded, converted to the input's
/// colour space, resized with `crop` unless the input's flexible shape allows the image's size, as
/// raw 0–255 values (the graph applies the preprocessing).
func readInputs(_ pairs: [(String, String)], for graph: Graph, crop: ImageCropMode) throws -> [String: NDArray] {
    var inputs: [String: NDArray] = [:]
    for (name, path) in pairs {
        guard inputs[name] == nil else { throw UsageError("--input \(name) given twice") }
        let url = try existingFile(path, what: "--input \(name)")
        let ext = url.pathExtension.lowercased()
        if ["png", "jpg", "jpeg"].contains(ext) {
            inputs[name] = try ImageInputTensor.read(contentsOf: url, input: name, graph: graph, crop: crop)
        } else if ext == "npy" {
            inputs[name] = try NPY.read(contentsOf: url)
        } else {
            throw CLIError("--input \(name)=\(path): give a NumPy .npy array, or a .png/.jpg image for an image input (the file type comes from the extension)")
        }
    }
    return inputs
}

/// `path` as a URL when it names an existing file (or directory with `directory`), else a
/// `CLIError` naming the option, the path and the current directory.
func existingFile(_ path: String, what: String, directory: Bool = false) throws -> URL {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
        let cwd = FileManager.default.currentDirectoryPath
        throw CLIError("\(what): no such \(directory ? "directory" : "file") '\(path)'" + (path.hasPrefix("/") ? "" : " (relative to \(cwd))"))
    }
    guard isDir.boolValue == directory else {
        throw CLIError(directory ? "\(what): '\(path)' is a file; give a directory" : "\(what): '\(path)' is a directory; give a file")
    }
    return URL(fileURLWithPath: path)
}

/// The bytes of a file the user named with `what` (an option), or a `CLIError` naming the file,
/// the reason the system gives (no such file, a directory, permission denied) and what to do —
/// never Foundation's raw error dump.
func readUserFile(_ url: URL, what: String) throws -> Data {
    var isDir: ObjCBool = false
    guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDir) else {
        throw CLIError("\(what): no such file '\(url.path)'")
    }
    guard !isDir.boolValue else { throw CLIError("\(what): '\(url.path)' is a directory; give a file") }
    guard let h = FileHandle(forReadingAtPath: url.path) else {
        throw CLIError("\(what): cannot read '\(url.path)': \(String(cString: strerror(errno))); check its permissions")
    }
    defer { try? h.close() }
    do {
        return try h.readToEnd() ?? Data()
    } catch {
        throw CLIError("\(what): cannot read '\(url.path)': \(String(cString: strerror(errno)))")
    }
}

/// Writes one file per output into `dir`: `<name>.png` for image outputs (values clamped to
/// 0–255 and rounded) and `<name>.npy` in the output's element type (`<f4`, `<i4`, `<i8`, `|b1`, `<f2`)
/// for every output.
func writeOutputs(_ outputs: [String: NDArray], graph: Graph, to dir: URL) throws -> [String] {
    try prepareOutputDirectory(dir, option: "--output-dir")
    var written: [String] = []
    for name in graph.outputs {
        guard let a = outputs[name] else { continue }
        let base = dir.appendingPathComponent(safeFileName(name))
        try NPY.write(a, to: base.appendingPathExtension("npy"))
        written.append(base.appendingPathExtension("npy").path)
        if let img = graph.description.outputs.first(where: { $0.name == name })?.image {
            let c = img.colorSpace == .grayscale ? 1 : 3
            var values = a.scalars
            if img.colorSpace == .bgr {  // PNG is RGB: swap B and R.
                for p in stride(from: 0, to: values.count, by: 3) { values.swapAt(p, p + 2) }
            }
            let image = Image(floatHWC: values, width: img.width, height: img.height, channels: c)
            try ImageCodec.writePNG(image, to: base.appendingPathExtension("png"))
            written.append(base.appendingPathExtension("png").path)
        }
    }
    return written
}
