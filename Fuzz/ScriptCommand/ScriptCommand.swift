import MAMFuzzing
import MAMScript

/// A scripted-mode command line (docs/SCRIPTING.md), as a sample app reads one from its input:
/// its words, then its arguments checked. A line the matrix writes for a command reads back as
/// that command, and a refusal names a byte of the line.
@_cdecl("LLVMFuzzerTestOneInput")
public func scriptCommand(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    // As `readLine` hands a line over: bytes that are not UTF-8 become replacement characters.
    let line = String(decoding: FuzzTarget.bytes(data, size), as: UTF8.self)
    let command: ScriptCommand
    do {
        command = try ScriptCommand.parse(line)
    } catch {
        FuzzCheck.require(error.offset >= 0 && error.offset <= line.utf8.count && !error.reason.isEmpty,
                          "\(error) for a \(line.utf8.count)-byte line")
        return 0
    }
    let written = command.line
    FuzzCheck.require((try? ScriptCommand.parse(written)) == command, "\(command) writes as \(written.debugDescription), which reads back otherwise")
    _ = try? Script(command)
    return 0
}

@main enum ScriptCommandFuzz {
    static func main() { FuzzTarget.main(scriptCommand) }
}
