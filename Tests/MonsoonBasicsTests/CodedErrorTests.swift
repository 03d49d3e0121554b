import MonsoonBasics
import Testing

/// Two domains as the modules declare theirs: one of a code and a message, one with details.
private enum PlainDomain: ErrorDomain {}
private typealias PlainError = CodedError<PlainDomain>
extension PlainError.Code {
    fileprivate static var notFound: Self { Self(rawValue: "notFound") }
    fileprivate static var ambiguous: Self { Self(rawValue: "ambiguous") }
}

private enum DetailedDomain: ErrorDomain {
    typealias CodeValue = Int32
    struct Details: Hashable, Sendable {
        var httpStatus: Int?
    }
}
private typealias DetailedError = CodedError<DetailedDomain>
extension DetailedError.Code {
    fileprivate static var busy: Self { Self(rawValue: 5) }
}

/// `CodedError` is every domain's error: codes by name per domain, the message as its
/// description, and the domain's details as fields of its own.
@Suite struct CodedErrorTests {
    @Test func anErrorDescribesItselfByItsMessageAndItsCodeByItsName() {
        let error = PlainError(.notFound, "no podcast matches 'x'")
        #expect("\(error)" == "no podcast matches 'x'")
        #expect(error.code == .notFound && error.code != .ambiguous)
        #expect(error.code.description == "notFound")
        #expect(PlainError.Code(rawValue: "fromANewerMonsoon").rawValue == "fromANewerMonsoon", "unknown codes are kept")
        #expect(DetailedError.Code.busy.description == "5")
    }

    @Test func aCatchTellsTheDomainsApart() {
        func fail() throws { throw DetailedError(.busy, "busy", details: .init(httpStatus: nil)) }
        var caught = ""
        do {
            try fail()
        } catch let error as PlainError {
            caught = "plain \(error.code)"
        } catch let error as DetailedError {
            caught = "detailed \(error.code)"
        } catch {
            caught = "other"
        }
        #expect(caught == "detailed 5")
    }

    @Test func detailsReadAndWriteAsTheErrorsOwnFieldsAndCountInEquality() {
        var error = DetailedError(.busy, "busy", details: .init(httpStatus: 503))
        #expect(error.httpStatus == 503)
        error.httpStatus = 429
        #expect(error.details.httpStatus == 429)
        #expect(error != DetailedError(.busy, "busy", details: .init(httpStatus: 503)))
        #expect(Set([error, error]).count == 1)
    }
}
