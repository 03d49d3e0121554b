import CLibPQ
import FoundationEssentials
import Glibc

extension PostgresConnection {
    /// Listens to `channel` from now on, also after `reconnect()`. Call it outside a transaction:
    /// in one, it takes effect at the commit, and a rollback undoes it on the server only.
    public func listen(_ channel: String) throws(PostgresError) {
        try Self.checkChannel(channel)
        try executeScript("LISTEN " + Self.quotedIdentifier(channel))
        if !channels.contains(channel) { channels.append(channel) }
    }

    public func unlisten(_ channel: String) throws(PostgresError) {
        try Self.checkChannel(channel)
        try executeScript("UNLISTEN " + Self.quotedIdentifier(channel))
        channels.removeAll { $0 == channel }
    }

    /// Sends `payload` on `channel` to every session listening to it: at once, or in a transaction
    /// when it commits. Each notifying commit takes a lock global to the database, so send one per
    /// transaction at the most.
    public func notify(_ channel: String, payload: String = "") throws(PostgresError) {
        try Self.checkChannel(channel)
        try execute("SELECT pg_notify($1, $2)", [channel, payload])
    }

    /// The notifications that have arrived, waiting up to `timeout` seconds for the first when
    /// none has: [] when none came. A notification that arrived with a statement's answer is
    /// returned by the next call at once.
    ///
    /// - Throws: `.connectionLost` when the server went away (a restart, a crash, the network):
    ///   call `reconnect()`, which listens again, then wait again.
    public func waitForNotifications(timeout: Double) throws(PostgresError) -> [PostgresNotification] {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64((max(0, timeout) * 1000).rounded(.up)))
        var received = takeNotifications()
        while received.isEmpty {
            // Reads what the socket holds without waiting; a closed connection shows here.
            guard monsoon_PQconsumeInput(raw) == 1, monsoon_PQstatus(raw) == CONNECTION_OK else { throw failure(nil, nil) }
            received = takeNotifications()
            if !received.isEmpty { break }
            let remaining = clock.now.duration(to: deadline)
            guard remaining > .zero else { return [] }
            let socket = monsoon_PQsocket(raw)
            guard socket >= 0 else { throw failure(nil, nil) }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let milliseconds = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
            if poll(&descriptor, 1, Int32(clamping: milliseconds)) < 0, errno != EINTR {
                throw PostgresError(code: .connectionLost, message: "cannot wait for notifications from PostgreSQL at \(server): \(String(cString: strerror(errno)))")
            }
        }
        return received
    }

    /// Makes the connection again after it broke (`PQreset`: the same server, user and options),
    /// then listens again to the channels it listened to.
    public func reconnect() throws(PostgresError) {
        monsoon_PQreset(raw)
        guard monsoon_PQstatus(raw) == CONNECTION_OK else {
            throw PostgresError.connectionFailed(reason: connectionString.scrub(PostgresError.firstLine(of: Self.text(monsoon_PQerrorMessage(raw)))), server: server)
        }
        try startSession()
    }

    /// The notifications libpq has parsed, in the order they came.
    private func takeNotifications() -> [PostgresNotification] {
        var received: [PostgresNotification] = []
        while let notification = monsoon_PQnotifies(raw) {
            received.append(PostgresNotification(channel: String(cString: notification.pointee.relname), payload: String(cString: notification.pointee.extra),
                                                 senderProcessID: notification.pointee.be_pid))
            monsoon_PQfreemem(notification)
        }
        return received
    }

    /// Refuses a channel name PostgreSQL would truncate or reject: a `LISTEN` and a `pg_notify`
    /// of a name over 63 bytes would not meet.
    private static func checkChannel(_ channel: String) throws(PostgresError) {
        guard !channel.isEmpty, channel.utf8.count <= 63, !channel.utf8.contains(0) else {
            throw PostgresError(code: .invalidValue, message: "'\(channel)' cannot name a notification channel (1 to 63 bytes, no NUL); please report this")
        }
    }
}
