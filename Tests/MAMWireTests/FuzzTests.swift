import MAMWire
import Testing

struct Xorshift: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// A property test over a million generated frames: the decoder never crashes or hangs, never
/// accepts a frame it cannot re-encode to the same bytes, and decodes every valid frame exactly.
@Suite("MAMWire decoder over generated frames")
struct FuzzTests {
    @Test func aMillionFrames() {
        var g = Xorshift(state: 0x9E37_79B9_7F4A_7C15)
        let valid = everyMessage.map { Wire.encode(Frame(id: 1, $0)) }
        var accepted = 0, refused = 0
        for i in 0..<1_000_000 {
            var bytes: [UInt8]
            switch i % 4 {
            case 0:
                // Random bytes behind a plausible header.
                let n = Int.random(in: 0...64, using: &g)
                bytes = [0x4D, 0x57, 1, UInt8.random(in: 0...0x60, using: &g)] + (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
            case 1:
                // A valid frame with a few bytes flipped.
                bytes = valid[Int.random(in: 0..<valid.count, using: &g)]
                for _ in 0..<Int.random(in: 1...3, using: &g) { bytes[Int.random(in: 0..<bytes.count, using: &g)] ^= UInt8.random(in: 1...255, using: &g) }
            case 2:
                // A valid frame cut short or extended.
                bytes = valid[Int.random(in: 0..<valid.count, using: &g)]
                if Bool.random(using: &g) { bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &g))) } else { bytes += [UInt8.random(in: 0...255, using: &g)] }
            default:
                // A valid frame with its length field rewritten.
                bytes = valid[Int.random(in: 0..<valid.count, using: &g)]
                let fake = UInt32.random(in: 0...0xFFFF, using: &g)
                bytes[8] = UInt8(fake & 0xff); bytes[9] = UInt8(fake >> 8); bytes[10] = 0; bytes[11] = 0
            }
            do {
                let frame = try Wire.decode(bytes)
                accepted += 1
                // Whatever is accepted is exactly what re-encodes to the same bytes, in its version.
                if Wire.encode(frame, version: bytes[2]) != bytes { Issue.record("accepted bytes that do not round-trip: \(bytes)"); return }
            } catch {
                refused += 1
                if error.detail.isEmpty { Issue.record("an error with no detail"); return }
            }
        }
        #expect(accepted + refused == 1_000_000)
        #expect(refused > 500_000 && accepted > 1_000, "the generator exercises both paths: \(accepted) accepted")
    }
}
