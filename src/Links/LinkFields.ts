import { Schema, SchemaAST } from "effect"
import { coded, Invalid, lenient } from "../Platform/Coded.ts"
import type { ErrorCode } from "../Platform/ErrorCatalogue.ts"
import { DECIMAL } from "./InputValues.ts"
import { MAX_ALIAS_LENGTH, MIN_RAND_ALIAS_LENGTH } from "./Alias.ts"
import { MAX_TIMESTAMP } from "./LinkDates.ts"
import { MAX_LINK_TAGS } from "./LinkTags.ts"

/**
 * The types of E4's and E5's fields and of E12's operations, with every spelling that existing clients send and the service
 * accepts: what the OpenAPI document says of each field and what a derived client may send. A value
 * of another type does not fail decoding: it decodes to an `Invalid` with the field's code (see
 * `lenient` in `Platform/Coded.ts`), which the use case reports beside what its rules find in the
 * other fields. Rules beyond the type (URL syntax, alias characters, lengths counted in code points,
 * dates in the future, UTM values against the template) are the use case's (`LinkRules.ts`).
 */

/** A JSON integer from `min` to `max`, or its canonical decimal string ("301"; not "0301" or "3e2"). */
export const IntegerInput = (min: number, max: number) =>
  Schema.Union(
    Schema.Int.pipe(Schema.between(min, max)),
    Schema.compose(Schema.String.pipe(Schema.pattern(DECIMAL)), Schema.NumberFromString).pipe(Schema.int(), Schema.between(min, max))
  )

/** 0 or 1, "0" or "1". */
export const Bit = Schema.transformLiterals([0, false], [1, true], ["0", false], ["1", true])

/** 0 or 1, "0" or "1", false or true. */
export const Flag = Schema.Union(Schema.Boolean, Bit)

/**
 * An optional field: `null` means "not given" too; a value of another type is `Invalid` with `code`
 * (10153 for fields the specification gives no code; the use case words those problems itself).
 */
const optionalField = <A, I>(schema: Schema.Schema<A, I>, description: string, code: ErrorCode) =>
  Schema.optionalWith(lenient(code, Schema.NullOr(schema).annotations({ description })), { exact: true })

const UtmFieldsType = Schema.Record({ key: Schema.String, value: Schema.String })

/**
 * `utm_fields`: field codes to values. An object with a "__proto__" key is refused here: decoding
 * into an object would drop the key silently, where every other key that names no field of the
 * template is reported (10110).
 */
const UtmFields = Schema.compose(
  Schema.declare((input: unknown): input is object => typeof input === "object" && input !== null && !Object.hasOwn(input, "__proto__")),
  UtmFieldsType,
  { strict: false }
).annotations({ [SchemaAST.SurrogateAnnotationId]: UtmFieldsType.ast })

export const CreateLink = Schema.Struct({
  // Required: absent, it is `Invalid` with 10100 as well, so that the other fields are still read.
  url: Schema.optionalWith(
    lenient(10100, Schema.String.annotations({ description: "the long URL, http or https (http:// is assumed without a scheme)" })),
    { exact: true, default: () => Invalid.of(10100) }
  ),
  alias: optionalField(Schema.String, `1-${MAX_ALIAS_LENGTH} characters from A-Z a-z 0-9 - _ .`, 10102),
  // No code of its own in the specification: 10102 "alias is invalid", since it describes the alias.
  rand_alias_length: optionalField(
    IntegerInput(MIN_RAND_ALIAS_LENGTH, MAX_ALIAS_LENGTH),
    "length of the generated alias when no alias is given (default 6)",
    10102
  ),
  // Any other value of these two means 0, as it always has: decoded, it is an `Invalid` that the use case reads as 0.
  dupe_check: optionalField(Bit, "1: return the caller's existing active link to the same url if there is one", 10153),
  notes: optionalField(Schema.String, "at most 1000 characters", 10105),
  notify_on_click: optionalField(Flag, "e-mail the link's owner on each click", 10153),
  override_404_check: optionalField(Bit, "1: do not check whether the long URL answers 404", 10153),
  tags: optionalField(
    Schema.Array(Schema.Struct({ name: Schema.String, shared: Schema.optionalWith(Schema.NullOr(Schema.Boolean), { exact: true }) })).pipe(
      Schema.maxItems(MAX_LINK_TAGS)
    ),
    "tags to attach, created when the domain has none of that name (names 1-50 characters)",
    10107
  ),
  utm_template_id: optionalField(IntegerInput(1, Number.MAX_SAFE_INTEGER), "a UTM template of the domain", 10108),
  utm_fields: optionalField(UtmFields, "the template's field codes to values", 10110),
  archive_on: optionalField(IntegerInput(0, MAX_TIMESTAMP), "Unix timestamp in the future", 10113),
  delete_on: optionalField(IntegerInput(0, MAX_TIMESTAMP), "Unix timestamp in the future", 10111),
  redirect_type: optionalField(
    Schema.Union(Schema.Literal(301, 307), Schema.transformLiterals(["301", 301], ["307", 307])),
    "301 (default) or 307",
    10115
  )
}).annotations({
  // The document marks url required, as it is; decoding takes its absence as an `Invalid` (above).
  jsonSchema: { required: ["url"] }
})

export type CreateLinkInput = typeof CreateLink.Type

export const ValidateLink = Schema.Struct({
  url: Schema.optionalWith(lenient(10100, Schema.String.annotations({ description: "the long URL, URL-encoded or plain" })), {
    exact: true,
    default: () => Invalid.of(10100)
  })
}).annotations({ jsonSchema: { required: ["url"] } })

/** `op` of an E12 operation: "replace", the default when absent or null; anything else is `Invalid` with 10130. */
const Op = Schema.optionalWith(lenient(10130, Schema.NullOr(Schema.Literal("replace"))), { exact: true })

/** A value that may be left out or null, which clears the field; of another type, `Invalid` with `code`. */
const clearable = <A, I>(code: ErrorCode, schema: Schema.Schema<A, I>) =>
  Schema.optionalWith(lenient(code, Schema.NullOr(schema)), { exact: true })

const Timestamp = IntegerInput(0, MAX_TIMESTAMP).annotations({ description: "Unix timestamp in the future; null or no value clears it" })

export const PATCH_PATHS = ["/alias", "/notes", "/notify_on_click", "/url", "/delete_on", "/archive_on"] as const
export type PatchPath = (typeof PATCH_PATHS)[number]

/**
 * The E12 operations the service takes, one per path, each value with its path's type and code.
 * A required value (a plain `lenient` property) that is absent or null is `Invalid` too.
 */
const PathOperations = [
  Schema.Struct({ op: Op, path: Schema.Literal("/alias"), value: lenient(10133, Schema.String) }),
  Schema.Struct({ op: Op, path: Schema.Literal("/notes"), value: clearable(10134, Schema.String) }),
  Schema.Struct({ op: Op, path: Schema.Literal("/notify_on_click"), value: lenient(10153, Flag) }),
  Schema.Struct({ op: Op, path: Schema.Literal("/url"), value: lenient(10132, Schema.String) }),
  Schema.Struct({ op: Op, path: Schema.Literal("/delete_on"), value: clearable(10111, Timestamp) }),
  Schema.Struct({ op: Op, path: Schema.Literal("/archive_on"), value: clearable(10113, Timestamp) })
] as const

/** An operation on no path of the service's (or none): its path is `Invalid` (10131), its value is not read. */
const OtherPath = Schema.Struct({ op: Op, path: lenient(10131, Schema.Never) })

/**
 * One E12 operation, by path. Decoding never fails on an object: a wrong `op`, `path` or `value`
 * is an `Invalid` in its place, which the patch reader (`LinkPatch.ts`) reports naming the place
 * (`given in 0.op`). The OpenAPI document shows the operations the service takes, not `OtherPath`.
 */
export const LinkOperation = Schema.Union(...PathOperations, OtherPath).annotations({
  [SchemaAST.SurrogateAnnotationId]: Schema.Union(...PathOperations).ast
})

export type LinkOperation = typeof LinkOperation.Type

/** E12's body: 1 to 6 operations. A body that is not an array is 10130, an element that is not an object too. */
export const UpdateLink = coded(10130)(Schema.Array(lenient(10130, LinkOperation))).annotations({ jsonSchema: { minItems: 1, maxItems: 6 } })
