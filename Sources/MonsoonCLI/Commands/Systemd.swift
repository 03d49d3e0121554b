import FoundationEssentials

struct Systemd: RunnableCommand {
    static let configuration = CommandConfiguration(
        commandName: "systemd",
        abstract: "Print systemd user units: a timer that runs 'monsoon sync', and a service for 'monsoon download'.",
        discussion: """
            The output is a shell script that writes the units and enables the timer; read it, then run it:

              monsoon systemd > install-monsoon-units.sh && sh install-monsoon-units.sh
              monsoon systemd --every 30min | sh
            """)
    @OptionGroup var global: GlobalOptions
    @Option("--every", help: "How often the timer runs sync (systemd time span, like 1h or 30min).", valueName: "span") var every: String = "1h"
    init() {}

    mutating func validate() throws {
        guard every.wholeMatch(of: #/[0-9]+ ?(s|sec|m|min|h|hr|d|day|w|week)s?/#) != nil else {
            throw ValidationError("'\(every)' is not a time span like 30min, 1h or 1d")
        }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let home = try Home(option: global.home, context: context)
        let binary = Self.binaryPath()
        guard !home.path.contains(where: \.isNewline), !binary.contains(where: \.isNewline) else {
            throw CLIError(message: "the Monsoon home or the program's path has a line break; systemd units cannot name it")
        }
        let environment = "Environment=\(Self.quoted("MONSOON_HOME=" + home.path))"
        let program = Self.quoted(binary)
        // As systemd.timer(5) and systemd.special(7) have it: a user manager has no
        // network-online.target to order after (sync retries a feed it cannot reach, and the
        // timer's first run waits 5 minutes), and Persistent= applies to OnCalendar= only, so a
        // timer that repeats from its last run (OnUnitActiveSec=) goes without it: after a boot
        // or a login, OnStartupSec= runs sync again, which catches up on what was missed.
        let sync = """
            [Unit]
            Description=Monsoon: refresh podcasts, queue new episodes and download the queue

            [Service]
            Type=oneshot
            \(environment)
            ExecStart=\(program) sync --quiet
            """
        let timer = """
            [Unit]
            Description=Run monsoon sync every \(every)

            [Timer]
            OnStartupSec=5min
            OnUnitActiveSec=\(every)
            RandomizedDelaySec=2min

            [Install]
            WantedBy=timers.target
            """
        let download = """
            [Unit]
            Description=Monsoon: download the queue (goes on after the terminal closes)

            [Service]
            Type=simple
            \(environment)
            ExecStart=\(program) download --quiet
            Restart=on-failure
            RestartSec=30

            [Install]
            WantedBy=default.target
            """
        context.output.write("""
            #!/bin/sh
            # Monsoon's systemd user units. This script writes them to ~/.config/systemd/user and
            # enables the sync timer. Afterwards:
            #   systemctl --user start monsoon-download.service   # download the queue in the background
            #   systemctl --user list-timers monsoon-sync.timer    # when sync runs next
            #   journalctl --user -u monsoon-sync.service          # what it did
            #   loginctl enable-linger "$USER"                     # keep them running after you log out
            set -e
            units="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
            mkdir -p "$units"
            cat > "$units/monsoon-sync.service" <<'UNIT'
            \(sync)
            UNIT
            cat > "$units/monsoon-sync.timer" <<'UNIT'
            \(timer)
            UNIT
            cat > "$units/monsoon-download.service" <<'UNIT'
            \(download)
            UNIT
            systemctl --user daemon-reload
            systemctl --user enable --now monsoon-sync.timer

            """)
        return ExitStatus.success
    }

    /// A word quoted for a unit file: inside double quotes, `\\` and `"` escaped, and `%`
    /// doubled (systemd's specifiers).
    static func quoted(_ text: String) -> String {
        "\"" + text.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("%", with: "%%") + "\""
    }

    /// This program's path when it is the `monsoon` binary, else `monsoon` (found on PATH by systemd).
    static func binaryPath() -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""   // no /proc: PATH lookup
        return path.fileName == "monsoon" ? path : "monsoon"
    }
}
