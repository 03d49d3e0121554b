import Foundation
import Testing
@testable import MonsoonCLI

/// `--exec`'s splitting into words: a shell's quoting, and nothing else of a shell.
@Suite struct HookCommandTests {
    @Test func wordsAreSplitAsAShellQuotesThem() throws {
        #expect(try HookCommand("cp {} /backup/").words == ["cp", "{}", "/backup/"])
        #expect(try HookCommand("  tool\t'a b'  \"c d\" e\\ f ''  ").words == ["tool", "a b", "c d", "e f", ""])
        #expect(try HookCommand(#"x "say \"hi\" \\ \n" 'it''s'"#).words == ["x", #"say "hi" \ \n"#, "its"])
        #expect(try HookCommand(#"a\'b"#).words == ["a'b"])
        // No expansion, globbing, redirection or chaining: they are characters.
        #expect(try HookCommand("echo $HOME *.mp3 > out; rm -rf ~ | x && y").words == ["echo", "$HOME", "*.mp3", ">", "out;", "rm", "-rf", "~", "|", "x", "&&", "y"])
        #expect(try HookCommand("sh -c 'echo \"$1\"' sh {}").arguments(file: "/a/b c.mp3") == ["sh", "-c", "echo \"$1\"", "sh", "/a/b c.mp3"])
        #expect(try HookCommand("mv {} {}.done").arguments(file: "/x") == ["mv", "/x", "/x.done"])
        // A command written with Windows line ends: "\r\n" (one Character in Swift) and "\r" separate words too.
        #expect(try HookCommand("cp {}\r\n/backup/\r\n").words == ["cp", "{}", "/backup/"])
        #expect(try HookCommand("cp\r{}").words == ["cp", "{}"])
    }

    @Test func badCommandsAreRefusedWithWhatToDo() {
        for (text, reason) in [("echo 'open", "a ' is not closed"), ("echo \"open", "a \" is not closed"), ("echo \\", "ends with a \\"),
                               ("", "names no program"), ("   ", "names no program"), ("'' x", "names no program")] {
            #expect(throws: HookError.self) { try HookCommand(text) }
            do { _ = try HookCommand(text) } catch { #expect(error.message.contains(reason), "\(text): \(error.message)") }
        }
    }

    @Test func theProgramIsFoundInPATHOrByItsPath() throws {
        let command = try HookCommand("sh -c true")
        #expect(try command.program(for: "/f.mp3", searchPath: "/nonexistent:/bin:/usr/bin", directory: "/") == "/bin/sh")
        do {
            _ = try HookCommand("no-such-program-here {}").program(for: "/f.mp3", searchPath: "/bin:/usr/bin", directory: "/")
            Issue.record("found a program that is not there")
        } catch {
            #expect(error.code == .notFound && error.message.contains("'no-such-program-here' is not in any folder of PATH; install it, or give its full path"))
        }
        do {
            _ = try HookCommand("./missing.sh").program(for: "/f.mp3", searchPath: nil, directory: "/tmp")
            Issue.record("found a program that is not there")
        } catch {
            #expect(error.message.contains("/tmp/missing.sh does not exist"))
        }
        // `{}` as the program is the file itself, looked up as its path.
        #expect(try HookCommand("{} --flag").program(for: "/bin/sh", searchPath: nil, directory: "/") == "/bin/sh")
    }
}
