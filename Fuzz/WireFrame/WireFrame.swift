import MAMFuzzing
import MAMWire

/// A frame from an app, as the broker reads every packet (docs/PROTOCOL.md, "Frames"): decoded
/// strictly, then checked against the conversation's order as the broker checks it.
@_cdecl("LLVMFuzzerTestOneInput")
public func wireFrame(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let frame: Frame
    do {
        frame = try Wire.decode(bytes)
    } catch {
        WireErrors.check(error, in: bytes)
        return 0
    }
    // Strict means one encoding per frame: what is accepted re-encodes, in its version, to the very same bytes.
    FuzzCheck.require(Wire.encode(frame, version: bytes[2]) == bytes, "accepted bytes that re-encode differently: \(frame)")
    // A connection that agreed on a version reads that version only.
    for agreed in Wire.versions where agreed != bytes[2] {
        FuzzCheck.require((try? Wire.decode(bytes, agreed: agreed)) == nil, "a version-\(bytes[2]) frame read on a version-\(agreed) connection")
    }
    FuzzCheck.require(Wire.frameID(bytes) == frame.id, "frameID disagrees with the decoded id \(frame.id)")
    // The order check must refuse or accept, never trap, whatever came before.
    for descriptor in [false, true] {
        var fresh = Conversation()
        _ = try? fresh.accept(frame, hasDescriptor: descriptor)
        var greeted = Conversation()
        try? greeted.accept(Frame(id: 1, .hello(minVersion: 1, maxVersion: 1, integratesSDK: true)), hasDescriptor: false)
        _ = try? greeted.accept(frame, hasDescriptor: descriptor)
    }
    return 0
}

@main enum WireFrameFuzz {
    static func main() { FuzzTarget.main(wireFrame) }
}
