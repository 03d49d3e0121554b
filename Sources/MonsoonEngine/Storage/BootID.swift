import Foundation

/// This boot of the machine, as the kernel names it.
///
/// Bytes written by a process that was killed are still in the page cache and reach
/// the disk; after a power cut or crash of the machine, bytes past the last fsync
/// may be lost or garbage. Comparing the boot id stored with the queue to this one
/// tells the two apart, so a part file is cut back to its checkpoint only when it
/// has to be.
enum BootID {
    static let current: String = {
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "unknown-\(UUID().uuidString)" : trimmed
    }()
}
