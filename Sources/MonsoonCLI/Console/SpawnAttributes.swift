import CLibc
import FoundationEssentials
import Glibc

/// The `posix_spawn` attributes of every program Monsoon starts (mpv, `--exec`'s hooks): an
/// empty signal mask and default actions for the signals Monsoon handles or ignores (a child
/// inherits both from the spawning thread otherwise, and a blocked SIGTERM would make it
/// unkillable), and a process group of its own, so a signal to the group reaches what the
/// program starts too and a Ctrl-C typed at the terminal reaches it only through Monsoon.
struct SpawnAttributes: ~Copyable {
    /// For `posix_spawn`; owned here (a pointer, so `deinit` can destroy it).
    let raw = UnsafeMutablePointer<posix_spawnattr_t>.allocate(capacity: 1)

    enum Detachment {
        /// A process group of its own, on Monsoon's terminal (mpv: it reads no keys, but may draw).
        case processGroup
        /// A session of its own: no controlling terminal at all, so a hook that reads one (ssh
        /// asking for a password) fails at once instead of being stopped by SIGTTIN for ever.
        case session
    }

    /// glibc's `POSIX_SPAWN_SETSID` (2.26 and later; Swift's Glibc leaves it out, CLibc has it).
    private static let setSession = Int32(monsoon_spawn_setsid_flag())

    /// - Throws: the `errno`-style code of the step that failed (a spawn without them is not safe).
    init(_ detachment: Detachment) throws(SpawnFailure) {
        raw.initialize(to: posix_spawnattr_t())
        try Self.check(posix_spawnattr_init(raw))
        var mask = sigset_t()
        sigemptyset(&mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGPIPE, SIGQUIT, SIGHUP, SIGCHLD] { sigaddset(&defaults, number) }
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        switch detachment {
        case .processGroup:
            try Self.check(posix_spawnattr_setpgroup(raw, 0))
            flags |= POSIX_SPAWN_SETPGROUP
        case .session:
            flags |= Self.setSession   // a new session is a new process group too, led by the child
        }
        try Self.check(posix_spawnattr_setsigmask(raw, &mask))
        try Self.check(posix_spawnattr_setsigdefault(raw, &defaults))
        try Self.check(posix_spawnattr_setflags(raw, Int16(flags)))
    }

    deinit {
        posix_spawnattr_destroy(raw)   // frees nothing in glibc; its answer says nothing to act on
        raw.deallocate()
    }

    private static func check(_ result: Int32) throws(SpawnFailure) {
        if result != 0 { throw SpawnFailure(code: result) }
    }
}

/// A `posix_spawn` step failed, with its error number.
struct SpawnFailure: Error {
    var code: Int32
    var reason: String { String(cString: strerror(code)) }
}
