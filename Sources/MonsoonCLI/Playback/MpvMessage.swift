import FoundationEssentials

/// The JSON of mpv's IPC protocol: the commands Monsoon sends and the events and answers it reads.
enum MpvMessage {
    /// One argument of a command: text or a number (mpv wants an observed property's id as an integer).
    enum Argument: Encodable, ExpressibleByStringLiteral {
        case text(String)
        case integer(Int)
        case number(Double)

        init(stringLiteral value: String) {
            self = .text(value)
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .integer(let integer): try container.encode(integer)
            case .number(let number): try container.encode(number)
            }
        }
    }

    struct Command: Encodable {
        let command: [Argument]
        let request_id: Int?
    }

    /// An event (`event` set) or the answer to a command (`error` set, `request_id` when it had one).
    struct Incoming: Decodable {
        let event: String?
        let error: String?
        let request_id: Int?
        let name: String?
        let reason: String?
        let data: Value?
    }

    /// A property's value, as far as Monsoon reads it.
    enum Value: Decodable {
        case flag(Bool)
        case number(Double)
        case other

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) {   // not a flag: maybe a number
                self = .flag(flag)
            } else if let number = try? container.decode(Double.self) {   // neither: a value Monsoon does not read
                self = .number(number)
            } else {
                self = .other
            }
        }

        var number: Double? {
            if case .number(let number) = self { return number }
            return nil
        }

        var flag: Bool? {
            if case .flag(let flag) = self { return flag }
            return nil
        }
    }
}
