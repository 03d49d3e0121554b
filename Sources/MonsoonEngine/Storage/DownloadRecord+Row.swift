import Foundation
import MonsoonStore

/// How a download record maps to its row in `downloads`.
extension DownloadRecord {
    /// Reads a row selected with `QueueRows.recordColumns`, from any store.
    package init(row: some QueueRowReading) throws {
        guard let id = row.text(1), let urlText = row.text(2), let url = URL(string: urlText),
              let kind = row.text(3), let destinationPath = row.text(4),
              let status = row.text(10).flatMap(DownloadStatus.init(rawValue:)) else {
            throw StoreError(code: 0, message: "a download row in the database is incomplete (seq \(row.int(0)))")
        }
        let request = DownloadRequest(
            id: DownloadID(id), url: url,
            destination: kind == "file" ? .file(destinationPath) : row.text(25).map { .named(folder: destinationPath, stem: $0) } ?? .directory(destinationPath),
            priority: row.int(5), expectedSize: row.optionalInt(6), expectedMediaType: row.text(7),
            headers: try Self.decode(row.text(8), "headers", row), userInfo: try Self.decode(row.text(9), "user info", row),
            sizeLimit: row.optionalInt(27).map { .init(bytes: $0, reason: row.text(28) ?? "the download's own limit") }, root: row.text(29),
            addresses: try row.text(30).map { text in
                guard let scope = AddressScope(rawValue: text) else {
                    throw StoreError(code: 0, message: "a download row in the database has damaged addresses (seq \(row.int(0)))")
                }
                return scope
            } ?? .any, followsRedirects: row.optionalInt(31) != 0)
        self.init(request: request, sequence: row.int(0), host: EngineCore.hostKey(url))
        restoreStatus(status)
        counters = RetryPolicy.Counters(attempts: row.int(11), backoffLevel: row.int(12))
        retryAt = row.date(13)
        if let code = row.text(14) {
            lastError = DownloadError(DownloadError.Code(rawValue: code), row.text(15) ?? code, httpStatus: row.optionalInt(16))
        }
        bytes = row.int(17)
        total = row.optionalInt(18)
        checkpoint = row.int(19)
        filePath = row.text(20)
        finalURL = row.text(26)
        if let resumeURL = row.text(21) {
            resume = ResumeState(url: resumeURL, etag: row.text(22), lastModified: row.text(23), total: row.optionalInt(24))
        }
    }

    /// Appends the values of the first 24 of `QueueRows.insertColumns` (see `insertParameters`),
    /// each made a `SQLValue` from its own type: a list of protocol values boxed every one, and
    /// a small file's insert spent more on that than on SQLite's.
    func appendInsertValues(to values: inout [SQLValue]) {
        let (kind, destination) = QueueRows.destinationColumns(request.destination)
        values.append(.text(request.id.rawValue))
        values.append(.text(request.url.absoluteString))
        values.append(.text(kind))
        values.append(.text(destination))
        values.append(request.priority.sqlValue)
        values.append(request.expectedSize.sqlValue)
        values.append(request.expectedMediaType.sqlValue)
        values.append(.text(Self.encode(request.headers)))
        values.append(.text(Self.encode(request.userInfo)))
        appendStateValues(to: &values)
    }

    /// Appends the values of the first 17 parameters of the update (1 is the id; see `updateParameters`).
    func appendUpdateValues(to values: inout [SQLValue]) {
        values.append(.text(request.id.rawValue))
        values.append(request.priority.sqlValue)
        appendStateValues(to: &values)
    }

    private func appendStateValues(to values: inout [SQLValue]) {
        values.append(.text(status.rawValue))
        values.append(counters.attempts.sqlValue)
        values.append(counters.backoffLevel.sqlValue)
        values.append(retryAt.sqlValue)
        values.append((lastError?.code.rawValue).sqlValue)
        values.append((lastError?.message).sqlValue)
        values.append((lastError?.httpStatus).sqlValue)
        values.append(bytes.sqlValue)
        values.append(total.sqlValue)
        values.append(checkpoint.sqlValue)
        values.append(filePath.sqlValue)
        values.append((resume?.url).sqlValue)
        values.append((resume?.etag).sqlValue)
        values.append((resume?.lastModified).sqlValue)
        values.append((resume?.total).sqlValue)
    }

    private static func encode(_ pairs: [String: String]) -> String {
        // Strings to strings always serialize: the nil case is unreachable, and "{}" is still a valid column.
        guard !pairs.isEmpty, let data = try? JSONSerialization.data(withJSONObject: pairs, options: [.sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A headers or user-info column. A damaged one makes the row unreadable (reported, never
    /// read as "no headers": a private feed's download would go out without its credentials).
    private static func decode(_ text: String?, _ column: String, _ row: some QueueRowReading) throws -> [String: String] {
        // Most rows have neither: no parse (JSONSerialization's costs more than the rest of the row).
        guard let text, text != "{}" else { return [:] }
        // JSON's own error adds nothing a user can act on: the column is damaged either way, said below.
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String] else {
            throw StoreError(code: 0, message: "a download row in the database has damaged \(column) (seq \(row.int(0)))")
        }
        return object
    }
}

extension DownloadRequest.Destination {
    /// The caller's stem of a `.named` destination (stored beside the folder).
    package var stem: String? {
        if case .named(_, let stem) = self { return stem }
        return nil
    }
}
