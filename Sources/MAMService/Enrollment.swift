import MAMPolicy

/// One (app, account) pair as the service knows it.
public struct Enrollment: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// Enrolled and managed; `policy` is the fingerprint of the policy it last received.
        case enrolled(policy: String)
        /// Enrolled, and the policy that targeted the app for this account was withdrawn since:
        /// unmanaged, still checked in. (A first enrollment that finds no policy is `failed`.)
        case licensedNotTargeted
        /// Enrollment failed with this code; retried at `retryAt`.
        case failed(EnrollmentStatus, retryAt: Duration)
    }

    /// The app's bundle id, as installed.
    public var app: String
    /// The account as the app named it (a UPN or an object id).
    public var account: String
    public var state: State
    /// When the service checks in next (enrolled and not-targeted pairs).
    public var nextCheckIn: Duration
    /// A first policy asks the app to restart; set once it was asked.
    public var restartAsked: Bool

    public init(app: String, account: String, state: State, nextCheckIn: Duration, restartAsked: Bool = false) {
        self.app = app
        self.account = account
        self.state = state
        self.nextCheckIn = nextCheckIn
        self.restartAsked = restartAsked
    }

    public var isEnrolledAndManaged: Bool {
        if case .enrolled = state { return true }
        return false
    }
}

/// What the service tells an app: the enrollment delegate's three callbacks (enrollment, policy
/// request, unenrollment) with their status, and the restart and wipe delegates' requests.
public enum EnrollmentNotice: Sendable, Equatable {
    case enrollment(app: String, account: String, EnrollmentStatus)
    case policy(app: String, account: String, EnrollmentStatus)
    case unenrollment(app: String, account: String, EnrollmentStatus)
    /// The first policy arrived: the app is asked to restart (the restart delegate) [seed 001
    /// §Receive app protection policy].
    case restart(app: String, account: String)
    /// Wipe the account's data in the app (the wipe delegate); personal data stays.
    case wipe(app: String, account: String)
}

/// Enrollment, check-in and selective wipe for one device, as values (seed 000 §Enrollment,
/// FAQ; seed 002 §Exit criteria). Time is given by the caller, so a test passes 24 hours in a
/// microsecond; state is what the broker persists.
public struct EnrollmentService: Sendable {
    public private(set) var enrollments: [String: Enrollment] = [:]
    /// Wipes the admin issued that an app has not received yet, as the "app|account" keys of the
    /// enrollments they were issued against. A wipe targets enrollments that exist when it is
    /// issued (seed 000 FAQ: the admin's wipe deregisters and unenrolls the user from the app),
    /// never one made later: a key leaves this set when its enrollment ends, however it ends.
    public private(set) var pendingWipes: Set<String> = []
    /// "app|account" pairs whose account was signed out of the app (an unenrollment or a wipe):
    /// the app may not enroll it, nor have its key, until the user signs it in again (a launch
    /// with `--user`). Without this, a wiped app could enroll the account again by itself.
    public private(set) var signedOut: Set<String> = []
    /// The apps `tick` was given as running last time (nil: every app): which ran through the
    /// intervals since.
    private var runningAtLastTick: Set<String>?

    public init(enrollments: [Enrollment] = [], pendingWipes: Set<String> = [], signedOut: Set<String> = []) {
        for e in enrollments { self.enrollments[Self.key(e.app, e.account)] = e }
        // A state file written before wipes named their enrollment may hold "|account" (every
        // app): it meant the enrollments that existed then, which are these.
        for k in pendingWipes {
            if k.hasPrefix("|") {
                self.pendingWipes.formUnion(self.enrollments.keys.filter { $0.hasSuffix(k) })
            } else if self.enrollments[k] != nil {
                self.pendingWipes.insert(k)
            }
        }
        self.signedOut = signedOut
    }

    /// Whether the user signed `account` out of `app` (and has not signed it in again).
    public func isSignedOut(app: String, account: String) -> Bool { signedOut.contains(Self.key(app, account)) }

    /// The user signed `account` out of `app`: an unenrollment, a wipe.
    public mutating func signOut(app: String, account: String) { signedOut.insert(Self.key(app, account)) }

    /// The user signed `account` in to `app` again; returns whether that changed anything.
    @discardableResult
    public mutating func signIn(app: String, account: String) -> Bool { signedOut.remove(Self.key(app, account)) != nil }

    static func key(_ app: String, _ account: String) -> String { app.lowercased() + "|" + account.lowercased() }

    /// The fingerprint of the policy an (app, account) gets now; nil when none targets it.
    static func fingerprint(_ engine: PolicyEngine, app: String, account: Account) -> String? {
        engine.tenant.policy(app: app, account: account).map { "\($0.id)|\($0.settings)" }
    }

    /// The managed account enrolled in `app`, if any.
    public func enrolledAccount(in app: String) -> String? {
        enrollments.values.first { $0.app.lowercased() == app.lowercased() && $0.isEnrolledAndManaged }?.account
    }

    /// `registerAndEnrollAccountId:` for `app` with `accountName` (seed 000 §Enrollment).
    public mutating func registerAndEnroll(app: AppManifest, accountName: String, engine: PolicyEngine, now: Duration) -> [EnrollmentNotice] {
        let bundle = app.bundleID
        guard !accountName.isEmpty else { return [.enrollment(app: bundle, account: "", .nilAccount)] }
        // An extension cannot enroll [doc: headers, 223].
        guard app.extensionPoint == nil else { return [.enrollment(app: bundle, account: accountName, .unsupportedAPI)] }
        let account = engine.tenant.identity(named: accountName).account!
        // An account the admin does not allow must be removed, not enrolled [doc: SDK-API §status
        // codes, 209-211 "remove the account"; chosen: 211, the device's allowed accounts].
        guard engine.tenant.device.allows(account) else {
            return [.enrollment(app: bundle, account: accountName, .notDeviceAccount)]
        }
        let k = Self.key(bundle, accountName)
        if let existing = enrollments[k], existing.isEnrolledAndManaged || existing.state == .licensedNotTargeted {
            // A repeat is ignored [doc: headers]; the app hears that it is enrolled already.
            return [.enrollment(app: bundle, account: accountName, .alreadyEnrolled)]
        }
        // One managed account per app [doc: headers, SingleManagedAccountMode 227]. The refused
        // account keeps a row: its retries wait while the other user holds the app and begin
        // again once that user is unenrolled, on the same 24-hour interval (seed 000,
        // enrollment retries; `tick`). Asking again keeps the schedule.
        if let other = enrolledAccount(in: bundle), engine.tenant.identity(named: other).account != account,
           Self.fingerprint(engine, app: bundle, account: account) != nil {
            if case .failed(.singleManagedAccountMode, _)? = enrollments[k]?.state {} else {
                enrollments[k] = Enrollment(app: bundle, account: accountName,
                                            state: .failed(.singleManagedAccountMode, retryAt: now + MAMService.enrollmentRetry),
                                            nextCheckIn: now + MAMService.enrollmentRetry)
            }
            return [.enrollment(app: bundle, account: accountName, .singleManagedAccountMode)]
        }
        return attempt(bundle, accountName, account, engine, now)
    }

    /// One enrollment attempt: a first try, or a retry 24 hours after a failure.
    mutating func attempt(_ bundle: String, _ name: String, _ account: Account, _ engine: PolicyEngine, _ now: Duration) -> [EnrollmentNotice] {
        let k = Self.key(bundle, name)
        // An account the tenant does not know holds no MAM license.
        guard account.userIndex != nil else {
            enrollments[k] = Enrollment(app: bundle, account: name, state: .failed(.accountNotLicensed, retryAt: now + MAMService.enrollmentRetry),
                                        nextCheckIn: now + MAMService.enrollmentRetry)
            return [.enrollment(app: bundle, account: name, .accountNotLicensed)]
        }
        // Not targeted is a failed enrollment like any other: the app is not enrolled, so it is
        // retried in 24 hours and has no 8-hour check-ins (seed 000 FAQ: an app not yet enrolled
        // retries every 24 hours; an enrolled one checks its policy every 8). A policy the admin
        // adds meanwhile arrives with the retry, as an enrollment.
        guard let policy = Self.fingerprint(engine, app: bundle, account: account) else {
            enrollments[k] = Enrollment(app: bundle, account: name, state: .failed(.licensedNotTargeted, retryAt: now + MAMService.enrollmentRetry),
                                        nextCheckIn: now + MAMService.enrollmentRetry)
            return [.enrollment(app: bundle, account: name, .licensedNotTargeted)]
        }
        enrollments[k] = Enrollment(app: bundle, account: name, state: .enrolled(policy: policy), nextCheckIn: now + MAMService.checkInInterval,
                                    restartAsked: true)
        return [.enrollment(app: bundle, account: name, .newPoliciesReceived), .restart(app: bundle, account: name)]
    }

    /// `deRegisterAndUnenrollAccountId:withWipe:`.
    public mutating func deregister(app: String, accountName: String, wipe: Bool) -> [EnrollmentNotice] {
        guard enrollments.removeValue(forKey: Self.key(app, accountName)) != nil else {
            return [.unenrollment(app: app, account: accountName, .notEnrolledAccount)]
        }
        // The admin's wipe was for this enrollment; it has ended, and the wipe with it.
        pendingWipes.remove(Self.key(app, accountName))
        return (wipe ? [.wipe(app: app, account: accountName)] : []) + [.unenrollment(app: app, account: accountName, .unenrollmentSuccess)]
    }

    /// A selective wipe from the admin side, of `account` in `app` (nil: every app): it targets
    /// the enrollments of the account that exist now, in any state (an app that registered the
    /// account holds a row even when its enrollment failed), and is delivered at each one's next
    /// check-in, or at once through `deliverWipes` when the app is running (`mamlaunch wipe`).
    /// An account with no enrollment has nothing to wipe: nothing is kept for a later one
    /// (seed 000 FAQ: the wipe goes to the app the user is enrolled in, and unenrolls the user).
    ///
    /// - Returns: the apps the wipe targets, sorted; empty when there was nothing to wipe.
    @discardableResult
    public mutating func issueWipe(account: String, app: String?) -> [String] {
        let targets = enrollments.filter { k, e in
            e.account.lowercased() == account.lowercased() && (app == nil || e.app.lowercased() == app!.lowercased())
        }
        pendingWipes.formUnion(targets.keys)
        return targets.values.map(\.app).sorted()
    }

    /// The apps holding an enrollment of `account` (in any state), which a wipe would target.
    public func wipeTargets(account: String, app: String?) -> [String] {
        enrollments.values.filter {
            $0.account.lowercased() == account.lowercased() && (app == nil || $0.app.lowercased() == app!.lowercased())
        }.map(\.app).sorted()
    }

    /// The wipes waiting for `app`, delivered now (it has just started, or the admin asked
    /// while it runs).
    public mutating func deliverWipes(app: String, engine: PolicyEngine, now: Duration) -> [EnrollmentNotice] {
        var out: [EnrollmentNotice] = []
        for (k, e) in enrollments.sorted(by: { $0.key < $1.key }) where e.app.lowercased() == app.lowercased() && pendingWipes.contains(k) {
            out += checkIn(k, engine: engine, now: now)
        }
        return out
    }

    /// Whether an account is still enrolled in any app (its key must outlive a one-app wipe).
    public func isEnrolledAnywhere(_ account: String) -> Bool {
        enrollments.values.contains { $0.account.lowercased() == account.lowercased() }
    }

    /// What time brings: failed enrollments retried every 24 hours, policy checked in every 8
    /// (seed 000 FAQ). `running` limits it to the apps that are running. Each 8-hour interval
    /// that elapsed while the app ran is a check-in of its own, at the time it was due (a clock
    /// moved 24 hours gives three); an app that was not running at the last tick (stopped, or
    /// the broker just started) is checked in once, now, and its schedule starts again from
    /// there: a stopped SDK does not check in.
    public mutating func tick(engine: PolicyEngine, now: Duration, running: Set<String>? = nil) -> [EnrollmentNotice] {
        var out: [EnrollmentNotice] = []
        let before = runningAtLastTick
        runningAtLastTick = running
        for (k, e) in enrollments.sorted(by: { $0.key < $1.key }) where running?.contains(e.app.lowercased()) ?? true {
            switch e.state {
            case let .failed(status, retryAt) where now >= retryAt:
                // While another user holds the app no retry is made; the 24-hour schedule runs on,
                // so the first retry after that user leaves falls on it (seed 000).
                if status == .singleManagedAccountMode, let holder = enrolledAccount(in: e.app),
                   holder.lowercased() != e.account.lowercased() {
                    var next = retryAt
                    while next <= now { next += MAMService.enrollmentRetry }
                    enrollments[k]?.state = .failed(status, retryAt: next)
                    enrollments[k]?.nextCheckIn = next
                    break
                }
                out += attempt(e.app, e.account, engine.tenant.identity(named: e.account).account!, engine, now)
            case .enrolled, .licensedNotTargeted:
                guard now >= e.nextCheckIn else { break }
                guard running == nil || before?.contains(e.app.lowercased()) == true else {
                    out += checkIn(k, engine: engine, now: now)
                    break
                }
                // A wipe ends the enrollment, and with it the check-ins.
                while let due = enrollments[k]?.nextCheckIn, now >= due {
                    out += checkIn(k, engine: engine, now: due)
                }
            default:
                break
            }
        }
        return out
    }

    /// Checks in every enrolled pair of the running apps at once (`mamlaunch sync`, a tenant reload).
    public mutating func sync(engine: PolicyEngine, now: Duration, running: Set<String>? = nil) -> [EnrollmentNotice] {
        var out: [EnrollmentNotice] = []
        for (k, e) in enrollments.sorted(by: { $0.key < $1.key }) where running?.contains(e.app.lowercased()) ?? true {
            if case .failed = e.state { continue }
            out += checkIn(k, engine: engine, now: now)
        }
        return out
    }

    /// One check-in: a pending wipe first; else the policy as it is now, told to the app.
    mutating func checkIn(_ k: String, engine: PolicyEngine, now: Duration) -> [EnrollmentNotice] {
        guard var e = enrollments[k] else { return [] }
        if pendingWipes.remove(k) != nil {
            enrollments[k] = nil
            // A wipe ends the enrollment: it is told on the unenrollment path (SDK-API: the
            // enrollment delegate's unenrollRequest), with status 102.
            return [.wipe(app: e.app, account: e.account), .unenrollment(app: e.app, account: e.account, .wipeReceived)]
        }
        e.nextCheckIn = now + MAMService.checkInInterval
        let account = engine.tenant.identity(named: e.account).account!
        let current = account.userIndex == nil ? nil : Self.fingerprint(engine, app: e.app, account: account)
        var out: [EnrollmentNotice] = []
        switch (e.state, current) {
        case let (.enrolled(old), new?):
            out.append(.policy(app: e.app, account: e.account, old == new ? .policiesHaveNotChanged : .newPoliciesReceived))
            e.state = .enrolled(policy: new)
        case (.enrolled, nil):
            out.append(.policy(app: e.app, account: e.account, .noPolicyReceived))
            e.state = .licensedNotTargeted
        case let (.licensedNotTargeted, new?):
            out.append(.policy(app: e.app, account: e.account, .newPoliciesReceived))
            e.state = .enrolled(policy: new)
            if !e.restartAsked {
                e.restartAsked = true
                out.append(.restart(app: e.app, account: e.account))
            }
        case (.licensedNotTargeted, nil):
            out.append(.policy(app: e.app, account: e.account, .noPolicyReceived))
        case (.failed, _):
            break
        }
        enrollments[k] = e
        return out
    }
}
