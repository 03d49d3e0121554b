import Foundation
@testable import MonsoonCluster
import Testing

/// What a connection string shows of itself: never a password, whatever the form.
@Suite struct PostgresConnectionStringTests {
    @Test(arguments: [
        ("postgresql://monsoon:s3cret@db.example.com:5432/monsoon", "postgresql://monsoon:***@db.example.com:5432/monsoon"),
        ("postgres://monsoon@db.example.com/monsoon", "postgres://monsoon@db.example.com/monsoon"),
        ("postgresql://u:p%40ss@h1:5432,h2:5433/db?sslmode=require&password=other", "postgresql://u:***@h1:5432,h2:5433/db?sslmode=require&password=***"),
        ("postgresql://u:pa/ss@word@host/db", "postgresql://u:***@host/db"),
        ("postgresql://host/db?user=u&sslpassword=key", "postgresql://host/db?user=u&sslpassword=***"),
        ("postgresql://u:@host/db", "postgresql://u:@host/db"),
        ("host=db port=5432 password=s3cret dbname=x", "host=db port=5432 password=*** dbname=x"),
        ("host=db password = 's3 cr\\'et' user=u", "host=db password = *** user=u"),
        ("password=s3cret host=db", "password=*** host=db"),
        ("monsoon", "monsoon"),
        ("", ""),
    ])
    func passwordsAreMasked(_ text: String, _ shown: String) {
        let string = PostgresConnectionString(text)
        #expect(string.redacted == shown)
        #expect("\(string)" == shown)
        var dumped = ""
        dump(string, to: &dumped)
        #expect(!dumped.contains("s3") && !dumped.contains("p%40ss"), "\(dumped)")
    }

    @Test func aMessageThatQuotesTheStringOrItsPasswordIsScrubbed() {
        let url = PostgresConnectionString("postgresql://u:s3cret@[::1/db")
        #expect(url.scrub("end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgresql://u:s3cret@[::1/db\"")
                == "end of string reached when looking for matching \"]\" in IPv6 host address in URI: \"postgresql://u:***@[::1/db\"")
        let encoded = PostgresConnectionString("postgresql://u:a%zzb@host/db")
        #expect(encoded.scrub("invalid percent-encoded token: \"a%zzb\"") == "invalid percent-encoded token: \"***\"")
        let decoded = PostgresConnectionString("postgresql://u:p%40ss@host/db")
        #expect(decoded.scrub("user u with p@ss") == "user u with ***")
    }

    /// A password written with an unquoted space: libpq refuses the string and quotes the word
    /// after the space, which may be the password's end.
    @Test func wordsAfterWhereLibpqStopsReadingAreSecrets() {
        let string = PostgresConnectionString("host=db password=abc def user=u")
        #expect(string.redacted == "host=db password=*** ***")
        #expect(string.scrub("missing \"=\" after \"def\" in connection info string") == "missing \"=\" after \"***\" in connection info string")
        let open = PostgresConnectionString("host=db user='u password=s3cret")
        #expect(open.redacted == "host=db user=***")
        #expect(!open.scrub("x s3cret").contains("s3cret"))
    }

    @Test func timestampsReadInAnyOffsetAndWriteInUTC() throws {
        let date = Date(timeIntervalSince1970: 1_796_000_000.25)
        #expect(PostgresTimestamp.text(of: date) == "2026-11-30 00:53:20.250000+00")
        #expect(PostgresTimestamp.date(from: "2026-11-30 00:53:20.25+00") == date)
        #expect(PostgresTimestamp.date(from: "2026-11-30 06:23:20.25+05:30") == date)
        #expect(PostgresTimestamp.date(from: "2026-11-29 23:53:20.25-01") == date)
        #expect(PostgresTimestamp.date(from: "2026-11-30 00:53:20+00") == Date(timeIntervalSince1970: 1_796_000_000))
        #expect(PostgresTimestamp.date(from: "infinity") == .distantFuture)
        #expect(PostgresTimestamp.date(from: "11/30/2026 00:53:20 UTC") == nil)
        #expect(PostgresTimestamp.text(of: Date(timeIntervalSince1970: -0.5)) == "1969-12-31 23:59:59.500000+00")
    }

    @Test func libpqMessagesAreTrimmedToTheirFirstLine() {
        #expect(PostgresError.firstLine(of: "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n")
                == "connection refused")
        #expect(PostgresError.firstLine(of: "connection to server at \"h\", port 5432 failed: FATAL:  password authentication failed for user \"u\"\n")
                == "password authentication failed for user \"u\"")
        #expect(PostgresError.firstLine(of: "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n")
                == "server closed the connection unexpectedly")
        #expect(PostgresError.firstLine(of: "\n") == "no reason given")
        #expect(PostgresError.firstLine(of: "SSL SYSCALL error: EOF detected") == "SSL SYSCALL error: EOF detected")
    }
}
