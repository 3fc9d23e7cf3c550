import { Failure } from "../Platform/Failure.ts"

/** The clicks export needs both bounds of its window. */
export class ExportWindowMissing extends Failure("ExportWindowMissing", 10832) {}

/** `to_unix` not after `from_unix`. */
export class ExportWindowReversed extends Failure("ExportWindowReversed", 10833) {}

/** A window longer than one calendar year. */
export class ExportWindowTooLong extends Failure("ExportWindowTooLong", 10834) {}

/** Exports are for account admins and admins of the domain; another user of the account gets this. */
export class ExportForbidden extends Failure("ExportForbidden", 10003) {}
