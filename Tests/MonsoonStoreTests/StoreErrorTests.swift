import CSQLite
import Testing
import MonsoonStore

/// `StoreError.Code` is an open set of SQLite's codes with names: a caller decides on a code's
/// primary, whatever extended code SQLite gave.
@Suite struct StoreErrorTests {
    @Test func aRefusedChangeCarriesSQLitesExtendedCodeAndItsPrimaryByName() throws {
        let database = try Database(path: ":memory:")
        try database.execute("CREATE TABLE items (name TEXT PRIMARY KEY)")
        try database.run("INSERT INTO items VALUES (?)", "a")
        let error = #expect(throws: StoreError.self) { try database.run("INSERT INTO items VALUES (?)", "a") }
        #expect(error?.code == StoreError.Code(rawValue: SQLITE_CONSTRAINT | 6 << 8))   // SQLITE_CONSTRAINT_PRIMARYKEY, a macro Swift does not import
        #expect(error?.code.primary == .constraint)
        #expect(error?.isConstraintViolation == true)
        #expect(error?.isBusy == false)
    }

    @Test func monsoonsOwnCodesAreTheirOwnPrimary() {
        #expect(StoreError.Code.newerSchema.primary == .newerSchema)
        #expect(StoreError(code: SQLITE_BUSY | 2 << 8, message: "busy").isBusy)   // SQLITE_BUSY_SNAPSHOT
        #expect(StoreError(code: SQLITE_IOERR | 12 << 8, message: "x").code.primary == .ioError)
    }
}
