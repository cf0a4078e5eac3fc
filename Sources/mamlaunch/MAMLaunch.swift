import ArgumentParser

@main
struct MAMLaunch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mamlaunch",
        abstract: "Run and question MAMLab, the app-protection (MAM) sharing emulator.",
        discussion: """
            MAMLab answers, on Linux, the questions an app-protection policy answers on a phone:
            may this app send this document, paste this text, open this link, save to this \
            location? Every answer names the rule that gave it and where that rule comes from \
            (doc: the vendor's documentation; observed: reported behaviour; chosen: MAMLab's own \
            call where the sources are silent).

            Start with:
              mamlaunch matrix --out matrix.html   every channel between real sandboxed apps, each sample policy
              mamlaunch check                      validate Policies/ and Apps/
              mamlaunch explain --from Mail --to Notes --channel send
            """,
        subcommands: [MatrixCommand.self, Check.self, Explain.self, Run.self, Doctor.self, ClockCommand.self, SyncCommand.self, WipeCommand.self, SignInCommand.self, CredentialCommand.self, BenchLaunch.self, BenchBroker.self]
    )
}
