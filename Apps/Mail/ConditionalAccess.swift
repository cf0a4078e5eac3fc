import MAMKit
import MAMSampleSupport

// Story: App Protection conditional access. Mail asks for a token to fetch mail; when the tenant
// requires app protection and the account is not yet managed here, the answer is "protection
// policy required" and Mail asks the SDK to remediate (enroll, get policy). The outcome comes
// to the compliance delegate, and Mail asks for the token again.

extension Mail {
    func syncMail(_ account: String) async throws {
        let (outcome, detail) = try await app.compliance.acquireToken(for: account)
        switch outcome {
        case .granted:
            console.say("Signed in to the mail server as \(account); mail is syncing.")
        case .refused:
            console.say("The mail server refused \(account): \(detail)")
        case .protectionPolicyRequired:
            // The token needs app protection: let the SDK remediate, silently if it can.
            console.say("The mail server requires app protection for \(account); remediating ...")
            let (acceptance, why) = try await app.compliance.remediateCompliance(for: account, silent: false)
            console.say("Remediation \(acceptance)\(why.isEmpty ? "" : ": \(why)"). The result comes as a compliance status.")
        }
    }
}

/// Hears the remediation's outcome; on success the token request can be made again.
struct ComplianceWatcher: ComplianceDelegate {
    let console: Console
    func account(_ account: String, hasComplianceStatus status: ComplianceStatus, message: String, title: String) async {
        console.say(status == .compliant ? "\(account) is compliant now: type `sync \(account)` again."
                    : "\(account) is not compliant (\(status)): \(title) \(message)")
    }
}
