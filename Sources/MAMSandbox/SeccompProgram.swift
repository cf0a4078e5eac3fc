import CMAMSandbox
import CSeccomp
import Foundation
import Glibc
import Synchronization

/// The compiled seccomp filter: classic BPF built by libseccomp in the launcher, applied by the
/// child between fork and exec.
public struct SeccompProgram: Sendable {
    public let bytes: [UInt8]
    /// Syscall numbers the filter sends to the supervisor, by name.
    public let numbers: [Int32: String]

    public var instructionCount: Int { bytes.count / 8 }

    public struct BuildError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The filter never changes within a process: build it once.
    public static func shared() throws -> SeccompProgram {
        try cache.withLock { cached in
            if let cached { return cached }
            let built = try build()
            cached = built
            return built
        }
    }

    private static let cache = LockedValue<SeccompProgram?>(nil)

    public static func build() throws -> SeccompProgram {
        guard let ctx = seccomp_init(SCMP_ACT_ALLOW) else { throw BuildError(description: "libseccomp could not start a filter") }
        defer { seccomp_release(ctx) }
        // A binary tree over syscall numbers: every system call the app makes runs the filter,
        // and a linear list costs the allowed ones a comparison per listed call.
        _ = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)
        var numbers: [Int32: String] = [:]
        let notify = UInt32(0x7fc0_0000)  // SCMP_ACT_NOTIFY
        func add(_ name: String, _ args: [scmp_arg_cmp] = []) throws {
            let nr = seccomp_syscall_resolve_name(name)
            guard nr != __NR_SCMP_ERROR else { return }  // not on this architecture
            var args = args
            let rc = args.withUnsafeMutableBufferPointer { seccomp_rule_add_array(ctx, notify, nr, UInt32($0.count), $0.baseAddress) }
            guard rc == 0 else { throw BuildError(description: "libseccomp refused a rule for \(name): \(String(cString: strerror(-rc)))") }
            numbers[nr] = name
        }
        for (name, _) in SyscallPolicy.denied { try add(name) }
        for name in SyscallPolicy.fatal { try add(name) }
        for name in SyscallPolicy.exec { try add(name) }
        for name in SyscallPolicy.confined { try add(name) }
        for (_, command) in SyscallPolicy.lockCommands + SyscallPolicy.refusedFcntl {
            try add("fcntl", [scmp_arg_cmp(arg: 1, op: SCMP_CMP_EQ, datum_a: UInt64(command), datum_b: 0)])
        }
        // Opens that may write, recognised by their flags. Read-only opens are left to Landlock:
        // sending each to the supervisor costs a round trip, and the loader alone makes eighty.
        func masked(_ index: UInt32, _ mask: Int32, _ value: Int32) -> scmp_arg_cmp {
            scmp_arg_cmp(arg: index, op: SCMP_CMP_MASKED_EQ, datum_a: UInt64(mask), datum_b: UInt64(value))
        }
        for (name, index) in [("openat", UInt32(2)), ("open", UInt32(1))] {
            try add(name, [masked(index, O_ACCMODE, O_WRONLY)])
            try add(name, [masked(index, O_ACCMODE, O_RDWR)])
            try add(name, [masked(index, O_CREAT, O_CREAT)])
            try add(name, [masked(index, O_TRUNC, O_TRUNC)])
        }
        try add("creat")
        try add("openat2")
        for name in SyscallPolicy.signals { try add(name) }
        for (_, option) in SyscallPolicy.refusedPrctl {
            try add("prctl", [scmp_arg_cmp(arg: 0, op: SCMP_CMP_EQ, datum_a: UInt64(option), datum_b: 0)])
        }
        // One rule per flag: a masked comparison can ask "this bit set", not "any of these bits".
        for (_, flag) in SyscallPolicy.namespaceFlags { try add("clone", [masked(0, flag, flag)]) }
        let clone3 = seccomp_syscall_resolve_name("clone3")
        if clone3 != __NR_SCMP_ERROR {
            let rc = seccomp_rule_add_array(ctx, 0x0005_0000 | UInt32(ENOSYS), clone3, 0, nil)  // SCMP_ACT_ERRNO
            guard rc == 0 else { throw BuildError(description: "libseccomp refused the clone3 rule: \(String(cString: strerror(-rc)))") }
        }
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        let rc = mam_seccomp_export(UnsafeMutableRawPointer(ctx), &buffer, &length)
        guard rc == 0, let buffer else { throw BuildError(description: "libseccomp could not export the filter: \(String(cString: strerror(-rc)))") }
        defer { free(buffer) }
        return SeccompProgram(bytes: Array(UnsafeRawBufferPointer(start: buffer, count: length)), numbers: numbers)
    }

    /// The name of a syscall number, for reports.
    public static func name(of nr: Int32) -> String {
        guard let c = seccomp_syscall_resolve_num_arch(UInt32(SCMP_ARCH_NATIVE), nr) else { return "syscall \(nr)" }
        defer { free(c) }
        return String(cString: c)
    }
}

/// A value behind the standard library's `Mutex`, in a class so that statics can share it.
final class LockedValue<Value>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: sending Value) { mutex = Mutex(value) }
    func withLock<R, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> sending R {
        try mutex.withLock(body)
    }
}
