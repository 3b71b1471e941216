// MARK: shared scratch memory (issue 12): peak RSS
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
@testable import MLRuntime
import Synchronization
import XCTest

final class ScratchArenaTests: XCTestCase {
    /// One caller at a time gets the same buffer back, grown to the largest request; a nested
    /// request (a kernel holding a buffer while its primitive takes another) gets a second one.
    func testBuffersAreReusedGrownAndNestedOnesAreDistinct() {
        let arena = ScratchArena()
        XCTAssertEqual(arena.idleBytes, 0)
        let first = arena.withBuffer(bytes: 100) { p -> UInt in
            XCTAssertEqual(UInt(bitPattern: p) % 64, 0, "64-byte aligned")
            p.storeBytes(of: 0xAB, toByteOffset: 99, as: UInt8.self)  // all 100 bytes are writable
            return UInt(bitPattern: p)
        }
        XCTAssertEqual(arena.idleBytes, 128, "rounded up to 64 bytes")
        let again = arena.withBuffer(bytes: 50) { UInt(bitPattern: $0) }
        XCTAssertEqual(again, first, "a smaller request reuses the idle buffer")
        arena.withBuffer(bytes: 4096) { p in p.storeBytes(of: 1, toByteOffset: 4095, as: UInt8.self) }
        XCTAssertEqual(arena.idleBytes, 4096, "grown in place of the smaller one, not beside it")
        let (outer, inner) = arena.withBuffer(bytes: 64) { p in
            (UInt(bitPattern: p), arena.withBuffer(bytes: 64) { UInt(bitPattern: $0) })
        }
        XCTAssertNotEqual(outer, inner, "a nested request gets its own buffer")
        XCTAssertEqual(arena.idleBytes, 4096 + 64)
        // Sequential requests of every size now fit the two buffers: nothing more is allocated.
        for bytes in [1, 64, 65, 4000, 4096] { arena.withBuffer(bytes: bytes) { _ in } }
        XCTAssertEqual(arena.idleBytes, 4096 + 64)
    }

    /// Concurrent callers never share a buffer.
    func testConcurrentCallersGetTheirOwnBuffers() {
        let arena = ScratchArena()
        let clashes = Atomic(0)
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            arena.withBuffer(bytes: 256) { p in
                let words = p.bindMemory(to: Int.self, capacity: 32)
                for k in 0..<32 { words[k] = i }
                for _ in 0..<100 { sched_yield() }  // let the others run while this one holds it
                if (0..<32).contains(where: { words[$0] != i }) { clashes.add(1, ordering: .relaxed) }
            }
        }
        XCTAssertEqual(clashes.load(ordering: .relaxed), 0)
        XCTAssertGreaterThanOrEqual(arena.idleBytes, 256)
    }
}

