import CXXHash

/// XXH64 (xxHash, 64-bit, seed 0 unless given), the checksum of the `.mlbundle` format, computed by
/// libxxhash (Debian's libxxhash-dev). The result is the same on every platform and equals
/// `xxhsum -H64` (the format's definition: `xxhash_spec.md` in the xxHash repository).
///
/// Streaming: call `update` any number of times, then `finalize` (which does not consume the
/// state, so `finalize` may be called again after more `update`s). A value type: a copy hashes on
/// independently of the original (the library state is copied on the first write after a copy).
package struct XXH64 {
    /// Owns one libxxhash streaming state (`XXH64_state_t`, opaque).
    private final class State {
        let pointer: OpaquePointer

        init() {
            // libxxhash allocates the state with malloc: NULL only when memory is exhausted,
            // where Swift's own allocations trap too.
            guard let p = XXH64_createState() else { fatalError("XXH64_createState: out of memory") }
            pointer = p
        }

        deinit { XXH64_freeState(pointer) }
    }

    private var state: State

    package init(seed: UInt64 = 0) {
        state = State()
        XXH64_reset(state.pointer, seed)
    }

    /// One-shot hash of `bytes`.
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        CXXHash.XXH64(bytes.baseAddress, bytes.count, seed)
    }

    package static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if !isKnownUniquelyReferenced(&state) {
            let copy = State()
            XXH64_copyState(copy.pointer, state.pointer)
            state = copy
        }
        XXH64_update(state.pointer, bytes.baseAddress, bytes.count)
    }

    package mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The hash of everything given to `update` so far.
    package func finalize() -> UInt64 { XXH64_digest(state.pointer) }
}
