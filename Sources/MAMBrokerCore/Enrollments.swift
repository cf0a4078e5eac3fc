import MAMPolicy
import MAMService
import MAMWire

// Enrollment through the emulated MAM service: an SDK app enrolls and unenrolls its accounts;
// the service's answers reach the app as the enrollment delegate's callbacks, its restart and
// wipe requests as messages; time (24-hour retries, 8-hour check-ins) comes with `tick`.
extension BrokerCore {
    mutating func enroll(_ id: SessionID, _ frameID: UInt32, account: String, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard sessions[id]!.manifest.integratesSDK else { return .failure(WireError(.notAllowed, "an app without the SDK has no enrollment")) }
        if let e = NameRules.check(account, field: "account") { return .failure(WireError(.invalidName, e.detail)) }
        // Only an account the user signed in to this instance: an app naming an account is no
        // sign-in (a hostile app could otherwise enroll, and take the key of, anyone).
        guard let acct = signedInAccount(account, for: id) else {
            return .failure(notSignedIn(id, frameID, channel: "enrollment", account: account, &out))
        }
        let notices = service.registerAndEnroll(app: sessions[id]!.manifest, accountName: Self.canonicalName(acct), engine: engine, now: clock.now())
        tell(notices, requester: (id, frameID), &out)
        // Managed now, perhaps: the account's policy's launch checks run on this device.
        checkLaunch(id, &out)
        return .success(())
    }

    /// `loginAndEnrollAccount:` with no account: the device's MDM user when the device is
    /// MDM-enrolled, else the app is asked to sign a user in (203).
    mutating func loginAndEnroll(_ id: SessionID, _ frameID: UInt32, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard sessions[id]!.manifest.integratesSDK else { return .failure(WireError(.notAllowed, "an app without the SDK has no enrollment")) }
        let device = engine.tenant.device
        // (An MDM user the user signed out of this app, by an unenrollment or a wipe, must be
        // signed in again: the app is asked to sign a user in.)
        guard device.mdmEnrolled, let user = device.mdmUser,
              !service.isSignedOut(app: sessions[id]!.manifest.bundleID, account: Self.canonicalName(user)) else {
            tell([.enrollment(app: sessions[id]!.bundleID, account: "", .authRequired)], requester: (id, frameID), &out)
            return .success(())
        }
        // The MDM-enrolled device's user signed in when the device was enrolled: the user's act.
        if !sessions[id]!.signedIn.contains(user) { sessions[id]!.signedIn.append(user) }
        return enroll(id, frameID, account: user.upn ?? user.name, &out)
    }

    mutating func unenroll(_ id: SessionID, _ frameID: UInt32, account: String, wipe: Bool, _ out: inout [BrokerEffect]) -> Result<Void, WireError> {
        guard sessions[id]!.manifest.integratesSDK else { return .failure(WireError(.notAllowed, "an app without the SDK has no enrollment")) }
        if let e = NameRules.check(account, field: "account") { return .failure(WireError(.invalidName, e.detail)) }
        // The canonical name, so that an object id and a UPN are the one row they name; only
        // this app's row (another app's enrollment of the account is never touched).
        let notices = service.deregister(app: sessions[id]!.bundleID, accountName: Self.canonicalName(account, in: engine.tenant), wipe: wipe)
        tell(notices, requester: (id, frameID), &out)
        return .success(())
    }

    /// The settings table's launch keys, at `hello` [seed 001 §Configure settings]:
    /// `AutoEnrollOnLaunch` enrolls a managed identity the device already has (the launcher's
    /// signed-in user, else the device's MDM user) and fails silently without one;
    /// `MAMPolicyRequired` blocks the app from starting without a policy; `MAMPolicyWarnAbsent`
    /// warns (a notice with 103) and lets it run. False: the app may not start.
    mutating func launchKeys(_ id: SessionID, _ out: inout [BrokerEffect]) -> Bool {
        let manifest = sessions[id]!.manifest
        guard manifest.integratesSDK else { return true }
        let bundle = manifest.bundleID
        if manifest.sdkFlag("AutoEnrollOnLaunch"), service.enrolledAccount(in: bundle) == nil {
            let device = engine.tenant.device
            let identity = sessions[id]!.peer.account.flatMap { engine.tenant.identity(named: $0).account }.flatMap { $0.userIndex == nil ? nil : $0 }
                ?? (device.mdmEnrolled ? device.mdmUser.flatMap { service.isSignedOut(app: bundle, account: Self.canonicalName($0)) ? nil : $0 } : nil)
            if let identity {
                // The launcher's user is signed in already; the MDM user signed in with the device.
                if !sessions[id]!.signedIn.contains(identity) { sessions[id]!.signedIn.append(identity) }
                var notices = service.registerAndEnroll(app: manifest, accountName: identity.upn ?? identity.name, engine: engine, now: clock.now())
                // Enrolled before the app finished launching, an app that requires a policy does
                // not handle a restart after enrolling [seed 000 §Let Intune handle authentication
                // and enrollment at launch]: none is asked.
                if manifest.sdkFlag("MAMPolicyRequired") { notices.removeAll { if case .restart = $0 { return true } else { return false } } }
                tell(notices, requester: nil, &out)
            }
        }
        let managed = party(id).isManaged
        if manifest.sdkFlag("MAMPolicyRequired") && !managed {
            return false
        }
        if manifest.sdkFlag("MAMPolicyWarnAbsent") && !managed {
            out.append(.send(id, Frame(id: brokerFrameID(), .enrollmentNotice(kind: 1, account: "", status: UInt16(EnrollmentStatus.noPolicyReceived.rawValue)))))
        }
        return true
    }

    /// What the service's clock brought, for the apps that are running.
    mutating func enrollmentTick(_ out: inout [BrokerEffect]) {
        // Even with none running: the service learns which apps stopped (their missed intervals
        // are one check-in when they start again).
        let running = serviceApps
        tell(service.tick(engine: engine, now: clock.now(), running: running), requester: nil, &out)
    }

    /// Delivers the service's notices to the app's running instances, audits each answer,
    /// updates who is enrolled and signed in, and persists the service's state.
    mutating func tell(_ notices: [EnrollmentNotice], requester: (SessionID, UInt32)?, _ out: inout [BrokerEffect]) {
        guard !notices.isEmpty else { return }
        var answered = false
        // The state is written before anything is said, so an app never hears of an enrollment
        // a crash could take back.
        var told: [BrokerEffect] = []
        for notice in notices {
            let (app, account, message, status): (String, String, Message, EnrollmentStatus?) = {
                switch notice {
                case let .enrollment(app, account, s): return (app, account, .enrollmentNotice(kind: 0, account: account, status: UInt16(s.rawValue)), s)
                case let .policy(app, account, s): return (app, account, .enrollmentNotice(kind: 1, account: account, status: UInt16(s.rawValue)), s)
                case let .unenrollment(app, account, s): return (app, account, .enrollmentNotice(kind: 2, account: account, status: UInt16(s.rawValue)), s)
                case let .restart(app, account): return (app, account, .restartRequest(account: account), nil)
                case let .wipe(app, account): return (app, account, .wipeRequest(account: account), nil)
                }
            }()
            let instances = noticeInstances(of: app, account: account, requester: requester?.0)
            if let status {
                let source = instances.first.map { auditParty($0) } ?? AuditEntry.Party(app: app, identity: account, managed: false)
                out.append(.audit(AuditEntry(session: requester?.0 ?? SessionID(0), request: requester?.1 ?? 0, channel: "enrollment", source: source,
                                             target: nil, dataType: nil, size: nil, outcome: "\(status)", rule: "7", tag: "doc",
                                             detail: "\(account): \(status.rawValue)", revision: revision)))
            }
            for s in instances {
                // The requester's first answer carries its request's id; everything else is the broker's.
                let fid: UInt32
                if let (rid, rframe) = requester, rid == s, !answered { fid = rframe; answered = true } else { fid = brokerFrameID() }
                told.append(.send(s, Frame(id: fid, message)))
                if case .restart = notice { sessions[s]!.restartAsked = true }
            }
            refreshEnrollment(app: app, account: account, status: status)
            // A wipe or an unenrollment signs the account out of the app: it is enrolled again,
            // and has its key, only once the user signs it in again.
            switch notice {
            case .wipe, .unenrollment(_, _, .unenrollmentSuccess), .unenrollment(_, _, .wipeReceived):
                service.signOut(app: app, account: Self.canonicalName(account, in: engine.tenant))
            default:
                break
            }
            // A wiped account's key goes once no app holds the account any more.
            if case .wipe = notice, !service.isEnrolledAnywhere(account), let acct = engine.tenant.identity(named: account).account {
                told.insert(.persist(.destroyKey(Self.keyID(acct))), at: 0)
            }
        }
        out.append(persistEnrollments)
        out += told
    }

    /// The instances of `app` a notice about `account` is for: those the account is signed in
    /// to, and the one whose request it answers. Another instance, run for another user, hears
    /// nothing of the account (its enrollment, policy, compliance).
    func noticeInstances(of app: String, account: String, requester: SessionID?) -> [SessionID] {
        // By canonical name: an account signed in before the tenant knew it is the one it names now.
        let name = Self.canonicalName(account, in: engine.tenant).lowercased()
        return serviceInstances(of: app).filter { id in
            id == requester || (!name.isEmpty && sessions[id]!.signedIn.contains { Self.canonicalName($0).lowercased() == name })
        }
    }

    /// After a notice: the app's instances act under the account the service enrolled (a
    /// managed party), have it signed in, or have lost it.
    mutating func refreshEnrollment(app: String, account: String, status: EnrollmentStatus?) {
        guard let acct = engine.tenant.identity(named: account).account else { return }
        let managed = service.enrolledAccount(in: app).flatMap { engine.tenant.identity(named: $0).account }
        for (id, s) in sessions where s.manifest.integratesSDK && s.bundleID.lowercased() == app.lowercased() {
            switch status {
            case .newPoliciesReceived?, .policiesHaveNotChanged?, .alreadyEnrolled?, .licensedNotTargeted?, .noPolicyReceived?:
                guard let managed else { break }
                // One managed account per app, and an enrollment signs nobody in: an instance
                // the user did not sign the app's account in to (another instance, run for
                // someone else) has no enrolled account of its own any more, and is not given
                // that one either.
                guard s.signedIn.contains(managed) else {
                    if s.enrolled != nil { sessions[id]!.enrolled = nil }
                    break
                }
                guard s.signedIn.contains(acct) else { break }
                sessions[id]!.enrolled = managed
                if status == .newPoliciesReceived, s.enrolled != managed {
                    sessions[id]!.identity = .account(managed)
                    sessions[id]!.view = nil
                }
            case .unenrollmentSuccess?, .wipeReceived?:
                sessions[id]!.signedIn.removeAll { $0 == acct }
                // A view that showed the account shows it no more: the app sets its view again.
                if s.view?.contains(.account(acct)) == true { sessions[id]!.view = nil }
                if s.enrolled == acct {
                    sessions[id]!.enrolled = nil
                    sessions[id]!.identity = .personal
                }
            case .notDeviceAccount?:
                // Refused by the admin's allowed accounts (to be removed, not retried): an
                // instance that took the account as its enrollment at launch (its `--user`) has
                // none; the app hears the refusal and its policy says the same.
                if s.enrolled == acct && managed != acct { sessions[id]!.enrolled = nil }
            default:
                break
            }
            parties[id] = nil
        }
    }
}
