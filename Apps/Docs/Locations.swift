import MAMKit
import MAMPolicy
import MAMSampleSupport

// Story: save to and open from storage locations (OneDrive, SharePoint, the local drive ...).
// The app names the location and the account signed in there; the broker decides with the
// policy whether the data may go there, or come in from there.

extension Docs {
    func save(_ a: [String]) async throws {
        guard (2...3).contains(a.count) else { throw UsageError() }
        guard let location = SaveLocation.allCases.first(where: { $0.name == a[1] }) else {
            throw UsageError("save locations: " + SaveLocation.allCases.map(\.name).joined(separator: ", "))
        }
        let (bytes, _) = try await contents(a[0])
        // The account signed in at the location, for those that have one; by default Docs' own.
        let account = a.count == 3 ? a[2] : location.takesAccount ? app.policyManager.primaryAccount : nil
        let decision = try await app.locations.save(bytes, name: a[0], to: location, account: account)
        console.say(Explain.decision(decision, "save \(a[0]) to \(location.name)"))
    }

    func open(_ a: [String]) async throws {
        guard (2...3).contains(a.count) else { throw UsageError() }
        guard let location = OpenLocation.allCases.first(where: { $0.name == a[1] }) else {
            throw UsageError("open locations: " + OpenLocation.allCases.map(\.name).joined(separator: ", "))
        }
        let account = a.count == 3 ? a[2] : location.takesAccount ? app.policyManager.primaryAccount : nil
        let (decision, bytes, owner) = try await app.locations.open(a[0], from: location, account: account)
        console.say(Explain.decision(decision, "open \(a[0]) from \(location.name)"))
        // The file keeps the owner the broker recorded for it.
        if let bytes { try await write(a[0], bytes, owner: owner) }
    }
}
