import FoundationEssentials

/// This boot of the machine, as the kernel names it.
///
/// Bytes written by a process that was killed are still in the page cache and reach
/// the disk; after a power cut or crash of the machine, bytes past the last fsync
/// may be lost or garbage. Comparing the boot id stored with the queue to this one
/// tells the two apart, so a part file is cut back to its checkpoint only when it
/// has to be.
package enum BootID {
    /// Nil when the kernel does not say (no /proc): then nothing is taken for a reboot.
    package static let current: String? = {
        // Unreadable means unknown, which `rebooted` treats as no reboot: never a reason to cut parts.
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        let trimmed = text.trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }()

    /// Whether the machine restarted since `stored` was saved: only when both are known and
    /// differ (a failed read is not a reboot, which would cut part files back).
    static func rebooted(since stored: String?) -> Bool {
        guard let stored, let current else { return false }
        return stored != current
    }
}
