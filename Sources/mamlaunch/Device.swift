import ArgumentParser
import Foundation
import MAMPolicy
import MAMWire

struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Show or change the device a running broker's apps are on.",
        discussion: """
            The broker holds a device profile (the tenant file's `device` object: docs/POLICIES.md) and \
            runs each managed account's launch checks against it: when an app starts under the account, \
            when the app shows it, when the profile changes, and while the device is offline as the \
            broker's clock moves (`mambroker --clock virtual` and `mamlaunch clock advance` make "offline \
            for 13 hours" two commands). A failed check warns, blocks the account's data in the app until \
            a check passes, or wipes it, as the policy says (docs/SEMANTICS.md §9).
            """,
        subcommands: [Show.self, Set.self]
    )

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the broker's device profile.")

        @OptionGroup var broker: BrokerSocket

        func run() throws { try broker.send(.setDevice(change: "{}")) }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change the broker's device profile; running apps are checked on it at once.",
            discussion: """
                Each option changes one field; the others stay. `--offline 13h` makes the device offline \
                since 13 hours ago on the broker's clock, `--online` (or `--offline 0`) brings it back. \
                Prints the profile and what the running apps' launch checks did; a change with a problem \
                changes nothing (exit status 1).
                """
        )

        @OptionGroup var device: DeviceOptions

        @Flag(help: "The device is online (the same as --offline 0).")
        var online = false

        @OptionGroup var broker: BrokerSocket

        func validate() throws {
            if online, device.offline != nil { throw ValidationError("--online and --offline: give one") }
            // Checked here too, for an error that names the option rather than a JSON key.
            _ = try device.apply(to: .standard, now: Date())
        }

        func run() throws {
            var change = try device.change()
            if online { change["offlineFor"] = 0 }
            guard !change.isEmpty else { throw ValidationError("nothing to change; give at least one option (see --help), or use `device show`") }
            let text = String(decoding: try JSONSerialization.data(withJSONObject: change, options: [.sortedKeys]), as: UTF8.self)
            try broker.send(.setDevice(change: text))
        }
    }
}
