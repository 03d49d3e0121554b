import Foundation

extension DownloadRecord {
    /// The record as its files on disk say it is: the bytes its part holds (cut back to the
    /// checkpoint after a reboot, when later bytes may be garbage), or completed when the
    /// file is in place whole. Reads the disk: never on the transfer thread once it runs.
    func inspectingPart(rebooted: Bool) -> DownloadRecord {
        var record = self
        if record.status == .downloading { record.status = .queued }
        guard let path = record.filePath, record.status != .completed else { return record }
        let partPath = PartFile.path(for: path)
        if var size = PartFile.size(at: partPath) {
            if rebooted && size > record.checkpoint {
                truncate(partPath, off_t(record.checkpoint))
                size = record.checkpoint
            }
            record.bytes = size
        } else if let total = record.total, PartFile.size(at: path) == total, record.status != .failed {
            // Stopped between the rename and saving the row: the file in place is whole
            // (it is renamed only after an fsync).
            record.status = .completed
            record.bytes = total
        } else {
            record.bytes = 0
        }
        return record
    }
}
