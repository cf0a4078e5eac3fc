import Foundation

// Codable forms of the model types whose stored form is not their Swift shape: an account is
// its names (its shared box is an implementation detail), a node its value (its position is
// where it was read, not what it is), a manifest the arguments of its initializer (the lookup
// tables are rebuilt from them). The broker sends them to an SDK app in a policy snapshot.

extension Account: Codable {
    enum CodingKeys: String, CodingKey { case userIndex, upn, oid, name }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let index = try c.decodeIfPresent(Int.self, forKey: .userIndex) {
            guard index >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .userIndex, in: c, debugDescription: "a user index is 0 or more")
            }
            self.init(userIndex: index, upn: try c.decode(String.self, forKey: .upn), oid: try c.decodeIfPresent(String.self, forKey: .oid))
        } else {
            self.init(unknown: try c.decode(String.self, forKey: .name))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(userIndex, forKey: .userIndex)
        try c.encodeIfPresent(upn, forKey: .upn)
        try c.encodeIfPresent(oid, forKey: .oid)
        try c.encode(name, forKey: .name)
    }
}

extension Node: Codable {
    /// One key naming the case; an object is a list of `{key, value}` so its order survives.
    enum CodingKeys: String, CodingKey { case null, bool, integer, real, string, data, date, array, object }
    struct Pair: Codable {
        var key: String
        var value: Node
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = c.allKeys.first, c.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(.init(codingPath: c.codingPath, debugDescription: "a node has exactly one of \(CodingKeys.allNames)"))
        }
        switch key {
        case .null: self.init(.null)
        case .bool: self.init(.bool(try c.decode(Bool.self, forKey: key)))
        case .integer: self.init(.integer(try c.decode(Int.self, forKey: key)))
        case .real: self.init(.real(try c.decode(Double.self, forKey: key)))
        case .string: self.init(.string(try c.decode(String.self, forKey: key)))
        case .data: self.init(.data(try c.decode(Data.self, forKey: key)))
        case .date: self.init(.date(try c.decode(Date.self, forKey: key)))
        case .array: self.init(.array(try c.decode([Node].self, forKey: key)))
        case .object: self.init(.object(try c.decode([Pair].self, forKey: key).map { ($0.key, $0.value) }))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch value {
        case .null: try c.encode(true, forKey: .null)
        case let .bool(b): try c.encode(b, forKey: .bool)
        case let .integer(i): try c.encode(i, forKey: .integer)
        case let .real(r): try c.encode(r, forKey: .real)
        case let .string(s): try c.encode(s, forKey: .string)
        case let .data(d): try c.encode(d, forKey: .data)
        case let .date(d): try c.encode(d, forKey: .date)
        case let .array(a): try c.encode(a, forKey: .array)
        case let .object(pairs): try c.encode(pairs.map { Pair(key: $0.key, value: $0.value) }, forKey: .object)
        }
    }
}

extension Node.CodingKeys: CaseIterable {
    static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }
}

extension AppManifest.ActivationRule: Codable {
    enum CodingKeys: String, CodingKey { case predicate, dictionary }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let p = try c.decodeIfPresent(String.self, forKey: .predicate) { self = .predicate(p) } else {
            self = .dictionary(try c.decode(Node.self, forKey: .dictionary))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case let .predicate(p): try c.encode(p, forKey: .predicate)
        case let .dictionary(n): try c.encode(n, forKey: .dictionary)
        }
    }
}

extension AppManifest: Codable {
    enum CodingKeys: String, CodingKey {
        case bundleID, displayName, executable, urlSchemes, queriedSchemes, documentTypes, extensionPoint, activationRule, mamSettings
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(bundleID: try c.decode(String.self, forKey: .bundleID),
                  displayName: try c.decodeIfPresent(String.self, forKey: .displayName),
                  executable: try c.decodeIfPresent(String.self, forKey: .executable),
                  urlSchemes: try c.decodeIfPresent([String].self, forKey: .urlSchemes) ?? [],
                  queriedSchemes: try c.decodeIfPresent([String].self, forKey: .queriedSchemes) ?? [],
                  documentTypes: try c.decodeIfPresent([DocumentType].self, forKey: .documentTypes) ?? [],
                  extensionPoint: try c.decodeIfPresent(String.self, forKey: .extensionPoint),
                  activationRule: try c.decodeIfPresent(ActivationRule.self, forKey: .activationRule),
                  mamSettings: try c.decodeIfPresent(Node.self, forKey: .mamSettings))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(bundleID, forKey: .bundleID)
        try c.encode(displayName, forKey: .displayName)
        try c.encodeIfPresent(executable, forKey: .executable)
        try c.encode(urlSchemes, forKey: .urlSchemes)
        try c.encode(queriedSchemes, forKey: .queriedSchemes)
        try c.encode(documentTypes, forKey: .documentTypes)
        try c.encodeIfPresent(extensionPoint, forKey: .extensionPoint)
        try c.encodeIfPresent(activationRule, forKey: .activationRule)
        try c.encodeIfPresent(mamSettings, forKey: .mamSettings)
    }
}
