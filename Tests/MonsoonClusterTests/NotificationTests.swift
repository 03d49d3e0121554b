import Foundation
import MonsoonCluster
import Testing

/// LISTEN and NOTIFY between connections, and after the server crashed. Serialized: one test
/// restarts the suite's server.
@Suite(.temporaryPostgres(own: true), .serialized) struct NotificationTests {
    @Test func aNotificationFromAnotherConnectionArrives() async throws {
        let url = try temporaryPostgres().url()
        try await onThread {
            let listener = try PostgresConnection(url)
            try listener.listen("monsoon_jobs")
            #expect(try listener.waitForNotifications(timeout: 0.05) == [])
            let sender = try PostgresConnection(url)
            try sender.notify("monsoon_jobs", payload: "42")
            let received = try listener.waitForNotifications(timeout: 10)
            #expect(received.map(\.channel) == ["monsoon_jobs"] && received.map(\.payload) == ["42"])
            #expect(received.first?.senderProcessID == (try sender.execute("SELECT pg_backend_pid()").first?.int(0)).map(Int32.init))
            // Sent in a transaction, it comes with the commit.
            try sender.transaction {
                try sender.notify("monsoon_jobs", payload: "at commit")
                #expect(try listener.waitForNotifications(timeout: 0.1) == [])
            }
            #expect(try listener.waitForNotifications(timeout: 10).map(\.payload) == ["at commit"])
            try listener.unlisten("monsoon_jobs")
            try sender.notify("monsoon_jobs", payload: "unheard")
            #expect(try listener.waitForNotifications(timeout: 0.1) == [])
        }
    }

    @Test func afterACrashTheListenerReconnectsAndListensAgain() async throws {
        let server = try temporaryPostgres()
        try await onThread {
            let listener = try PostgresConnection(server.url())
            try listener.listen("monsoon_jobs")
            try listener.listen("monsoon \"odd\" name")
            try server.restart(immediate: true)
            let lost = try #require(throws: PostgresError.self) { try listener.waitForNotifications(timeout: 10) }
            #expect(lost.code == .connectionLost && lost.isTransient, "\(lost)")
            #expect(lost.message.hasPrefix("lost the connection to PostgreSQL at 127.0.0.1:\(server.port) ("), "\(lost.message)")
            #expect(!listener.isConnected)
            #expect(throws: PostgresError.self) { try listener.execute("SELECT 1") }

            try listener.reconnect()
            #expect(listener.isConnected)
            let sender = try PostgresConnection(server.url())
            try sender.notify("monsoon_jobs", payload: "after")
            try sender.notify("monsoon \"odd\" name", payload: "odd")
            var received: [PostgresNotification] = []
            let deadline = Date().addingTimeInterval(10)
            while received.count < 2 && Date() < deadline { received += try listener.waitForNotifications(timeout: 1) }
            #expect(received.map(\.payload) == ["after", "odd"])
        }
    }

    @Test func aChannelPostgreSQLWouldCutIsRefused() async throws {
        let url = try temporaryPostgres().url()
        try await onThread {
            let connection = try PostgresConnection(url)
            let error = try #require(throws: PostgresError.self) { try connection.listen(String(repeating: "c", count: 64)) }
            #expect(error.code == .invalidValue)
        }
    }
}
