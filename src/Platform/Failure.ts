import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { type Cause, Schema } from "effect"
import { ErrorCatalogue, type ErrorCode, type ErrorStatus, formatMessage } from "./ErrorCatalogue.ts"

/** A failure as its use case fails with it. */
export interface FailureOf<Tag extends string, Code extends ErrorCode> extends Cause.YieldableError {
  readonly _tag: Tag
  readonly message: string
  readonly code: Code
  readonly status: ErrorStatus
}

/**
 * What `Failure` makes, named so that declaration files can say it: a schema of the failure, its
 * constructor, its code and status, and `of` for a message from the catalogue.
 */
export interface FailureConstructor<Tag extends string, Code extends ErrorCode>
  extends Schema.Schema<FailureOf<Tag, Code>, { readonly _tag: Tag; readonly message: string }> {
  new (props: { readonly message: string }): FailureOf<Tag, Code>
  readonly code: Code
  readonly status: ErrorStatus
  of<T>(this: new (props: { readonly message: string }) => T, ...values: ReadonlyArray<string>): T
}

/**
 * A failure of a use case, one class per failure (`class DomainExists extends Failure("DomainExists",
 * 10401) {}`): it carries its catalogue code, and so its status, and its message, made from the
 * catalogue's template by `of(...values)`. Use cases fail with these; only the API edge turns them
 * into `{errors: [{code, message}]}`.
 */
export const Failure = <const Tag extends string, const Code extends ErrorCode>(
  tag: Tag,
  code: Code,
  /** Where the API answers this failure with another status than its code's catalogue entry. */
  status: ErrorStatus = ErrorCatalogue[code].status
): FailureConstructor<Tag, Code> =>
  class extends Schema.TaggedError<FailureOf<Tag, Code>>()(tag, { message: Schema.String }) {
    static readonly code: Code = code
    static readonly status: ErrorStatus = status
    static of<T>(this: new (props: { readonly message: string }) => T, ...values: ReadonlyArray<string>): T {
      return new this({ message: formatMessage(ErrorCatalogue[code].message, values) })
    }
    get code(): Code {
      return code
    }
    get status(): ErrorStatus {
      return status
    }
  }

export interface CodedFailure {
  readonly _tag: string
  readonly code: ErrorCode
  readonly status: ErrorStatus
  readonly message: string
}

export const isCodedFailure = (value: unknown): value is CodedFailure =>
  typeof value === "object" &&
  value !== null &&
  "_tag" in value &&
  "code" in value &&
  typeof value.code === "number" &&
  value.code in ErrorCatalogue &&
  "status" in value &&
  typeof value.status === "number" &&
  "message" in value &&
  typeof value.message === "string"

interface FailureClass<E, I> extends Schema.Schema<E, I> {
  new (props: { readonly message: string }): E
  readonly code: ErrorCode
  readonly status: ErrorStatus
}

/**
 * How an endpoint declares that it can answer `failure`: its wire body, with its code as a literal
 * (so the OpenAPI document and a derived client know it) and its catalogue status.
 */
export const answers = <E extends { readonly message: string }, I>(failure: FailureClass<E, I>) => {
  const entry = ErrorCatalogue[failure.code]
  const Wire = Schema.Struct({
    errors: Schema.Tuple(Schema.Struct({ code: Schema.Literal(failure.code), message: Schema.String }))
  })
  return Schema.transform(Wire, Schema.typeSchema(failure), {
    strict: true,
    decode: (wire) => new failure({ message: wire.errors[0].message }),
    encode: (error) => ({ errors: [{ code: failure.code, message: error.message }] as const })
  }).annotations(HttpApiSchema.annotations({ status: failure.status, description: `${failure.code}: ${entry.description}` }))
}

const Problem = Schema.Struct({ code: Schema.Int, message: Schema.String })

/**
 * What is wrong with a request's input, every problem with its own code, reported at once (the
 * status is the first one's): from decoding (a value of the wrong type) or from the use case's
 * rules (a value of the right type that the rules refuse).
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  problems: Schema.NonEmptyArray(Problem)
}) {
  static of(first: CodedFailure | ErrorCode, ...rest: ReadonlyArray<CodedFailure | ErrorCode>): InvalidInput {
    const item = (problem: CodedFailure | ErrorCode) =>
      typeof problem === "number"
        ? { code: problem, message: formatMessage(ErrorCatalogue[problem].message, []) }
        : { code: problem.code, message: problem.message }
    return new InvalidInput({ problems: [item(first), ...rest.map(item)] })
  }
}

/**
 * How an endpoint declares the input problems it can answer, by code: a 400 body whose items carry
 * one of these codes.
 */
export const answersInvalidInput = (...codes: readonly [ErrorCode, ...Array<ErrorCode>]) =>
  Schema.transform(
    Schema.Struct({ errors: Schema.NonEmptyArray(Schema.Struct({ code: Schema.Literal(...codes), message: Schema.String })) }),
    Schema.typeSchema(InvalidInput),
    {
      strict: true,
      decode: (wire) => new InvalidInput({ problems: wire.errors }),
      encode: (error) => {
        const item = (problem: typeof Problem.Type) => ({
          code: codes.find((code) => code === problem.code) ?? codes[0],
          message: problem.message
        })
        const [first, ...rest] = error.problems
        return { errors: [item(first), ...rest.map(item)] as const }
      }
    }
  ).annotations({
    // One schema per set of codes: under one shared name, the document would show one endpoint's codes for all.
    identifier: `InvalidInput${codes.join("_")}`,
    ...HttpApiSchema.annotations({ status: 400, description: `Invalid input: ${codes.join(", ")}` })
  })
