import Foundation
import MonsoonBasics
import Testing

/// Paths that have tripped path code before: none, the root alone or doubled, slashes at the end or
/// repeated inside, dots and `..`, hidden files, names ending in a dot, a tilde, names beyond ASCII.
private let paths = [
    "", "/", "//", "///", "a", "a/", "ab", "/a", "/a/", "/a//", "a/b", "/a/b", "/a/b/", "/x//y/z", "x//y", "//a",
    ".", "..", "/.", "/..", "./a", "../a", "/a/./b", "/a/../b", "/../a", "a/../b", "a/..", "a/.", "/a/b/../../..", "/a/b/..//c/./",
    ".x", "/d/.x", "a.", "a.b.", "..x", "x..", ".a.b", "/a/.b", "b.mp3", "/d/b.tar.gz", "/d.e/f", "a/b.c/", "a.b//", "a .b",
    "é/ü.ñ", "é.ü", "/日本/語.txt", "~", "~/x", "~/.x.y",
]

/// Where our parent differs from Foundation's on purpose: repeated slashes inside are kept (the
/// system reads `x//y` as `x/y`, and the answer is a slice of the path, found without a copy), and
/// a path of slashes alone has the root as its parent, not nothing.
private let parentsOfOurOwn = ["//": "/", "///": "/", "/x//y/z": "/x//y", "/a/b/..//c/./": "/a/b/..//c"]

/// swift-corelibs-foundation 6.3 traps (`String._startOfLastPathComponent`) on the parent of a
/// relative path of one one-character component, so these are checked against what it gives for
/// longer ones (`ab` → ``).
private let parentsFoundationTrapsOn = ["a": "", "a/": "", ".": "", "~": ""]

/// `String+Path` gives the names NSString's path methods gave (FoundationEssentials has none).
@Suite struct StringPathTests {
    @Test(arguments: paths) func fileNameIsFoundationsLastPathComponent(_ path: String) {
        #expect(path.fileName == (path as NSString).lastPathComponent)
    }

    @Test(arguments: paths) func fileExtensionIsFoundationsPathExtension(_ path: String) {
        #expect(path.fileExtension == (path as NSString).pathExtension)
    }

    @Test(arguments: paths) func parentPathIsFoundationsDeletingLastPathComponent(_ path: String) {
        if let ours = parentsOfOurOwn[path] {
            #expect(path.parentPath == ours)
        } else if let expected = parentsFoundationTrapsOn[path] {
            #expect(path.parentPath == expected)
        } else {
            #expect(path.parentPath == (path as NSString).deletingLastPathComponent)
        }
    }

    @Test func joiningPathIsFoundationsAppendingPathComponent() {
        let pairs = [
            ("", ""), ("", "x"), ("a", ""), ("/", ""), ("/", "x"), ("a/", "b"), ("a", "b"), ("a", "/b"), ("a//", "b"),
            ("/a", "b/"), ("a", "b/c"), ("/a/", "/b"), ("a", "b//c"), ("a/", ""), ("é", "日本.txt"), ("/", "/"),
        ]
        for (path, component) in pairs {
            #expect(path.joiningPath(component) == (path as NSString).appendingPathComponent(component), "\(path) + \(component)")
        }
    }

    @Test(arguments: paths + [
        "./", "./.", "././a", "./a/", "a/./b", "a//b", "../..", "./../a", "a/./.", "a/b/./", "./.x",
        "~/.", "~/..", "~/../x", "/./", "/.//.", "~root/.", "~root/../x",
    ])
    func standardizedPathIsFoundationsStandardizingPath(_ path: String) {
        #expect(path.standardizedPath == (path as NSString).standardizingPath)
    }

    @Test func theCurrentFolderStaysAPathTheSystemOpens() {
        #expect(".".standardizedPath == ".")
        #expect(FileManager.default.fileExists(atPath: ".".standardizedPath))
        #expect("./".standardizedPath == ".")
    }

    @Test func standardizedPathKeepsSymbolicLinks() throws {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        try folder.write("real/inner/x")
        try folder.link("link", to: "real/inner")
        let link = folder.file("link")

        // The link stays as the user named it; `..` after it is taken back in the text, so the
        // result names another file than the system would find (links are checked where that
        // matters, by `LocalFile.firstLink`).
        #expect((link + "/x").standardizedPath == link + "/x")
        #expect((link + "/./x/..").standardizedPath == link)
        #expect((link + "/../inner").standardizedPath == folder.file("inner"))
        #expect(FileManager.default.fileExists(atPath: link + "/../inner"), "the system reads link/.. as real")
        #expect(!FileManager.default.fileExists(atPath: folder.file("inner")))
    }

    @Test func expandingTildeIsFoundationsExpandingTildeInPath() {
        // `nosuchuserzz` has no account: the path is kept as it is, without its last slash.
        let samples = [
            "", "~", "~/", "~//", "~/x", "~/x/", "~/x/../y", "~root", "~root/", "~root/y",
            "~nosuchuserzz", "~nosuchuserzz/", "~nosuchuserzz/q", "/~", "a~", "~~", "/a/", "a/~/b",
        ]
        for path in samples {
            #expect(path.expandingTilde == (path as NSString).expandingTildeInPath, "\(path)")
        }
    }

    @Test func theHomeFolderIsFoundations() {
        #expect(String.homeFolder == NSHomeDirectory())
    }
}
