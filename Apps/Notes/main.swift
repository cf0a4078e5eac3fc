// Notes: the sample app without the SDK. Its scripted mode (docs/SCRIPTING.md) runs the same
// commands as the SDK apps with raw MAMWire: no identities of its own, no policy object, no
// keys; what it may do is the broker's decision for an unmanaged app. With no arguments the
// broker started it to take a URL or a document: it serves the broker until the broker closes.
import Crypto
import Foundation
import Glibc
import MAMScript
import MAMWire

let arguments = CommandLine.arguments.dropFirst()
guard arguments.isEmpty || arguments == ["--script"] else {
    FileHandle.standardError.write(Data("usage: Notes [--script]\n".utf8))
    exit(2)
}
guard let fdText = ProcessInfo.processInfo.environment["MAMLAB_BROKER_FD"], let fd = Int32(fdText) else {
    FileHandle.standardError.write(Data("Notes: no broker connection (MAMLAB_BROKER_FD)\n".utf8))
    exit(2)
}
let client = RawClient(socket: WireSocket(adopting: Descriptor(adopting: fd)), output: ScriptOutput())
client.start()
let hello = client.request(.hello(minVersion: Wire.version, maxVersion: Wire.version, integratesSDK: false))
guard case let .welcome(_, bundleID, _)? = hello.first?.frame.message else {
    FileHandle.standardError.write(Data("Notes: the broker did not welcome it\n".utf8))
    exit(1)
}
var number = 0
while let line = readLine(strippingNewline: true) {
    number += 1
    let command: ScriptCommand
    do { command = try ScriptCommand.parse(line) } catch {
        client.output.failure(number, command: "?", error.description)
        continue
    }
    if command.name == "bye" {
        client.output.result(number, command, ["ok": true])
        try? client.socket.send(Frame(id: 0, .bye))
        exit(0)
    }
    client.execute(number, command, bundleID: bundleID)
}
// Started by the broker (stdin is /dev/null): serve it until it closes.
if arguments.isEmpty { client.waitUntilClosed() }
exit(0)
