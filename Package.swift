// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Monsoon",
    // What other packages can depend on. The test server is not among them: it is built with -O
    // even in debug builds (an unsafe flag, which SwiftPM refuses in a versioned dependency).
    products: [
        .executable(name: "monsoon", targets: ["monsoon"]),
        .library(name: "MonsoonStore", targets: ["MonsoonStore"]),
        .library(name: "MonsoonEngine", targets: ["MonsoonEngine"]),
        .library(name: "MonsoonPodcasts", targets: ["MonsoonPodcasts"]),
        .library(name: "MonsoonCluster", targets: ["MonsoonCluster"]),
    ],
    targets: [
        // System libraries: a module map and one header of typed wrappers each.
        // libcurl, opened when the engine first starts (dlopen), not linked: see CCurl/include.
        // Its headers are in the compiler's default search path (Debian's libcurl4-openssl-dev).
        .target(name: "CCurl", path: "CCurl"),

        .systemLibrary(
            name: "CSQLite",
            path: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        // OpenSSL's libcrypto, for SHA-256 of archived files, of `get --discard --checksum` and of the
        // test server's bodies, and SHA-1 of WARC records (libcurl links it already).
        .systemLibrary(
            name: "CCrypto",
            path: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),

        // glibc's thread-naming, spawn and pipe calls Swift's Glibc module leaves out (no library: glibc itself).
        .systemLibrary(name: "CLibc", path: "CLibc"),

        // One of each, below everything else: the coded error every domain's errors are, the lock,
        // threads, HTTP dates, SHA-256, and the path and text helpers FoundationEssentials leaves
        // out. Depends on nothing of ours; the store, the engine and the test server re-export it.
        .target(name: "MonsoonBasics", dependencies: ["CCrypto", "CLibc"]),

        // The SQLite layer: connection, statements, transactions, migrations. Depends only on MonsoonBasics.
        .target(name: "MonsoonStore", dependencies: ["CSQLite", "MonsoonBasics"]),

        // zlib, for WARC files (`--warc`): one gzip member per record (libcurl links it already).
        .systemLibrary(
            name: "CZlib",
            path: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // The download engine: the only module that imports CCurl.
        .target(name: "MonsoonEngine", dependencies: ["CCurl", "MonsoonBasics", "MonsoonStore", "CCrypto", "CZlib"]),

        // libxml2's SAX interface, for the feed parser: Foundation's XMLParser alone takes twice the time
        // of the whole feed parser on large feeds (see Sources/MonsoonPodcasts/Feed/SAXParser.swift).
        // Opened when a document is first parsed (dlopen), not linked: see CLibXML2/include.
        .target(name: "CLibXML2", path: "CLibXML2"),

        // The podcast core: feeds, episodes, the library. Uses the engine and the store.
        .target(name: "MonsoonPodcasts", dependencies: ["MonsoonBasics", "MonsoonEngine", "MonsoonStore", "CLibXML2"]),
        .executableTarget(name: "monsoon-feed-bench", dependencies: ["MonsoonBasics", "MonsoonPodcasts", "CLibXML2"], path: "Benchmarks/FeedBenchmark"),

        // libpq, for the download queue that many machines share in PostgreSQL.
        // Opened when a cluster command first connects (dlopen), not linked: see CLibPQ/include.
        .target(name: "CLibPQ", path: "CLibPQ"),

        // The shared queue in PostgreSQL: connection, statements, notifications, schema, and the
        // shared library (feeds read, episodes chosen and named as `archive` does, through the
        // podcast core and the engine). The only module that imports CLibPQ; nothing below depends on it.
        .target(name: "MonsoonCluster", dependencies: ["CLibPQ", "CCrypto", "MonsoonBasics", "MonsoonEngine", "MonsoonPodcasts", "MonsoonStore"]),

        // The command-line tool: commands live in a library so tests can run them in-process.
        .target(name: "MonsoonCLI", dependencies: ["MonsoonBasics", "MonsoonPodcasts", "MonsoonEngine", "MonsoonStore", "MonsoonCluster", "CLibc"]),
        .executableTarget(name: "monsoon", dependencies: ["MonsoonCLI", "CLibc"]),

        // The loopback HTTP server with fault injection, for tests, the demo and benchmarks.
        // Optimized in debug builds too: it serves every test's bytes, and a slow server on a
        // 2-core machine starves the tests it serves. It hashes them with MonsoonBasics' SHA-256,
        // which is libcrypto's and so as fast in a debug build.
        .target(name: "MonsoonTestServer", dependencies: ["MonsoonBasics"], swiftSettings: [.unsafeFlags(["-O"])]),
        .executableTarget(name: "monsoon-testserver", dependencies: ["MonsoonTestServer"]),

        // Benchmarks, run by `make bench` (speed is measured there, never in tests).
        .executableTarget(name: "monsoon-queue-bench", dependencies: ["MonsoonEngine"], path: "Benchmarks/QueueBenchmark"),
        .executableTarget(name: "monsoon-refresh-bench", dependencies: ["MonsoonPodcasts", "MonsoonEngine", "MonsoonStore", "MonsoonTestServer"], path: "Benchmarks/RefreshBenchmark"),

        // `make soak`: downloads through the faulty test server while monsoon is killed again and again.
        .executableTarget(name: "monsoon-soak", dependencies: ["MonsoonStore", "MonsoonTestServer"], path: "Tests/Soak"),

        // Fuzz targets for the feed, date and duration parsers. `make fuzz` builds it with
        // -sanitize=fuzzer (flags on its command line, never here) and runs libFuzzer; in other
        // builds it replays saved inputs. CLibFuzzer only declares libFuzzer's driver.
        .systemLibrary(name: "CLibFuzzer", path: "CLibFuzzer"),
        .executableTarget(name: "monsoon-fuzz", dependencies: ["MonsoonBasics", "MonsoonPodcasts", "CLibFuzzer"]),

        .testTarget(name: "MonsoonPodcastsTests", dependencies: ["MonsoonPodcasts", "MonsoonEngine", "MonsoonStore", "MonsoonTestServer"]),
        .testTarget(name: "MonsoonStoreTests", dependencies: ["MonsoonStore", "CSQLite"]),
        .testTarget(name: "MonsoonEngineTests", dependencies: ["MonsoonEngine", "MonsoonStore", "MonsoonTestServer"]),
        .testTarget(name: "MonsoonCLITests", dependencies: ["MonsoonCLI", "MonsoonCluster", "MonsoonEngine", "MonsoonPodcasts", "MonsoonStore", "MonsoonTestServer", "CLibc"]),
        .testTarget(name: "MonsoonTestServerTests", dependencies: ["MonsoonTestServer"]),
        .testTarget(name: "MonsoonBasicsTests", dependencies: ["MonsoonBasics"]),
        // Against real PostgreSQL servers the tests start in temporary folders (Debian's postgresql).
        .testTarget(name: "MonsoonClusterTests", dependencies: ["MonsoonCluster", "MonsoonCLI", "MonsoonPodcasts", "MonsoonEngine", "MonsoonStore", "MonsoonTestServer"]),
    ],
    swiftLanguageModes: [.v6]
)
