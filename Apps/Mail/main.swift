// Mail: an SDK sample app. `--script` runs the scripted mode (docs/SCRIPTING.md); with no
// arguments the broker started it to take a URL or a document: it serves the broker until the
// broker closes (its stdin is /dev/null then). The interactive mode is issue 14's.
import Foundation
import MAMKitScripting

let arguments = CommandLine.arguments.dropFirst()
guard arguments.isEmpty || arguments == ["--script"] else {
    FileHandle.standardError.write(Data("usage: Mail [--script]\n".utf8))
    exit(2)
}
exit(await ScriptedApp.run(serveAfterInput: arguments.isEmpty))
