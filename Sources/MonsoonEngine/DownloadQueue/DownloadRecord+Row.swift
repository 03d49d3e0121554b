import FoundationEssentials
import MonsoonStore

/// How a download record maps to its row in `downloads`.
extension DownloadRecord {
    /// Reads a row selected with `QueueRows.recordColumns`.
    package init(row: TableRow<DownloadColumn>) throws {
        guard let id = row.text(.id), let urlText = row.text(.url), let url = URL(string: urlText),
              let kind = row.text(.destinationKind), let destinationPath = row.text(.destination),
              let status = row.text(.status).flatMap(DownloadStatus.init(rawValue:)) else {
            throw StoreError(code: 0, message: "a download row in the database is incomplete (seq \(row.int(.seq)))")
        }
        let request = DownloadRequest(
            id: DownloadID(id), url: url,
            destination: kind == "file" ? .file(destinationPath) : row.text(.fileStem).map { .named(folder: destinationPath, stem: $0) } ?? .directory(destinationPath),
            priority: row.int(.priority), expectedSize: row.optionalInt(.expectedSize), expectedMediaType: row.text(.expectedType),
            headers: try Self.decode(row.text(.headers), "headers", row), userInfo: try Self.decode(row.text(.userInfo), "user info", row),
            sizeLimit: row.optionalInt(.sizeLimit).map { .init(bytes: $0, reason: row.text(.sizeLimitReason) ?? "the download's own limit") },
            root: row.text(.root),
            addresses: try row.text(.addresses).map { text in
                guard let scope = AddressScope(rawValue: text) else {
                    throw StoreError(code: 0, message: "a download row in the database has damaged addresses (seq \(row.int(.seq)))")
                }
                return scope
            } ?? .any, followsRedirects: row.optionalInt(.followsRedirects) != 0,
            owner: try Self.owner(row))
        self.init(request: request, sequence: row.int(.seq), host: HostKey.of(url))
        restoreStatus(status)
        counters = RetryPolicy.Counters(attempts: row.int(.attempts), backoffLevel: row.int(.backoffLevel))
        retryAt = row.date(.retryAt)
        if let code = row.text(.errorCode) {
            lastError = DownloadError(DownloadError.Code(rawValue: code), row.text(.errorMessage) ?? code, httpStatus: row.optionalInt(.errorStatus))
        }
        bytes = row.int(.bytes)
        total = row.optionalInt(.total)
        checkpoint = row.int(.checkpoint)
        filePath = row.text(.filePath)
        finalURL = row.text(.finalURL)
        checksum = row.text(.checksum)
        if let resumeURL = row.text(.resumeURL) {
            resume = ResumeState(url: resumeURL, etag: row.text(.etag), lastModified: row.text(.lastModified), total: row.optionalInt(.resumeTotal))
        }
    }

    /// The values of `QueueRows.insertColumns`, `updated` being now (the sequence is `NULL` for 0:
    /// the next one). Each is made a `SQLValue` from its own type: a list of protocol values
    /// boxed every one, and a small file's insert spent more on that than on SQLite's.
    package var insertValues: ColumnValues<DownloadColumn> {
        var values = ColumnValues<DownloadColumn>(capacity: QueueRows.columnCount)
        let (kind, destination) = QueueRows.destinationColumns(request.destination)
        values[.seq] = (sequence > 0 ? sequence : nil).sqlValue
        values[.url] = .text(request.url.absoluteString)
        values[.destinationKind] = .text(kind)
        values[.destination] = .text(destination)
        values[.expectedSize] = request.expectedSize.sqlValue
        values[.expectedType] = request.expectedMediaType.sqlValue
        values[.headers] = .text(Self.encode(request.headers))
        values[.userInfo] = .text(Self.encode(request.userInfo))
        values[.fileStem] = request.destination.stem.sqlValue
        values[.sizeLimit] = (request.sizeLimit?.bytes).sqlValue
        values[.sizeLimitReason] = (request.sizeLimit?.reason).sqlValue
        values[.root] = request.root.sqlValue
        values[.addresses] = QueueRows.addressesColumn(request.addresses).sqlValue
        values[.followsRedirects] = QueueRows.followsRedirectsColumn(request.followsRedirects).sqlValue
        values[.owner] = .text(request.owner.rawValue)
        setStateValues(in: &values)
        return values
    }

    /// The values of `QueueRows.updateColumns`, `updated` being now, and the row's key: its id and
    /// its sequence. The sequence too: a save that was queued for a download since removed and
    /// added again under the same id must not overwrite the new one.
    package var updateValues: ColumnValues<DownloadColumn> {
        var values = ColumnValues<DownloadColumn>(capacity: QueueRows.columnCount)
        values[.seq] = sequence.sqlValue
        values[.finalURL] = finalURL.sqlValue
        setStateValues(in: &values)
        return values
    }

    /// What an insert and an update both write: the key, the priority and the state.
    private func setStateValues(in values: inout ColumnValues<DownloadColumn>) {
        values[.id] = .text(request.id.rawValue)
        values[.priority] = request.priority.sqlValue
        values[.status] = .text(status.rawValue)
        values[.attempts] = counters.attempts.sqlValue
        values[.backoffLevel] = counters.backoffLevel.sqlValue
        values[.retryAt] = retryAt.sqlValue
        values[.errorCode] = (lastError?.code.rawValue).sqlValue
        values[.errorMessage] = (lastError?.message).sqlValue
        values[.errorStatus] = (lastError?.httpStatus).sqlValue
        values[.bytes] = bytes.sqlValue
        values[.total] = total.sqlValue
        values[.checkpoint] = checkpoint.sqlValue
        values[.filePath] = filePath.sqlValue
        values[.resumeURL] = (resume?.url).sqlValue
        values[.etag] = (resume?.etag).sqlValue
        values[.lastModified] = (resume?.lastModified).sqlValue
        values[.resumeTotal] = (resume?.total).sqlValue
        values[.checksum] = checksum.sqlValue
        values[.updated] = Date().sqlValue
    }

    /// The `owner` column; one this Monsoon does not know makes the row unreadable (a newer
    /// Monsoon's owner, whose files this one must not take for a direct download's).
    static func owner(_ row: TableRow<DownloadColumn>) throws -> DownloadOwner {
        guard let owner = DownloadOwner(rawValue: row.text(.owner) ?? "direct") else {
            throw StoreError(code: 0, message: "a download row in the database has an unknown owner (id \(row.text(.id) ?? "missing"))")
        }
        return owner
    }

    /// The pairs as `JSONEncoder` writes them with sorted keys and slashes as they are (`JSONString`), without its cost
    /// (a few percent of an archive's CPU): one form, whatever the text.
    static func encode(_ pairs: [String: String]) -> String {
        guard !pairs.isEmpty else { return "{}" }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(pairs.reduce(2) { $0 + $1.key.utf8.count + $1.value.utf8.count + 6 })
        for (index, pair) in pairs.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONString.append(pair.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            JSONString.append(pair.value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A headers or user-info column. A damaged one makes the row unreadable (reported, never
    /// read as "no headers": a private feed's download would go out without its credentials).
    private static func decode(_ text: String?, _ column: String, _ row: TableRow<DownloadColumn>) throws -> [String: String] {
        // Most rows have neither: no parse (JSON's costs more than the rest of the row).
        guard let text, text != "{}" else { return [:] }
        if let pairs = plainPairs(text) { return pairs }
        // JSON's own error adds nothing a user can act on: the column is damaged either way, said below.
        guard let object = try? JSONDecoder().decode([String: String].self, from: Data(text.utf8)) else {
            throw StoreError(code: 0, message: "a download row in the database has damaged \(column) (seq \(row.int(.seq)))")
        }
        return object
    }
}

extension DownloadRecord {
    /// The pairs of an object of strings as `encode` writes it, when no string holds an escape (an episode's title
    /// and id, say): read straight off the bytes, where `JSONDecoder` took a quarter of an archived episode's row
    /// read. Nil for anything else, which `JSONDecoder` reads.
    static func plainPairs(_ text: String) -> [String: String]? {
        var text = text
        return text.withUTF8 { bytes -> [String: String]? in
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "{"), bytes[bytes.count - 1] == UInt8(ascii: "}") else { return nil }
            var index = 1
            // The string whose opening quote is at `index`, which then moves past its closing one.
            func string() -> String? {
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
                let start = index + 1
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    if bytes[end] == UInt8(ascii: "\\") || bytes[end] < 0x20 { return nil }   // a raw control character: damage, which JSONDecoder reports
                    end += 1
                }
                guard end < bytes.count else { return nil }
                index = end + 1
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            }
            var pairs: [String: String] = [:]
            while true {
                guard let key = string(), index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let value = string(), index < bytes.count else { return nil }
                guard pairs.updateValue(value, forKey: key) == nil else { return nil }   // a key twice: JSONDecoder keeps the first
                if index == bytes.count - 1 { return pairs }
                guard bytes[index] == UInt8(ascii: ",") else { return nil }
                index += 1
            }
        }
    }
}

extension DownloadRequest.Destination {
    /// The caller's stem of a `.named` destination (stored beside the folder).
    package var stem: String? {
        if case .named(_, let stem) = self { return stem }
        return nil
    }
}
