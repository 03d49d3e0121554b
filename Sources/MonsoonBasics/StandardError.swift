import Glibc

/// Lines for people on standard error, each in one write(2): unbuffered, whole even when
/// threads write at once.
package enum StandardError {
    package static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }   // nowhere to tell of a closed stderr
                offset += written
            }
        }
    }
}
