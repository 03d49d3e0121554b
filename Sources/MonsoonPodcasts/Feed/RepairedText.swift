/// A document with ``FeedRepair``'s edits applied on the fly, in chunks for libxml2's push parser, through one reused
/// staging buffer: a repaired 12 MB feed costs 256 KB that stay in cache, not 12 MB of fresh pages (page faults are
/// what a short-lived `monsoon inspect` pays most for).
struct RepairedText {
    let input: UnsafeBufferPointer<UInt8>
    let repaired: FeedRepair.Repaired

    /// Until `body` returns false or the text ends.
    func forEachChunk(size: Int, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        if repaired.edits.isEmpty {
            var offset = 0
            while offset < input.count {
                let end = min(offset + size, input.count)
                guard body(UnsafeBufferPointer(rebasing: input[offset..<end])) else { return }
                offset = end
            }
            return
        }
        var staging: [UInt8] = []
        staging.reserveCapacity(size)
        var going = true

        func emit(_ piece: UnsafeBufferPointer<UInt8>) {
            var piece = piece
            while going, !piece.isEmpty {
                let take = min(size - staging.count, piece.count)
                staging.append(contentsOf: UnsafeBufferPointer(rebasing: piece[..<take]))
                piece = UnsafeBufferPointer(rebasing: piece[take...])
                if staging.count == size { flush() }
            }
        }
        func flush() {
            guard going, !staging.isEmpty else { return }
            going = staging.withUnsafeBufferPointer(body)
            staging.removeAll(keepingCapacity: true)
        }

        repaired.replacements.withUnsafeBufferPointer { replacements in
            var position = 0
            for edit in repaired.edits where going {
                emit(UnsafeBufferPointer(rebasing: input[position..<edit.range.lowerBound]))
                emit(UnsafeBufferPointer(rebasing: replacements[edit.replacement]))
                position = edit.range.upperBound
            }
            emit(UnsafeBufferPointer(rebasing: input[position...]))
        }
        flush()
    }

    /// libxml2 stops at one with `XML_ERR_INVALID_CHAR`. Asked only of a document whose CDATA sections hold one: rare.
    func containsForbiddenCharacter() -> Bool {
        var found = false
        forEachChunk(size: 256 << 10) { chunk in
            found = chunk.contains(where: FeedBuilder.isForbidden)
            return !found
        }
        return found
    }
}
