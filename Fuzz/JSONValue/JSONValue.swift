import MAMFuzzing
import MAMMatrix
import MAMScript

/// A line of JSON a scripted app writes and the matrix (root) reads back (docs/SCRIPTING.md):
/// the app may be hostile. What reads writes out and reads back the same; a refusal names a
/// byte of the line; and the matrix's verdict on it, as a decision and as an arrival, is given
/// on every channel, an arrival counting as the payload only when its hash is the payload's.
@_cdecl("LLVMFuzzerTestOneInput")
public func jsonValue(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let value: JSONValue
    do {
        value = try JSONValue.parse(bytes)
    } catch {
        // The reader's failure type is its own; what it says starts with the byte it is about.
        let said = "\(error)"
        let offset = said.hasPrefix("byte ") ? Int(said.dropFirst(5).prefix { $0.isASCII && $0.isNumber }) : nil
        FuzzCheck.require(offset.map { $0 <= bytes.count } ?? false, "\"\(said)\" names no byte of a \(bytes.count)-byte line")
        return 0
    }
    let written = value.json
    FuzzCheck.require(!written.contains("\n"), "a value written over two lines: \(written)")
    FuzzCheck.require((try? JSONValue.parse(Array(written.utf8))) == value, "\(written) reads back as another value")
    let payload = String(repeating: "ab", count: 32)
    for channel in Channel.allCases {
        let verdict = Observation(decision: value, arrival: value, targetIdentity: "adele@contoso.com", payloadSHA256: payload,
                                  account: value, policy: value).verdict(channel)
        if verdict.outcome == .allowed, let arrival = verdict.arrival, arrival.readable, channel != .openURL {
            FuzzCheck.require(arrival.sha256 == payload, "a readable arrival that is not the payload judged allowed on \(channel)")
        }
    }
    return 0
}

@main enum JSONValueFuzz {
    static func main() { FuzzTarget.main(jsonValue) }
}
