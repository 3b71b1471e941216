// Writes a `DotDocument` as .dot text, or as .svg / .png drawn by Graphviz's `dot` program.
import AtomicFile
import Foundation

/// Why a graph picture could not be written.
public enum GraphDrawingError: Error, CustomStringConvertible, Equatable {
    /// The output path's extension is not one of .dot, .gv, .svg, .png.
    case unsupportedExtension(path: String, found: String)
    /// Graphviz's `dot` is not on PATH (needed for .svg / .png).
    case dotNotFound(path: String)
    /// `dot` ran but failed (exit status and its standard error).
    case dotFailed(path: String, status: Int32, message: String)

    public var description: String {
        switch self {
        case let .unsupportedExtension(path, found):
            return "--graph \(path): unknown picture type '.\(found)'; give a path ending in .svg, .png or .dot (.gv)"
        case let .dotNotFound(path):
            return "--graph \(path): Graphviz's `dot` program is not installed (it draws .svg and .png); install the Debian package `graphviz` (Scripts/setup does), or write DOT text with a .dot path"
        case let .dotFailed(path, status, message):
            return "--graph \(path): `dot` failed with status \(status): \(message.trimmingCharacters(in: .whitespacesAndNewlines))"
        }
    }
}

/// Writes pictures of models (`mlconv inspect --graph`).
public enum GraphFileWriter {
    /// The output formats, from the path's extension.
    public enum Format: String, Sendable { case dot, svg, png }

    /// The format of `path` (".dot" / ".gv" → DOT text, ".svg", ".png").
    /// - Throws: `GraphDrawingError.unsupportedExtension`.
    public static func format(of path: String) throws -> Format {
        let ext = URL(fileURLWithPath: path).pathExtension.lowercased()
        switch ext {
        case "dot", "gv": return .dot
        case "svg": return .svg
        case "png": return .png
        default: throw GraphDrawingError.unsupportedExtension(path: path, found: ext)
        }
    }

    /// The `dot` executable on PATH, nil when Graphviz is not installed.
    public static func dotExecutable() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(dir)).appendingPathComponent("dot")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Writes `dotText` to `path` atomically: as it is for .dot, rendered by `dot -Tsvg` / `-Tpng`
    /// for .svg / .png (Graphviz reads the text on standard input and writes the picture on
    /// standard output; nothing is written to `path` when it fails).
    /// - Throws: `GraphDrawingError`, `AtomicFileError`.
    public static func write(dotText: String, to path: String) throws {
        let format = try format(of: path)
        let bytes: Data
        switch format {
        case .dot:
            bytes = Data(dotText.utf8)
        case .svg, .png:
            guard let dot = dotExecutable() else { throw GraphDrawingError.dotNotFound(path: path) }
            bytes = try run(dot, arguments: ["-T\(format.rawValue)"], input: Data(dotText.utf8), path: path)
        }
        try AtomicFile.write(bytes, to: path)
    }

    /// Runs `exe` with `input` on stdin; returns stdout. Both pipes are drained on their own
    /// threads so a large picture or message cannot block either side.
    static func run(_ exe: URL, arguments: [String], input: Data, path: String) throws -> Data {
        let p = Process()
        p.executableURL = exe
        p.arguments = arguments
        let inPipe = Pipe(), outPipe = Pipe(), errPipe = Pipe()
        p.standardInput = inPipe
        p.standardOutput = outPipe
        p.standardError = errPipe
        do { try p.run() } catch {
            throw GraphDrawingError.dotFailed(path: path, status: -1, message: "cannot start \(exe.path): \(error)")
        }
        final class Box: @unchecked Sendable { var data = Data() }
        let out = Box(), err = Box()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { out.data = outPipe.fileHandleForReading.readToEndOrEmpty() }
        DispatchQueue.global().async(group: group) { err.data = errPipe.fileHandleForReading.readToEndOrEmpty() }
        // A `dot` that exits early must not kill mlconv with SIGPIPE: the write fails instead,
        // and the exit status reports why.
        signal(SIGPIPE, SIG_IGN)
        try? inPipe.fileHandleForWriting.write(contentsOf: input)
        try? inPipe.fileHandleForWriting.close()
        group.wait()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw GraphDrawingError.dotFailed(path: path, status: p.terminationStatus, message: String(decoding: err.data, as: UTF8.self))
        }
        return out.data
    }
}
