import Synchronization

// MARK: shared scratch memory (issue 12): peak RSS

/// Scratch memory that the kernels of one execution plan share: oneDNN's user-mode scratchpads
/// (a convolution's transformed tiles, packed panels) and the blocked activation buffers of
/// `DNNLBlockedConvolution`. A prediction runs its kernels one after the other, so one buffer as
/// large as the largest request serves all of them; a kernel that holds a buffer while the
/// primitive it runs takes another, and each concurrent prediction, get a buffer of their own.
/// Before this, every kernel kept its own scratch, and the resident total was their sum (the
/// style network's twelve Winograd layers held ~11 MB each: docs/PERFORMANCE.md, "Peak RSS").
///
/// Buffers are 64-byte aligned, kept for reuse and freed with the arena. Thread-safe.
public final class ScratchArena: @unchecked Sendable {
    private struct Buffer {
        var pointer: UnsafeMutableRawPointer
        var bytes: Int
    }

    private let idle = Mutex<[Buffer]>([])

    public init() {}

    deinit {
        idle.withLock { $0.forEach { $0.pointer.deallocate() } }
    }

    /// The bytes this arena holds now (idle buffers; one taken by a running kernel is not counted).
    public var idleBytes: Int { idle.withLock { $0.reduce(0) { $0 + $1.bytes } } }

    /// Runs `body` with a buffer of at least `bytes` bytes (64-byte aligned, contents undefined)
    /// that no other caller uses until `body` returns. Takes the smallest idle buffer that is
    /// large enough, else replaces the largest idle one by a larger one, else allocates.
    func withBuffer<R>(bytes: Int, _ body: (UnsafeMutableRawPointer) throws -> R) rethrows -> R {
        let need = Swift.max(64, (bytes + 63) / 64 * 64)
        var buffer = idle.withLock { list -> Buffer? in
            let sizes = list.map(\.bytes)
            let smallestFitting = sizes.indices.filter { sizes[$0] >= need }.min { sizes[$0] < sizes[$1] }
            return (smallestFitting ?? sizes.indices.max { sizes[$0] < sizes[$1] }).map { list.remove(at: $0) }
        }
        if let b = buffer, b.bytes < need {
            b.pointer.deallocate()
            buffer = nil
        }
        let leased = buffer ?? Buffer(pointer: UnsafeMutableRawPointer.allocate(byteCount: need, alignment: 64), bytes: need)
        defer { idle.withLock { $0.append(leased) } }
        return try body(leased.pointer)
    }
}
