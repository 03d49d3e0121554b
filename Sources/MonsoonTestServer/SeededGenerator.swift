/// A seeded random number generator (SplitMix64), for tests, the soak and benchmarks: a run
/// that fails can be repeated with the seed it printed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var state: UInt64

    /// A generator starting from `seed`; a new random seed when none is given.
    public init(seed: UInt64 = UInt64.random(in: 0...UInt64.max)) {
        self.seed = seed
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return PatternBlock.mix(state)
    }
}
