import Foundation
import MonsoonCluster
import Testing

/// A connection that cannot be made says where it tried and what to do, and never the password.
@Suite struct ConnectionFailureTests {
    @Test func nothingListeningIsAConnectionFailureThatNamesTheServer() async throws {
        let port = try TemporaryPostgres.freePort()
        let error = try await onThread {
            try #require(throws: PostgresError.self) { try PostgresConnection("postgresql://monsoon:s3cr%40t-pw@127.0.0.1:\(port)/postgres") }
        }
        #expect(error.code == .connectionFailed)
        #expect(error.message == "cannot connect to PostgreSQL at 127.0.0.1:\(port): connection refused; check that PostgreSQL is running there and listens on that address and port")
        #expect(!error.message.contains("s3cr") && !error.message.contains("\n"))
    }

    @Test func anUnreadableStringIsRefusedWithoutItsPassword() async throws {
        let error = try await onThread {
            try #require(throws: PostgresError.self) { try PostgresConnection("postgresql://monsoon:s3cret@[::1/postgres") }
        }
        #expect(error.code == .invalidConnectionString)
        #expect(error.message.hasPrefix("cannot read the connection string postgresql://monsoon:***@[::1/postgres: "), "\(error.message)")
        #expect(!error.message.contains("s3cret"), "\(error.message)")
        let option = try await onThread {
            try #require(throws: PostgresError.self) { try PostgresConnection("host=127.0.0.1 password=s3cret colour=blue") }
        }
        #expect(option.code == .invalidConnectionString)
        #expect(option.message == "cannot read the connection string host=127.0.0.1 password=*** colour=blue: invalid connection option \"colour\"; write it as a postgresql:// URL (postgresql://HOST:PORT/DATABASE?user=USER) or as key=value pairs")
    }
}
