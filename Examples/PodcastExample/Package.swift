// swift-tools-version:6.0
// An example of depending on Monsoon's podcast layer: subscribe to a feed and download its latest
// episode, with the library and a download queue kept in SQLite. `make test` builds it, and a test
// runs it against the loopback test server, so the products and public API it uses stay usable
// from outside.
import PackageDescription

let package = Package(
    name: "PodcastExample",
    dependencies: [.package(name: "Monsoon", path: "../..")],
    targets: [
        .executableTarget(
            name: "podcast-example",
            dependencies: [
                .product(name: "MonsoonPodcasts", package: "Monsoon"),
                .product(name: "MonsoonEngine", package: "Monsoon"),
                .product(name: "MonsoonStore", package: "Monsoon"),
            ],
            path: "Sources"
        ),
    ],
    swiftLanguageModes: [.v6]
)
