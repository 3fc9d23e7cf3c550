import { Schema } from "effect"

/** The last second a window bound may be (9999-12-31T23:59:59Z), as every date the API takes. */
export const LAST_SECOND = 253_402_300_799

/**
 * A window bound as text (`from_unix`, `to_unix` of the reports and the clicks export, the CLI's
 * `--from`, `--to`): a whole Unix second from 0 to LAST_SECOND.
 */
export const UnixSecond = Schema.NumberFromString.pipe(Schema.int(), Schema.nonNegative(), Schema.lessThanOrEqualTo(LAST_SECOND))
