import Dispatch
import HDF5
import XCTest

/// Calls from many threads at once are serialized by the module's global lock: no crash, right
/// values.
final class HDF5ConcurrencyTests: XCTestCase {
    func testConcurrentReadsFromManyThreads() throws {
        let path = HDF5TestPaths.fixture("types.h5")
        let shared = try HDF5File(path: path)
        let expected = (0..<24).map { Float($0) * 0.5 - 3 }
        let failures = FailureLog()
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            do {
                // Half the iterations share one file, half open their own.
                let file = index.isMultiple(of: 2) ? shared : try HDF5File(path: path)
                let values = try file.dataset(at: "data/f32").readFloats()
                if values != expected { failures.add("wrong values at \(index)") }
                let json = try file.stringAttribute("vlen_json") ?? ""
                if json.utf8.count < 2000 { failures.add("short JSON at \(index)") }
                let names = try file.group(at: "order").childNames()
                if names.count != 6 { failures.add("wrong names at \(index)") }
                _ = try? file.group(at: "missing/\(index)")
            } catch {
                failures.add("\(index): \(error)")
            }
        }
        XCTAssertEqual(failures.messages, [])
    }
}

private final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    func add(_ message: String) {
        lock.lock()
        stored.append(message)
        lock.unlock()
    }

    var messages: [String] {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }
}
