import MonsoonStore

/// The columns of `downloads`, the engine's queue: every statement on the table is written from
/// them and reads its rows by them (see `TableColumn`).
package enum DownloadColumn: Int, TableColumn {
    case seq, id, url, destinationKind, destination, priority, expectedSize, expectedType, headers, userInfo
    case status, attempts, backoffLevel, retryAt, errorCode, errorMessage, errorStatus, bytes, total, checkpoint
    case filePath, resumeURL, etag, lastModified, resumeTotal, updated, fileStem, finalURL, sizeLimit, sizeLimitReason
    case root, addresses, followsRedirects, owner, checksum
}
