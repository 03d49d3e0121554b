import FoundationEssentials

/// What a document that is not a feed looks like, for messages ("an image (JPEG)", "a PDF document"): from its magic
/// numbers, else the media type the server gave. Asked only once a document failed to parse, so a feed never pays.
enum DocumentKind {
    /// Nil matches any byte.
    private static let signatures: [(bytes: [UInt8?], kind: String)] = [
        ([0xFF, 0xD8, 0xFF], "an image (JPEG)"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "an image (PNG)"),
        (ascii("GIF8"), "an image (GIF)"),
        (ascii("RIFF") + [nil, nil, nil, nil] + ascii("WEBP"), "an image (WebP)"),
        (ascii("RIFF") + [nil, nil, nil, nil] + ascii("WAVE"), "audio (WAV)"),
        (ascii("RIFF") + [nil, nil, nil, nil] + ascii("AVI "), "a video (AVI)"),
        (ascii("ID3"), "audio (MP3)"),
        // MPEG audio frames without an ID3 tag (MPEG-1/2 layer III) and AAC in ADTS frames.
        ([0xFF, 0xFB], "audio (MP3)"), ([0xFF, 0xFA], "audio (MP3)"), ([0xFF, 0xF3], "audio (MP3)"), ([0xFF, 0xF2], "audio (MP3)"),
        ([0xFF, 0xF1], "audio (AAC)"), ([0xFF, 0xF9], "audio (AAC)"),
        (ascii("OggS"), "audio (Ogg)"),
        (ascii("fLaC"), "audio (FLAC)"),
        ([nil, nil, nil, nil] + ascii("ftypM4A"), "audio (M4A)"),
        ([nil, nil, nil, nil] + ascii("ftypM4B"), "audio (an M4B audiobook)"),
        ([nil, nil, nil, nil] + ascii("ftypqt"), "a video (QuickTime)"),
        ([nil, nil, nil, nil] + ascii("ftyp"), "audio or video (MPEG-4)"),
        ([0x1A, 0x45, 0xDF, 0xA3], "a video (Matroska or WebM)"),
        (ascii("%PDF"), "a PDF document"),
        (ascii("PK") + [0x03, 0x04], "a ZIP archive"),
        ([0x1F, 0x8B], "a gzip-compressed file (decompress it first)"),
        (ascii("7z") + [0xBC, 0xAF, 0x27, 0x1C], "a 7-Zip archive"),
        (ascii("Rar!"), "a RAR archive"),
        ([0x7F] + ascii("ELF"), "a program (ELF)"),
    ]

    private static func ascii(_ text: StaticString) -> [UInt8?] {
        UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount).map { $0 }
    }

    /// Nil when the bytes may be text.
    static func sniff(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        for (signature, kind) in signatures where signature.count <= bytes.count {
            if zip(signature, bytes).allSatisfy({ $0 == nil || $0 == $1 }) { return kind }
        }
        let start = bytes.firstIndex { !ByteScanner.isSpace($0) } ?? bytes.count
        if start < bytes.count, bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "[") { return "a JSON document" }
        // NUL bytes and other controls mean binary, unless the text is UTF-16 or UTF-32: a byte order
        // mark, or (ASCII in UTF-16) NULs in every other byte, all at even or all at odd offsets.
        let head = UnsafeBufferPointer(rebasing: bytes[..<min(bytes.count, 512)])
        var controls = 0, evenNULs = 0, oddNULs = 0
        for (offset, byte) in head.enumerated() where byte < 0x20 && !ByteScanner.isSpace(byte) {
            controls += 1
            if byte == 0 { if offset % 2 == 0 { evenNULs += 1 } else { oddNULs += 1 } }
        }
        let byteOrderMark = head.count >= 2 && ((head[0] == 0xFE && head[1] == 0xFF) || (head[0] == 0xFF && head[1] == 0xFE))
            || head.starts(with: [0x00, 0x00, 0xFE, 0xFF])
        let wide = byteOrderMark || (min(evenNULs, oddNULs) == 0 && max(evenNULs, oddNULs) * 4 >= head.count)
        return !wide && (evenNULs + oddNULs > 0 || controls * 10 > head.count) ? "a binary file, not text" : nil
    }

    /// Nil for types that may be feeds (XML, text, HTML, or a generic binary type).
    static func describe(mediaType: String) -> String? {
        let essence = mediaType.split(separator: ";").first.map { $0.trimmingBlanks().lowercased() } ?? ""
        let parts = essence.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return nil }
        let subtype = parts[1].hasPrefix("x-") ? String(parts[1].dropFirst(2)) : parts[1]
        switch (parts[0], subtype) {
        case ("image", "jpeg"): return "an image (JPEG)"
        case ("image", _): return "an image (\(subtype.uppercased()))"
        case ("audio", "mpeg"), ("audio", "mp3"): return "audio (MP3)"
        case ("audio", _): return "audio (\(subtype))"
        case ("video", _): return "a video (\(subtype))"
        case ("application", "pdf"): return "a PDF document"
        case ("application", "zip"): return "a ZIP archive"
        case ("application", "json"): return "a JSON document"
        default: return nil
        }
    }
}
