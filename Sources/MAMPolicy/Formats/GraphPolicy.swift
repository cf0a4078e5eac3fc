import Foundation

/// Reads and writes policies in the shape of Microsoft Graph's `iosManagedAppProtection`.
///
/// Unknown properties are kept by the caller's document and ignored here; a wrong type, an
/// unknown enum value or an impossible combination is an error naming the JSON path and the
/// allowed values (SEMANTICS §2).
public enum GraphPolicy {
    public static let odataType = "#microsoft.graph.iosManagedAppProtection"

    // Field tables keep the reader and the writer in step: one line per Graph property.
    static func boolFields() -> [(String, WritableKeyPath<PolicySettings, Bool>)] {
        [("filterOpenInToOnlyManagedApps", \.filterOpenInToOnlyManagedApps),
         ("disableProtectionOfManagedOutboundOpenInData", \.disableProtectionOfManagedOutboundOpenInData),
         ("protectInboundDataFromUnknownSources", \.protectInboundDataFromUnknownSources),
         ("saveAsBlocked", \.saveAsBlocked),
         ("blockDataIngestionIntoOrganizationDocuments", \.blockDataIngestionIntoOrganizationDocuments),
         ("managedBrowserToOpenLinksRequired", \.managedBrowserRequired),
         ("printBlocked", \.printBlocked),
         ("contactSyncBlocked", \.contactSyncBlocked),
         ("dataBackupBlocked", \.dataBackupBlocked),
         ("pinRequired", \.pinRequired),
         ("simplePinBlocked", \.simplePinBlocked)]
    }

    static func intFields() -> [(String, WritableKeyPath<PolicySettings, Int>, Int)] {
        [("allowedOutboundClipboardSharingExceptionLength", \.clipboardExceptionLength, 0),
         ("minimumPinLength", \.minimumPinLength, 1),
         ("maximumPinRetries", \.maximumPinRetries, 1)]
    }

    /// The properties this reader gives meaning to.
    static let handledProperties: [String] = [
        "@odata.type", "id", "displayName", "allowedOutboundDataTransferDestinations", "allowedInboundDataTransferSources",
        "allowedOutboundClipboardSharingLevel", "dialerRestrictionLevel", "notificationRestriction", "managedBrowser",
        "appDataEncryptionType", "pinCharacterSet", "customBrowserProtocol", "customDialerAppProtocol", "exemptedAppProtocols",
        "allowedDataStorageLocations", "allowedDataIngestionLocations", "apps", "appGroupType", "assignments",
        "periodOnlineBeforeAccessCheck", "periodOfflineBeforeAccessCheck", localStorageKey,
    ] + boolFields().map(\.0) + intFields().map(\.0) + launchProperties

    /// MAMLab's one key of its own in the Graph form (docs/POLICIES.md): the debug form's Local
    /// Storage bit of `OpenDataFromManagedLocations`, which `allowedDataIngestionLocations` has
    /// no value for. Written only when set, so that a policy written back loses nothing.
    public static let localStorageKey = "mamlabAllowedDataIngestionFromLocalStorage"

    /// Graph's other `iosManagedAppProtection` properties (with those of `managedAppProtection`,
    /// `targetedManagedAppProtection` and `managedAppPolicy` it inherits): real, so not a typo,
    /// but outside what MAMLab emulates. Read without a warning; `check` notes each with why.
    static var ignoredProperties: Set<String> { Set(noEffect.keys) }

    /// Why each of Graph's other properties changes nothing MAMLab emulates, as `check` says it.
    public static let noEffect: [String: String] = {
        var reasons: [String: String] = [:]
        func say(_ reason: String, _ keys: [String]) { for k in keys { reasons[k] = reason } }
        say("the policy object's own bookkeeping; it decides nothing on a device",
            ["description", "createdDateTime", "lastModifiedDateTime", "version", "roleScopeTagIds", "isAssigned",
             "targetedAppManagementLevels", "deploymentSummary", "deployedAppCount"])
        say("the SDK's PIN and biometric prompts are not emulated: MAMLab's apps ask for no PIN (MAMKit reports isPINRequired)",
            ["periodBeforePinReset", "fingerprintBlocked", "faceIdBlocked", "disableAppPinIfDevicePinIsSet",
             "appActionIfMaximumPinRetriesExceeded", "pinRequiredInsteadOfBiometricTimeout", "previousPinBlockCount"])
        say("signing in is the launcher's and the emulated identity provider's; the policy's sign-in prompt is not emulated",
            ["organizationalCredentialsRequired", "appActionIfUnableToAuthenticateUser"])
        say("the launch checks take minimum versions only (docs/SEMANTICS.md §9)",
            ["maximumRequiredOsVersion", "maximumWarningOsVersion", "maximumWipeOsVersion"])
        say("the device profile holds one threat level, whichever partner reports it", ["mobileThreatDefensePartnerPriority"])
        say("working time (clocked in or out) is not part of the device profile",
            ["gracePeriodToBlockAppsDuringOffClockHours", "appActionIfAccountIsClockedOut"])
        say("messaging redirection is no channel the broker routes", ["protectedMessagingRedirectAppType", "messagingRedirectAppUrlScheme"])
        say("an OS service MAMLab has no stand-in for (Linux has no such service to route)",
            ["genmojiConditionalAccess", "writingToolsBlocked", "screenCaptureBlocked", "thirdPartyKeyboardsBlocked"])
        say("universal links are not routed by the broker: links go by their scheme (docs/SEMANTICS.md §4.4)",
            ["managedUniversalLinks", "exemptedUniversalLinks"])
        return reasons
    }()

    /// Every property a policy may hold, for the nearest-key suggestion.
    static var knownProperties: [String] { handledProperties + ignoredProperties.sorted() }

    /// The properties of the policy objects in `root` (one policy, an array, a list response)
    /// that change nothing MAMLab emulates, each where the file sets it, with why.
    public static func propertiesWithNoEffect(in root: Located) -> [(at: Located, key: String, reason: String)] {
        var out: [(at: Located, key: String, reason: String)] = []
        var log = DiagnosticLog()
        func policy(_ object: Located) {
            guard case let .object(pairs) = object.node.value else { return }
            if let list = object.member("value"), case .array = list.node.value {
                for item in list.array(&log) ?? [] { policy(item) }
                return
            }
            for (key, _) in pairs {
                if let reason = noEffect[key], let at = object.member(key) { out.append((at, key, reason)) }
            }
        }
        if case .array = root.node.value { for item in root.array(&log) ?? [] { policy(item) } } else { policy(root) }
        return out
    }

    /// Reads one policy object. Returns nil when it holds an error (logged).
    /// `knownGroups`, when given, makes an assignment to any other group an error.
    public static func read(_ object: Located, knownGroups: Set<String>? = nil, log: inout DiagnosticLog) -> Policy? {
        guard let members = object.object(&log) else { return nil }
        let errorsBefore = log.items.filter { $0.severity == .error }.count
        var s = PolicySettings()
        var policy = Policy(id: "", displayName: "", origin: Origin(object))
        var localStorage = false

        for (key, value) in members {
            switch key {
            case "@odata.type":
                if let t = value.string(&log), t != odataType {
                    log.append(value.problem("this is a \(t), not an iOS app-protection policy; expected \(odataType)"))
                }
            case "id": policy.id = value.string(&log) ?? ""
            case "displayName": policy.displayName = value.string(&log) ?? ""
            case "allowedOutboundDataTransferDestinations":
                s.send = value.enumeration(SendLevel.self, &log) ?? s.send
            case "allowedInboundDataTransferSources":
                s.receive = value.enumeration(ReceiveLevel.self, &log) ?? s.receive
            case "allowedOutboundClipboardSharingLevel":
                s.clipboard = value.enumeration(ClipboardLevel.self, &log) ?? s.clipboard
            case "dialerRestrictionLevel":
                s.dialer = value.enumeration(DialerLevel.self, &log) ?? s.dialer
            case "notificationRestriction":
                s.notificationRestriction = value.enumeration(NotificationRestriction.self, &log) ?? s.notificationRestriction
            case "managedBrowser":
                s.managedBrowser = value.enumeration(ManagedBrowser.self, &log) ?? s.managedBrowser
            case "appDataEncryptionType":
                s.appDataEncryption = value.enumeration(AppDataEncryption.self, &log) ?? s.appDataEncryption
            case "pinCharacterSet":
                s.pinCharacterSet = value.enumeration(PINCharacterSet.self, &log) ?? s.pinCharacterSet
            case "customBrowserProtocol":
                s.customBrowserProtocol = optionalString(value, &log)
            case "customDialerAppProtocol":
                s.customDialerAppProtocol = optionalString(value, &log)
            case "exemptedAppProtocols":
                if let schemes = exemptions(value, &log) { s.exemptedSchemes = schemes }
            case "allowedDataStorageLocations":
                if let items = value.array(&log) {
                    let found = items.compactMap { $0.enumeration(GraphStorageLocation.self, &log) }
                    s.allowedSaveLocations = SaveLocations(found.map(\.saveLocation))
                }
            case "allowedDataIngestionLocations":
                if let items = value.array(&log) {
                    let found = items.compactMap { $0.enumeration(GraphIngestionLocation.self, &log) }
                    s.allowedIngestionLocations = OpenLocations(found.map(\.openLocation))
                }
            case "apps":
                let found = apps(value, &log)
                policy.targetedApps = found.map { $0.0.lowercased() }
                policy.appOrigins = found.map(\.1)
            case "appGroupType":
                if let group = value.enumeration(AppGroup.self, &log), group != .selectedPublicApps {
                    policy.appGroup = group
                    policy.appGroupOrigin = Origin(value)
                }
            case "assignments": readAssignments(value, into: &policy, knownGroups: knownGroups, &log)
            case "periodOnlineBeforeAccessCheck":
                if let m = minutes(value, &log) { s.accessRecheckOnlineMinutes = m }
            case "periodOfflineBeforeAccessCheck":
                if let m = minutes(value, &log) { s.accessRecheckOfflineMinutes = m }
            case localStorageKey:
                if let b = value.bool(&log) { localStorage = b }
            default:
                if readLaunch(key, value, into: &s.launch, &log) {
                    // A conditional launch property (GraphLaunch.swift).
                } else if let (_, path) = boolFields().first(where: { $0.0 == key }) {
                    if let b = value.bool(&log) { s[keyPath: path] = b }
                } else if let (_, path, minimum) = intFields().first(where: { $0.0 == key }) {
                    if let i = value.integer(&log, minimum: minimum) { s[keyPath: path] = i }
                } else if !key.contains("@odata"), !ignoredProperties.contains(key) {
                    // A key Graph does not have is most likely a typo of one it has: ignored in
                    // silence, the setting would fall to its default (often the permissive one).
                    let nearest = NearestName.nearest(to: key, in: knownProperties).map { "; did you mean \"\($0)\"?" } ?? ""
                    log.append(value.problem(.warning, "unknown key \"\(key)\" in an iosManagedAppProtection policy; it is ignored\(nearest)"))
                }
                // Graph's other properties are kept by the document and have no bearing here.
            }
        }
        // After the list it completes, whichever order the keys came in.
        if localStorage { s.allowedIngestionLocations = OpenLocations(rawValue: s.allowedIngestionLocations.rawValue | OpenLocation.localStorage.rawValue) }
        for violation in s.couplingViolations {
            let at = object.member(violation.property) ?? object
            log.append(at.problem(violation.reason))
        }
        s.applyCouplings()
        policy.settings = s
        if policy.displayName.isEmpty { policy.displayName = policy.id.isEmpty ? object.path : policy.id }
        if policy.id.isEmpty { policy.id = policy.displayName }
        let errorsAfter = log.items.filter { $0.severity == .error }.count
        return errorsAfter == errorsBefore ? policy : nil
    }

    /// A Graph duration (ISO 8601 `PnDTnHnMnS`, e.g. `PT30M`, `PT12H`) in whole minutes, greater than 0.
    static func minutes(_ value: Located, _ log: inout DiagnosticLog) -> Int? {
        guard let text = value.string(&log) else { return nil }
        guard let m = isoMinutes(text), m > 0 else {
            log.append(value.problem("\"\(text)\" is not a duration of at least one whole minute; expected ISO 8601 such as PT30M or PT12H"))
            return nil
        }
        return m
    }

    /// Parses `PnDTnHnMnS` (whole numbers; seconds must make whole minutes); nil when malformed.
    static func isoMinutes(_ text: String) -> Int? {
        var rest = Substring(text.uppercased())
        guard rest.first == "P" else { return nil }
        rest = rest.dropFirst()
        var seconds = 0, inTime = false, number = "", sawUnit = false
        for c in rest {
            if c.isASCII && c.isNumber { number.append(c); continue }
            if c == "T" && !inTime && number.isEmpty { inTime = true; continue }
            guard let n = Int(number), n <= 1_000_000 else { return nil }
            number = ""
            switch (c, inTime) {
            case ("D", false): seconds += n * 86_400
            case ("H", true): seconds += n * 3_600
            case ("M", true): seconds += n * 60
            case ("S", true): seconds += n
            default: return nil
            }
            sawUnit = true
        }
        guard number.isEmpty, sawUnit, seconds % 60 == 0 else { return nil }
        return seconds / 60
    }

    private static func optionalString(_ value: Located, _ log: inout DiagnosticLog) -> String? {
        if case .null = value.node.value { return nil }
        let s = value.string(&log)
        return (s?.isEmpty ?? true) ? nil : s
    }

    private static func exemptions(_ value: Located, _ log: inout DiagnosticLog) -> [String]? {
        guard let items = value.array(&log) else { return nil }
        var schemes: [String] = []
        for item in items {
            guard item.object(&log) != nil else { continue }
            guard let v = item.member("value") else {
                log.append(item.problem("an exempted protocol needs a \"value\" with its scheme(s), joined by ';'"))
                continue
            }
            if let text = v.string(&log) {
                for scheme in PolicySettings.schemes(in: text) where !schemes.contains(scheme) { schemes.append(scheme) }
            }
        }
        return schemes
    }

    static func apps(_ value: Located, _ log: inout DiagnosticLog) -> [(String, Origin)] {
        guard let items = value.array(&log) else { return [] }
        var ids: [(String, Origin)] = []
        for item in items {
            // Accept the Graph shape `{"mobileAppIdentifier": {"bundleId": ...}}` and a bare bundle id.
            if case .string = item.node.value, let s = item.string(&log) { ids.append((s, Origin(item))); continue }
            guard item.object(&log) != nil else { continue }
            guard let identifier = item.member("mobileAppIdentifier") else {
                log.append(item.problem("a targeted app needs \"mobileAppIdentifier\": {\"bundleId\": ...}"))
                continue
            }
            if let t = identifier.member("@odata.type"), let type = t.string(&log),
               type != "#microsoft.graph.iosMobileAppIdentifier" {
                log.append(t.problem("\(type) is not an iOS app; expected #microsoft.graph.iosMobileAppIdentifier"))
                continue
            }
            guard let bundle = identifier.member("bundleId") else {
                log.append(identifier.problem("missing \"bundleId\""))
                continue
            }
            if let b = bundle.string(&log) {
                if b.isEmpty { log.append(bundle.problem("bundle id is empty")) } else { ids.append((b, Origin(bundle))) }
            }
        }
        return ids
    }

    private static let includeTargets: Set<String> = [
        "#microsoft.graph.groupAssignmentTarget", "#microsoft.graph.exclusionGroupAssignmentTarget",
        "#microsoft.graph.allLicensedUsersAssignmentTarget",
    ]

    static func readAssignments(_ value: Located, into policy: inout Policy, knownGroups: Set<String>?,
                                _ log: inout DiagnosticLog) {
        guard let items = value.array(&log) else { return }
        for item in items {
            guard item.object(&log) != nil else { continue }
            guard let target = item.member("target"), target.object(&log) != nil else {
                log.append(item.problem("an assignment needs a \"target\" object"))
                continue
            }
            var type = "#microsoft.graph.groupAssignmentTarget"
            if let t = target.member("@odata.type") { type = t.string(&log) ?? type }
            guard includeTargets.contains(type) else {
                log.append((target.member("@odata.type") ?? target).problem(
                    "unknown assignment target \"\(type)\"; allowed values: \(includeTargets.sorted().joined(separator: ", "))"))
                continue
            }
            if type == "#microsoft.graph.allLicensedUsersAssignmentTarget" { policy.allUsers = true; continue }
            guard let g = target.member("groupId"), let group = g.string(&log) else {
                if target.member("groupId") == nil { log.append(target.problem("missing \"groupId\"")) }
                continue
            }
            if let known = knownGroups, !known.contains(group.lowercased()) {
                log.append(g.problem("unknown group \"\(group)\"; the tenant's groups are: \(known.sorted().joined(separator: ", "))"))
                continue
            }
            if type == "#microsoft.graph.exclusionGroupAssignmentTarget" {
                policy.excludedGroups.append(group)
            } else {
                policy.includedGroups.append(group)
            }
        }
    }

    /// Writes a policy back as a Graph object; the keys come out in a stable order.
    public static func write(_ policy: Policy) -> Node {
        let s = policy.settings
        var pairs: [(key: String, value: Node)] = [
            ("@odata.type", Node(.string(odataType))),
            ("id", Node(.string(policy.id))),
            ("displayName", Node(.string(policy.displayName))),
            ("allowedOutboundDataTransferDestinations", Node(.string(s.send.rawValue))),
            ("allowedInboundDataTransferSources", Node(.string(s.receive.rawValue))),
            ("allowedOutboundClipboardSharingLevel", Node(.string(s.clipboard.rawValue))),
            ("dialerRestrictionLevel", Node(.string(s.dialer.rawValue))),
            ("notificationRestriction", Node(.string(s.notificationRestriction.rawValue))),
            ("managedBrowser", Node(.string(s.managedBrowser.rawValue))),
            ("appDataEncryptionType", Node(.string(s.appDataEncryption.rawValue))),
            ("pinCharacterSet", Node(.string(s.pinCharacterSet.rawValue))),
            ("customBrowserProtocol", Node(s.customBrowserProtocol.map { .string($0) } ?? .null)),
            ("customDialerAppProtocol", Node(s.customDialerAppProtocol.map { .string($0) } ?? .null)),
            ("exemptedAppProtocols", Node(.array(s.exemptedSchemes.map {
                Node(.object([("name", Node(.string($0))), ("value", Node(.string($0)))]))
            }))),
            ("allowedDataStorageLocations", Node(.array(s.allowedSaveLocations.locations.compactMap {
                GraphStorageLocation($0).map { Node(.string($0.rawValue)) }
            }))),
            ("allowedDataIngestionLocations", Node(.array(s.allowedIngestionLocations.locations.compactMap {
                GraphIngestionLocation($0).map { Node(.string($0.rawValue)) }
            }))),
            ("periodOnlineBeforeAccessCheck", Node(.string("PT\(s.accessRecheckOnlineMinutes)M"))),
            ("periodOfflineBeforeAccessCheck", Node(.string("PT\(s.accessRecheckOfflineMinutes)M"))),
        ]
        pairs += writeLaunch(s.launch)
        if s.allowedIngestionLocations.contains(.localStorage) { pairs.append((localStorageKey, Node(.bool(true)))) }
        for (key, path) in boolFields() { pairs.append((key, Node(.bool(s[keyPath: path])))) }
        for (key, path, _) in intFields() { pairs.append((key, Node(.integer(s[keyPath: path])))) }
        if let group = policy.appGroup { pairs.append(("appGroupType", Node(.string(group.rawValue)))) }
        pairs.append(("apps", appList(policy.targetedApps)))
        pairs.append(("assignments", assignments(of: policy)))
        return Node(.object(pairs))
    }

    /// Graph's `apps` list for bundle ids.
    static func appList(_ bundleIDs: [String]) -> Node {
        Node(.array(bundleIDs.map { id in
            Node(.object([("mobileAppIdentifier", Node(.object([
                ("@odata.type", Node(.string("#microsoft.graph.iosMobileAppIdentifier"))),
                ("bundleId", Node(.string(id))),
            ])))]))
        }))
    }

    /// Graph's `assignments` list for whom a policy (or an app configuration) reaches.
    static func assignments(of policy: Policy) -> Node {
        var assignments: [Node] = []
        func target(_ type: String, _ group: String?) -> Node {
            var t: [(key: String, value: Node)] = [("@odata.type", Node(.string(type)))]
            if let group { t.append(("groupId", Node(.string(group)))) }
            return Node(.object([("target", Node(.object(t)))]))
        }
        if policy.allUsers { assignments.append(target("#microsoft.graph.allLicensedUsersAssignmentTarget", nil)) }
        assignments += policy.includedGroups.map { target("#microsoft.graph.groupAssignmentTarget", $0) }
        assignments += policy.excludedGroups.map { target("#microsoft.graph.exclusionGroupAssignmentTarget", $0) }
        return Node(.array(assignments))
    }
}
