import Foundation
import Testing

/// The package's boundaries, read from its source: only the engine's storage code writes SQL
/// about the engine's tables (everyone else asks `QueueStore`), and every target declares in
/// `Package.swift` each module of the package it imports.
@Suite struct ModuleBoundaryTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The engine's tables (`DownloadStore`'s migrations), after an SQL keyword that names a
    /// table (across a line break too: SQL is written over several lines).
    static var engineTableSQL: Regex<(Substring, Substring, Substring)> {
        #/\b(FROM|JOIN|INTO|UPDATE|TABLE|EXISTS)\s+(downloads|download_commands|meta)\b/#
    }

    @Test func onlyTheEngineStorageCodeNamesTheEngineTablesInSQL() throws {
        let storage = Self.root.appending(path: "Sources/MonsoonEngine/DownloadQueue").path + "/"
        var found: [String] = []
        var inStorage = 0
        for file in try Self.swiftFiles(under: "Sources") {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for match in text.matches(of: Self.engineTableSQL) {
                if file.hasPrefix(storage) { inStorage += 1 } else { found.append("\(file.dropFirst(Self.root.path.count + 1)): \(match.output.0)") }
            }
        }
        #expect(found == [], "SQL on the engine's tables outside its storage code: ask QueueStore instead")
        #expect(inStorage > 0, "the pattern no longer finds the storage code's own SQL: update it with the tables")
    }

    /// Each C library has one module of the package that speaks to it, which the others ask.
    @Test func onlyTheirOwnModulesImportTheCLibraries() throws {
        let owners = ["CCurl": "MonsoonEngine", "CLibPQ": "MonsoonCluster"]
        var found: [String] = []
        for file in try Self.swiftFiles(under: "Sources") {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for match in text.matches(of: #/(?m)^(?:@_implementationOnly |public |package |internal )?import (CCurl|CLibPQ)\b/#) {
                let module = String(match.output.1)
                if !file.hasPrefix(Self.root.appending(path: "Sources/\(owners[module] ?? "")").path + "/") {
                    found.append("\(file.dropFirst(Self.root.path.count + 1)) imports \(module)")
                }
            }
        }
        #expect(found == [], "only MonsoonEngine imports CCurl, and only MonsoonCluster imports CLibPQ")
    }

    @Test func everyTargetDeclaresTheModulesItImports() throws {
        let targets = try Self.declaredTargets()
        #expect(targets.count > 10 && targets["MonsoonCLI"] != nil)
        let ours = Set(targets.keys)
        var undeclared: [String] = []
        for (name, target) in targets.sorted(by: { $0.key < $1.key }) {
            for file in try Self.swiftFiles(under: target.path) {
                let text = try String(contentsOfFile: file, encoding: .utf8)
                for match in text.matches(of: #/(?m)^(?:@testable |@_implementationOnly |public |package |internal )?import ([A-Za-z0-9_]+)/#) {
                    let module = String(match.output.1)
                    // Modules of the system and toolchain (Foundation, Glibc, Testing…) are not the package's to declare.
                    if ours.contains(module), module != name, !target.dependencies.contains(module) {
                        undeclared.append("\(name) imports \(module) (\(file.dropFirst(Self.root.path.count + 1)))")
                    }
                }
            }
        }
        #expect(Array(Set(undeclared)).sorted() == [], "declare these dependencies in Package.swift")
    }

    /// Jobs in the inbox are handed an `EngineLoop`: it may only be asked (commands) or told
    /// (messages), so none of its stored properties is visible outside its own file. Extensions
    /// cannot add stored properties; its own declaration is the one place to look.
    @Test func theLoopKeepsItsStateToItself() throws {
        let text = try String(contentsOf: Self.root.appending(path: "Sources/MonsoonEngine/Loop/EngineLoop.swift"), encoding: .utf8)
        let start = try #require(text.range(of: "\nstruct EngineLoop {\n") ?? text.range(of: "\nfinal class EngineLoop {\n"), "EngineLoop's declaration moved")
        let body = text[start.upperBound...]
        let end = try #require(body.range(of: "\n}\n"))
        // Stored properties sit at one indentation level; computed ones have a body (`{`).
        var exposed: [String] = []
        var stored = 0
        for line in body[..<end.lowerBound].split(separator: "\n") where line.hasPrefix("    ") && !line.hasPrefix("     ") {
            let declaration = line.trimmingCharacters(in: .whitespaces)
            guard declaration.firstMatch(of: #/^(?:@\w+ )*(?:(?:private|fileprivate|internal|package|public)(?:\(set\))? )*(?:let|var) /#) != nil,
                  !declaration.contains("{") else { continue }
            stored += 1
            if !(declaration.hasPrefix("private ") || declaration.hasPrefix("fileprivate ")) { exposed.append(declaration) }
        }
        #expect(stored > 0, "the check no longer finds the loop's stored property: update it")
        #expect(exposed == [], "EngineLoop's stored properties are private: give jobs a command or a message instead")
    }

    /// The targets of `Package.swift`: name, folder, and the dependencies named in its declaration.
    static func declaredTargets() throws -> [String: (path: String, dependencies: Set<String>)] {
        let manifest = try String(contentsOf: root.appending(path: "Package.swift"), encoding: .utf8)
        var targets: [String: (path: String, dependencies: Set<String>)] = [:]
        // One declaration per `.kind(name: …)` call, up to the next one.
        let declaration = #/\.(target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"((?:[^.]|\.(?!target\(|executableTarget\(|testTarget\(|systemLibrary\())*)/#
        for match in manifest.matches(of: declaration) {
            let (kind, name, rest) = (String(match.output.1), String(match.output.2), String(match.output.3))
            let path = rest.firstMatch(of: #/path:\s*"([^"]+)"/#).map { String($0.output.1) }
                ?? (kind == "testTarget" ? "Tests/\(name)" : kind == "systemLibrary" ? name : "Sources/\(name)")
            let list = rest.firstMatch(of: #/dependencies:\s*\[([^\]]*)\]/#).map { String($0.output.1) } ?? ""
            targets[name] = (path, Set(list.matches(of: #/"([^"]+)"/#).map { String($0.output.1) }))
        }
        return targets
    }

    static func swiftFiles(under folder: String) throws -> [String] {
        let base = folder.hasPrefix("/") ? folder : root.appending(path: folder).path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        return walker.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { base + "/" + $0 }.sorted()
    }
}
