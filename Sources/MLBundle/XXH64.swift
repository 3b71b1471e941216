/// XXH64 (xxHash, 64-bit, seed 0 unless given), the checksum of the `.mlbundle` format.
///
/// Reference: `xxhash_spec.md` in the xxHash repository (XXH64). Values are
/// read little-endian, so the result is the same on every platform and equals `xxhsum -H64`.
/// Streaming: call `update` any number of times, then `finalize` (which does not consume the
/// state, so `finalize` may be called again after more `update`s).
package struct XXH64 {
    static let p1: UInt64 = 0x9E37_79B1_85EB_CA87
    static let p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    static let p3: UInt64 = 0x1656_67B1_9E37_79F9
    static let p4: UInt64 = 0x85EB_CA77_C2B2_AE63
    static let p5: UInt64 = 0x27D4_EB2F_1656_67C5

    private let seed: UInt64
    private var v1: UInt64, v2: UInt64, v3: UInt64, v4: UInt64
    /// Bytes of an incomplete 32-byte stripe, kept until the next `update`.
    private var pending: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var pendingCount = 0
    private(set) var totalLength: UInt64 = 0

    package init(seed: UInt64 = 0) {
        self.seed = seed
        v1 = seed &+ XXH64.p1 &+ XXH64.p2
        v2 = seed &+ XXH64.p2
        v3 = seed
        v4 = seed &- XXH64.p1
    }

    /// One-shot hash of `bytes`.
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        var h = XXH64(seed: seed)
        h.update(bytes)
        return h.finalize()
    }

    package static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    @inline(__always) private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inline(__always) private static func round(_ acc: UInt64, _ input: UInt64) -> UInt64 {
        rotl(acc &+ input &* p2, 31) &* p1
    }

    @inline(__always) private static func merge(_ acc: UInt64, _ v: UInt64) -> UInt64 {
        (acc ^ round(0, v)) &* p1 &+ p4
    }

    @inline(__always) private static func load64(_ p: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    private mutating func consumeStripes(_ p: UnsafeRawPointer, count: Int) {
        var a = v1, b = v2, c = v3, d = v4
        var i = 0
        while i + 32 <= count {
            a = XXH64.round(a, XXH64.load64(p, i))
            b = XXH64.round(b, XXH64.load64(p, i + 8))
            c = XXH64.round(c, XXH64.load64(p, i + 16))
            d = XXH64.round(d, XXH64.load64(p, i + 24))
            i += 32
        }
        v1 = a; v2 = b; v3 = c; v4 = d
    }

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        totalLength &+= UInt64(bytes.count)
        var p = base
        var n = bytes.count
        if pendingCount > 0 {
            let take = Swift.min(32 - pendingCount, n)
            withUnsafeMutableBytes(of: &pending) { buf in
                buf.baseAddress!.advanced(by: pendingCount).copyMemory(from: p, byteCount: take)
            }
            pendingCount += take; p += take; n -= take
            if pendingCount < 32 { return }
            withUnsafeBytes(of: pending) { consumeStripes($0.baseAddress!, count: 32) }
            pendingCount = 0
        }
        let whole = n & ~31
        if whole > 0 { consumeStripes(p, count: whole); p += whole; n -= whole }
        if n > 0 {
            withUnsafeMutableBytes(of: &pending) { buf in buf.baseAddress!.copyMemory(from: p, byteCount: n) }
            pendingCount = n
        }
    }

    package mutating func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    package func finalize() -> UInt64 {
        var h: UInt64
        if totalLength >= 32 {
            h = XXH64.rotl(v1, 1) &+ XXH64.rotl(v2, 7) &+ XXH64.rotl(v3, 12) &+ XXH64.rotl(v4, 18)
            h = XXH64.merge(h, v1); h = XXH64.merge(h, v2); h = XXH64.merge(h, v3); h = XXH64.merge(h, v4)
        } else {
            h = seed &+ XXH64.p5
        }
        h &+= totalLength
        let count = pendingCount
        withUnsafeBytes(of: pending) { buf in
            let p = buf.baseAddress!
            var i = 0
            while i + 8 <= count {
                h ^= XXH64.round(0, XXH64.load64(p, i))
                h = XXH64.rotl(h, 27) &* XXH64.p1 &+ XXH64.p4
                i += 8
            }
            if i + 4 <= count {
                h ^= UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: i, as: UInt32.self))) &* XXH64.p1
                h = XXH64.rotl(h, 23) &* XXH64.p2 &+ XXH64.p3
                i += 4
            }
            while i < count {
                h ^= UInt64(p.load(fromByteOffset: i, as: UInt8.self)) &* XXH64.p5
                h = XXH64.rotl(h, 11) &* XXH64.p1
                i += 1
            }
        }
        h ^= h >> 33; h &*= XXH64.p2
        h ^= h >> 29; h &*= XXH64.p3
        h ^= h >> 32
        return h
    }
}
