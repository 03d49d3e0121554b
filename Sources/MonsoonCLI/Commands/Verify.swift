import Foundation
import MonsoonPodcasts

/// `monsoon verify [DIR]`: re-hash an archive against its manifests.
struct Verify: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check an archive's files against their manifests: missing, changed and extra files.",
        discussion: """
            DIR is an archive root (every podcast folder in it is checked) or one podcast's folder; \
            default: the setting download-root. Exit status: 0 when every file is as listed, 1 otherwise \
            (also when DIR is not a folder).

              monsoon verify ~/Archive
            """)
    @OptionGroup var global: GlobalOptions
    @Flag("--json", help: "Print JSON: folders, checked, missing, changed, extra, links.") var json = false
    @Argument(help: "The archive root or a podcast's folder.", valueName: "dir") var directory: String?
    init() {}

    func run(_ context: CommandContext) async throws -> Int32 {
        let folder = try directory.map(context.absolutePath) ?? EpisodeSession.open(global, context: context).settingsRoot()
        // An archive that is not there is not an empty one (a disk not mounted, a typo).
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) else {
            throw CLIError(message: "no such folder: \(folder)" + (directory == nil ? " (the setting download-root); give the archive's folder: monsoon verify DIR" : ""))
        }
        guard isFolder.boolValue else { throw CLIError(message: "not a folder: \(folder); give the archive's folder or a podcast's") }
        let report: ArchiveVerifier.Report
        do {
            report = try ArchiveVerifier.verify(folder)
        } catch let error as EpisodeFileError {
            throw CLIError(message: error.message)
        }
        if json {
            func list(_ paths: [String]) -> String { "[" + paths.map(JSONText.string).joined(separator: ", ") + "]" }
            context.output.line("{\"folders\": \(list(report.folders)), \"checked\": \(report.checked), \"missing\": \(list(report.missing)), "
                + "\"changed\": \(list(report.changed)), \"extra\": \(list(report.extra)), \"links\": \(list(report.links))}")
        } else {
            for path in report.missing { context.output.line("missing \(path)") }
            for path in report.changed { context.output.line("changed \(path)") }
            for path in report.extra { context.output.line("extra   \(path)") }
            for path in report.links { context.output.line("link    \(path)") }
            if !global.quiet || !report.isClean {
                var verdict = report.isClean ? "all as listed" : "\(report.missing.count) missing, \(report.changed.count) changed, \(report.extra.count) extra"
                if !report.links.isEmpty { verdict += ", \(report.links.count) symbolic link\(report.links.count == 1 ? "" : "s") (not followed)" }
                context.errors.line("monsoon: verified \(report.checked) file\(report.checked == 1 ? "" : "s") in \(report.folders.count) folder\(report.folders.count == 1 ? "" : "s"): \(verdict)")
            }
        }
        return report.isClean ? ExitStatus.success : ExitStatus.failure
    }
}
