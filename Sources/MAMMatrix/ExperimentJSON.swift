import MAMScript

extension Experiment {
    /// The experiment as an experiment file would write it (docs/experiment.schema.json): the
    /// built-ins are shown and checked against the schema in this form.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "name": .string(name),
            "parties": policyApps ? .string("policy-apps") : .array(parties.map(\.json)),
            "policies": .array(policies.map { .string($0.description) }),
        ]
        if !description.isEmpty { o["description"] = .string(description) }
        if let tenant { o["tenant"] = .string(tenant) }
        if !channels.isEmpty { o["channels"] = .array(channels.map { .string($0.description) }) }
        if payload != Payload() {
            o["payload"] = ["text": .string(payload.text), "documentType": .string(payload.documentType),
                            "documentName": .string(payload.documentName), "documentContent": .string(payload.documentContent),
                            "urlPath": .string(payload.urlPath)]
        }
        if !cells.isEmpty { o["cells"] = .array(cells.map(\.json)) }
        return .object(o)
    }
}

extension PartySpec {
    var json: JSONValue {
        var o: [String: JSONValue] = ["name": .string(name), "app": .string(app)]
        if !accounts.isEmpty { o["accounts"] = .array(accounts.map { .string($0) }) }
        if let identity { o["identity"] = .string(identity) }
        return .object(o)
    }
}

extension CellSpec {
    var json: JSONValue {
        var o: [String: JSONValue] = ["channel": .string(channel.description), "source": .string(source)]
        if let label { o["label"] = .string(label) }
        if let target { o["target"] = .string(target) }
        if let account { o["account"] = .string(account) }
        if let check { o["check"] = .string(check) }
        if !policies.isEmpty { o["policies"] = .array(policies.map { .string($0) }) }
        if let expect {
            var e: [String: JSONValue] = ["outcome": expect.outcomes.count == 1 ? .string(expect.outcomes[0].rawValue)
                : .array(expect.outcomes.map { .string($0.rawValue) })]
            if let i = expect.identity { e["identity"] = .string(i) }
            if let m = expect.managed { e["managed"] = .bool(m) }
            if let n = expect.note { e["note"] = .string(n) }
            o["expect"] = .object(e)
        }
        return .object(o)
    }
}
