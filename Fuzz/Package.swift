// swift-tools-version:5.9
// libFuzzer targets for mlconv's file readers (issue 13; docs/RELIABILITY.md).
//
// A separate package so that `swift build` / `swift test` of mlconv never build, wait for or
// link these: Scripts/fuzz builds one target with
//   swift build --package-path Fuzz -c debug -Xswiftc -sanitize=fuzzer,address --build-path .build-fuzz --product FuzzNPY
// Every target is an executable whose @main hands control to libFuzzer (LLVMFuzzerRunDriver): on
// Linux SwiftPM links executables with `--defsym main=<module>_main`, which would otherwise
// replace libFuzzer's own main.
import Foundation
import PackageDescription

// A path dependency's identity is its directory's name (the worktree's, e.g. "mlconv" or "main").
let mlconvIdentity = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()
let readers = Target.Dependency.product(name: "MLConvFuzzReaders", package: mlconvIdentity)

/// The products; `Scripts/fuzz --list` names each with its short target name and what it reads.
let fuzzTargets = ["FuzzKerasH5", "FuzzKerasJSON", "FuzzMLModel", "FuzzMLProgram", "FuzzMILBlob",
                   "FuzzMLBundle", "FuzzNPY", "FuzzImage", "FuzzHooks"]

let package = Package(
    name: "mlconv-fuzz",
    products: fuzzTargets.map { .executable(name: $0, targets: [$0]) },
    dependencies: [.package(path: "..")],
    targets: [.target(name: "FuzzSupport")]
        + fuzzTargets.map { .executableTarget(name: $0, dependencies: ["FuzzSupport", readers]) }
)
