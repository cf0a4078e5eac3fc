import MAMKit
import MAMPolicy
import MAMSampleSupport

// Story: "Save a copy". Before offering to save, the app asks the policy whether the chosen
// location may receive this account's data (isSaveToAllowed); when not, it shows the
// sharing-blocked message instead. The broker decides again when the copy is actually written,
// so an app that forgot to ask still cannot leak.

extension Chat {
    func save(_ arguments: [String]) async throws {
        guard (1...2).contains(arguments.count) else { throw UsageError() }
        guard let location = SaveLocation.allCases.first(where: { $0.name == arguments[0] }) else {
            throw UsageError("locations: " + SaveLocation.allCases.map(\.name).joined(separator: ", "))
        }
        // The account signed in at the location (OneDrive, SharePoint); by default Chat's own.
        let account = arguments.count == 2 ? arguments[1] : location.takesAccount ? app.policyManager.primaryAccount : nil
        let policy = app.policyManager.policy

        // 1. Ask. This is the SDK's isSaveToAllowed(for:withAccountId:), with its reason.
        let asked = policy.saveToDecision(for: location, account: account)
        guard asked.allowed else {
            console.say("Sharing blocked: your organization's data can't be saved to \(location.name) here.\n"
                + Explain.decision(asked, "save the conversation to \(location.name)"))
            return
        }
        // 2. Save. The broker decides the write itself.
        let text = conversation.joined(separator: "\n")
        let decision = try await app.locations.save(Array(text.utf8), name: "conversation.txt", to: location, account: account)
        console.say(Explain.decision(decision, "save the conversation to \(location.name)"))
    }
}
