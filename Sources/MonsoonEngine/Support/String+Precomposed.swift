extension String {
    /// The text in Unicode's composed form (NFC), from the standard library's own tables: names
    /// are kept so, as Linux tools and most servers write them, so that `café` sent decomposed
    /// (NFD, as macOS writes it) and composed names one file, not two look-alikes.
    package var precomposed: String {
        String(decoding: _nfcCodeUnits, as: UTF8.self)
    }
}
