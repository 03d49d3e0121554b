import FoundationEssentials

/// Small files written whole in one pass by the disk worker (`WholeFile`), instead of through a
/// part: the part is asked for only when the body will not come whole into the attempt's buffer.
extension EngineCore {
    /// Asks the disk worker for a part (held back until now, or not).
    func askForPart(_ preparation: BodyPreparation) {
        let id = preparation.row.request.id
        persistence.askForPart(preparation)
        if persistence.persistent { records.saving(id) }
    }

    /// The disk worker's answers for whole files (`Placements.wholesWritten`).
    func wholesWritten(_ answers: [WholeFile.Answer]) {
        scheduler.needsScheduling = true   // a start they held back may go now
        for landed in placements.wholesWritten(answers, records: &records, space: space, persistent: persistence.persistent) {
            placementFinished(landed.id, landed.result, saved: landed.saved, transient: landed.transient)
            records.evictIfAtRest(landed.id)
        }
    }
}
