// swift-tools-version:6.0
// An example of depending on Monsoon: one download with the engine, reported through its events.
// `make test` builds it, so the products and public API it uses stay usable from outside.
import PackageDescription

let package = Package(
    name: "EngineExample",
    dependencies: [.package(name: "Monsoon", path: "../..")],
    targets: [
        .executableTarget(
            name: "engine-example",
            dependencies: [.product(name: "MonsoonEngine", package: "Monsoon")],
            path: "Sources"
        ),
    ],
    swiftLanguageModes: [.v6]
)
