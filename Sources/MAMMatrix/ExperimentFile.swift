import Foundation
import MAMPolicy

/// Reads an experiment file (JSON, or YAML when the name ends in .yaml or .yml; docs/MATRIX.md,
/// schema docs/experiment.schema.json).
///
/// Pure: it is handed the bytes, and `knownApp` tells it which app names exist. Every problem is
/// a `Diagnostic` naming the file, the key path and the reason; all of them are reported at once.
public enum ExperimentFile {
    static let topKeys: Set<String> = ["$schema", "name", "description", "tenant", "parties", "channels", "payload", "policies", "cells"]
    static let partyKeys: Set<String> = ["name", "app", "accounts", "identity"]
    static let payloadKeys: Set<String> = ["text", "documentType", "documentName", "documentContent", "urlPath"]
    static let cellKeys: Set<String> = ["label", "channel", "source", "target", "account", "check", "policies", "expect"]
    static let expectKeys: Set<String> = ["outcome", "identity", "managed", "note"]

    /// `policy` resolves a policy entry (a file path relative to the experiment, or a sample
    /// policy's label) to the path the run loads, or says why it names no policy.
    /// `appNames`: the names apps go by, for "did you mean" on an unknown one.
    public static func load(_ data: Data, file: String, knownApp: (String) -> Bool, appNames: [String] = [],
                            policy: (String) -> Result<String, PolicyLookupFailure> = { .success($0) }) throws(LoadFailure) -> Experiment {
        let yaml = file.hasSuffix(".yaml") || file.hasSuffix(".yml")
        let root = yaml ? try YAMLSubset.document(data, file: file) : try JSONParser.document(data, file: file)
        var log = DiagnosticLog()
        let experiment = read(root, knownApp: knownApp, appNames: appNames, policy: policy, &log)
        if log.hasErrors { throw LoadFailure(log.items) }
        return experiment!
    }

    /// Why a policy entry names no policy (shown at the entry's line and key).
    public struct PolicyLookupFailure: Error, Sendable {
        public var reason: String
        public init(_ reason: String) { self.reason = reason }
    }

    static func read(_ root: Located, knownApp: (String) -> Bool, appNames: [String] = [],
                     policy resolve: (String) -> Result<String, PolicyLookupFailure> = { .success($0) },
                     _ log: inout DiagnosticLog) -> Experiment? {
        guard let members = root.object(&log) else { return nil }
        unknownKeys(members, allowed: topKeys, &log)
        let name = root.member("name")?.string(&log) ?? "experiment"
        let description = root.member("description")?.string(&log) ?? ""
        let tenant = root.member("tenant")?.string(&log)

        var parties: [PartySpec] = []
        var policyApps = false
        if let list = root.member("parties"), case let .string(word) = list.node.value {
            if word == "policy-apps" {
                policyApps = true
            } else {
                log.append(list.problem("expected a list of parties or \"policy-apps\" (a party per app the policies target), found \"\(word.prefix(60))\""))
            }
        } else if let list = root.member("parties") {
            for item in list.array(&log) ?? [] {
                if let p = party(item, knownApp: knownApp, appNames: appNames, &log) {
                    if parties.contains(where: { $0.name == p.name }) {
                        log.append(item.member("name")!.problem("a second party named \"\(p.name)\"; party names are unique"))
                    }
                    parties.append(p)
                }
            }
            if parties.isEmpty && !log.hasErrors { log.append(list.problem("an experiment needs at least one party")) }
        } else {
            log.append(root.problem("missing \"parties\": the apps, their accounts and identities"))
        }

        var channels: [ChannelSpec] = []
        for item in root.member("channels")?.array(&log) ?? [] {
            if let c = channel(item, &log) {
                if c.channel.isAccountChannel {
                    log.append(item.problem("\(c.channel.rawValue) needs an account: write it as a cell with \"account\""))
                } else {
                    channels.append(c)
                }
            }
        }

        var payload = Payload()
        if let p = root.member("payload"), let members = p.object(&log) {
            unknownKeys(members, allowed: payloadKeys, &log)
            for (key, value) in members {
                guard let s = value.string(&log) else { continue }
                if s.isEmpty || s.utf8.count > 4096 { log.append(value.problem("expected 1 to 4096 bytes")); continue }
                switch key {
                case "text": payload.text = s
                case "documentType": payload.documentType = s
                case "documentName": payload.documentName = s
                case "documentContent": payload.documentContent = s
                case "urlPath": payload.urlPath = s
                default: break
                }
            }
        }

        var policies: [PolicyRef] = []
        if let list = root.member("policies") {
            for item in list.array(&log) ?? [] {
                guard let s = item.string(&log) else { continue }
                if s.isEmpty { log.append(item.problem("expected \"tenant\" or a policy file's path")); continue }
                var ref: PolicyRef = .tenant
                if s != "tenant" {
                    switch resolve(s) {
                    case let .success(path): ref = .file(path)
                    case let .failure(failure): log.append(item.problem(failure.reason)); continue
                    }
                }
                if policies.contains(where: { $0.label == ref.label }) {
                    log.append(item.problem("a second policy labelled \"\(ref.label)\"; reports name policies by file name"))
                }
                policies.append(ref)
            }
            if policies.isEmpty { log.append(list.problem("expected at least one policy (\"tenant\" is the tenant as it is)")) }
        } else {
            policies = [.tenant]
        }

        var cells: [CellSpec] = []
        if policyApps, let node = root.member("cells") {
            log.append(node.problem("cells name parties, and with \"parties\": \"policy-apps\" the run makes the parties; write the parties out to add cells"))
        }
        for item in (policyApps ? [] : root.member("cells")?.array(&log) ?? []) {
            if let c = cell(item, parties: parties, policies: policies, &log) { cells.append(c) }
        }
        if channels.isEmpty && cells.isEmpty && !log.hasErrors {
            log.append(root.problem("nothing to run: give \"channels\" (tried between every pair of parties) or \"cells\""))
        }
        var experiment = Experiment(name: name, description: description, tenant: tenant, parties: parties, channels: channels,
                                    payload: payload, policies: policies, cells: cells)
        experiment.policyApps = policyApps
        return experiment
    }

    static func party(_ item: Located, knownApp: (String) -> Bool, appNames: [String] = [], _ log: inout DiagnosticLog) -> PartySpec? {
        guard let members = item.object(&log) else { return nil }
        unknownKeys(members, allowed: partyKeys, &log)
        guard let nameNode = item.member("name"), let name = nameNode.string(&log) else {
            if item.member("name") == nil { log.append(item.problem("missing \"name\"")) }
            return nil
        }
        if name.isEmpty || name.count > 64 { log.append(nameNode.problem("a party's name is 1 to 64 characters")) }
        guard let appNode = item.member("app"), let app = appNode.string(&log) else {
            if item.member("app") == nil { log.append(item.problem("missing \"app\": an Apps/ folder name or a bundle id")) }
            return nil
        }
        if !knownApp(app) {
            let like = NearestName.nearest(to: app, in: appNames).map { " (did you mean \"\($0)\"?)" } ?? ""
            log.append(appNode.problem("unknown app \"\(app.prefix(80))\"\(like); give an Apps/ folder name, a catalog app's name or a bundle id"))
        }
        let accounts = item.member("accounts")?.strings(&log) ?? []
        if let node = item.member("accounts"), accounts.contains(where: { $0.isEmpty || $0.lowercased() == "none" }) {
            log.append(node.problem("an account is a UPN, an OID or personal"))
        }
        var identity: String?
        if let node = item.member("identity"), let s = node.string(&log) {
            let lower = s.lowercased()
            if lower != "none" && lower != "personal" && !accounts.contains(where: { $0.lowercased() == lower }) {
                log.append(node.problem("the identity \"\(s.prefix(80))\" is not signed in; use one of \"accounts\", personal or none"))
            }
            identity = s
        }
        return PartySpec(name: name, app: app, accounts: accounts, identity: identity)
    }

    /// `CHANNEL` or `CHANNEL LOCATION[:ACCOUNT]`.
    static func channel(_ item: Located, _ log: inout DiagnosticLog) -> ChannelSpec? {
        guard let s = item.string(&log) else { return nil }
        let words = s.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let first = words.first, let channel = Channel(rawValue: first) else {
            log.append(item.problem("unknown channel \"\(s.prefix(80))\"; allowed: \(Channel.allCases.map(\.rawValue).joined(separator: ", ")) (save-to and open-from take a LOCATION[:ACCOUNT], open-url an optional URL)"))
            return nil
        }
        let spec = ChannelSpec(channel, location: words.count > 1 ? words[1] : nil)
        if words.count > 2 { log.append(item.problem("expected \"CHANNEL\" or \"CHANNEL LOCATION[:ACCOUNT]\"")); return nil }
        if channel.needsLocation {
            guard let (name, account) = spec.locationParts else {
                log.append(item.problem("\(channel.rawValue) needs a location: \"\(channel.rawValue) LOCATION[:ACCOUNT]\""))
                return nil
            }
            let takesAccount: Bool, acceptsAccount: Bool
            if channel == .saveTo {
                guard let l = SaveLocation(name: name) else {
                    log.append(item.problem("unknown save location \"\(name.prefix(80))\"; allowed: \(SaveLocation.allCases.map(\.name).joined(separator: ", "))"))
                    return nil
                }
                (takesAccount, acceptsAccount) = (l.takesAccount, l.acceptsAccount)
            } else {
                guard let l = OpenLocation(name: name), l != .camera else {
                    log.append(item.problem("unknown open location \"\(name.prefix(80))\"; allowed: \(OpenLocation.allCases.filter { $0 != .camera }.map(\.name).joined(separator: ", ")) (the camera holds nothing a party could save first)"))
                    return nil
                }
                (takesAccount, acceptsAccount) = (l.takesAccount, l.acceptsAccount)
            }
            // `other` may name the unknown service's account (SEMANTICS 4.6.save).
            if takesAccount ? account == nil : (account != nil && !acceptsAccount) {
                log.append(item.problem(takesAccount ? "\(name) belongs to an account: write \(name):ACCOUNT" : "\(name) takes no account"))
                return nil
            }
        } else if channel == .openURL, let url = spec.location {
            if let problem = ChannelSpec.urlProblem(url) { log.append(item.problem("open-url \(url.prefix(80)): \(problem)")); return nil }
        } else if spec.location != nil {
            log.append(item.problem("\(channel.rawValue) takes no location"))
            return nil
        }
        return spec
    }

    static func cell(_ item: Located, parties: [PartySpec], policies: [PolicyRef], _ log: inout DiagnosticLog) -> CellSpec? {
        guard let members = item.object(&log) else { return nil }
        unknownKeys(members, allowed: cellKeys, &log)
        guard let channelNode = item.member("channel") else { log.append(item.problem("missing \"channel\"")); return nil }
        guard let channel = channel(channelNode, &log) else { return nil }
        func partyName(_ key: String, required: Bool) -> String? {
            guard let node = item.member(key) else {
                if required { log.append(item.problem("missing \"\(key)\" (a party's name)")) }
                return nil
            }
            guard let s = node.string(&log) else { return nil }
            if !parties.contains(where: { $0.name == s }) {
                log.append(node.problem("no party named \"\(s.prefix(80))\"; parties: \(parties.map(\.name).joined(separator: ", "))"))
            }
            return s
        }
        let source = partyName("source", required: true)
        let target = partyName("target", required: channel.channel.hasTarget)
        if !channel.channel.hasTarget, let node = item.member("target") {
            log.append(node.problem("\(channel.channel.rawValue) has no target"))
        }
        let account = item.member("account")?.string(&log)
        let check = item.member("check")?.string(&log)
        if channel.channel.isAccountChannel && account == nil { log.append(item.problem("\(channel.channel.rawValue) needs \"account\"")) }
        if !channel.channel.isAccountChannel, let node = item.member("account") ?? item.member("check") {
            log.append(node.problem("only login and logout take an account; a location's account goes after it (save-to sharePoint:ACCOUNT)"))
        }
        var labels: [String] = []
        if let node = item.member("policies") {
            labels = node.strings(&log) ?? []
            for l in labels where !policies.contains(where: { $0.label == l }) {
                log.append(node.problem("no policy labelled \"\(l.prefix(80))\"; labels: \(policies.map(\.label).joined(separator: ", "))"))
            }
        }
        let expect = item.member("expect").flatMap { expectation($0, &log) }
        guard let source else { return nil }
        return CellSpec(label: item.member("label")?.string(&log), channel: channel, source: source, target: target,
                        account: account, check: check, policies: labels, expect: expect)
    }

    static func expectation(_ item: Located, _ log: inout DiagnosticLog) -> Expectation? {
        guard let members = item.object(&log) else { return nil }
        unknownKeys(members, allowed: expectKeys, &log)
        guard let node = item.member("outcome") else { log.append(item.problem("missing \"outcome\"")); return nil }
        var outcomes: [Outcome] = []
        if case .array = node.node.value {
            for o in node.array(&log) ?? [] { if let x = o.enumeration(Outcome.self, &log) { outcomes.append(x) } }
            if outcomes.isEmpty { log.append(node.problem("expected at least one outcome")) }
        } else if let x = node.enumeration(Outcome.self, &log) {
            outcomes = [x]
        }
        guard !outcomes.isEmpty else { return nil }
        return Expectation(outcomes, identity: item.member("identity")?.string(&log), managed: item.member("managed")?.bool(&log),
                           note: item.member("note")?.string(&log))
    }

    static func unknownKeys(_ members: [(key: String, value: Located)], allowed: Set<String>, _ log: inout DiagnosticLog) {
        for (key, value) in members where !allowed.contains(key) {
            log.append(value.problem("unknown key \"\(key.prefix(80))\"; allowed keys: \(allowed.sorted().joined(separator: ", "))"))
        }
    }
}
