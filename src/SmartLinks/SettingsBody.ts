import { Clock, Effect, Either, ParseResult, Schema, SchemaAST } from "effect"
import type { InvalidInput } from "../Platform/Failure.ts"
import { SettingsInput } from "./SettingsModel.ts"
import { type ReadSettings, readSettings } from "./SettingsRules.ts"

export type SettingsValues = typeof SettingsInput.Type

/**
 * A PUT body the settings rules refused, with every problem of it (each its code and place). Only
 * decoding makes one; a client encoding one fails.
 */
export class RefusedSettings {
  private constructor(readonly refusal: InvalidInput) {}
  static of(refusal: InvalidInput): RefusedSettings {
    return new RefusedSettings(refusal)
  }
}

const RefusedValue = Schema.declare((value: unknown): value is RefusedSettings => value instanceof RefusedSettings, {
  identifier: "RefusedSettings"
})

/**
 * The PUT body: typed as `SettingsInput` for a client (and the OpenAPI document), read by
 * `SettingsRules.ts` when decoded. Its decoding never fails: a body the rules refuse decodes to
 * `RefusedSettings`, which the use case answers after checking the link, as it answers a missing
 * link first. A schema decode would stop at the shapes and name no place (`rules[2].split[0].weight`),
 * and a type error in one rule would hide the rule errors of the others.
 */
export const SettingsBody: Schema.Schema<SettingsValues | RefusedSettings, unknown> = Schema.transformOrFail(
  Schema.Unknown,
  // RefusedSettings first: as an object it would also pass for settings with no field given.
  Schema.Union(RefusedValue, Schema.typeSchema(SettingsInput)),
  {
    strict: true,
    decode: (raw) =>
      Effect.map(Clock.currentTimeMillis, (millis) =>
        Either.match(readSettings(raw, Math.floor(millis / 1000)), {
          onLeft: RefusedSettings.of,
          onRight: ({ stored, password }): SettingsValues => (password === undefined ? stored : { ...stored, password })
        })
      ),
    encode: (value, _, ast) =>
      value instanceof RefusedSettings
        ? ParseResult.fail(new ParseResult.Forbidden(ast, value, "refused settings cannot be sent"))
        : ParseResult.encodeUnknown(SettingsInput)(value)
  }
).annotations({ [SchemaAST.SurrogateAnnotationId]: SettingsInput.ast })

/** A decoded body as the store takes it: the settings to store and the password to hash. */
export const readOf = ({ password, ...stored }: SettingsValues): ReadSettings => ({ stored, password })
