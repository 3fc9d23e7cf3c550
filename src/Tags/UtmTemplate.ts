import { Schema } from "effect"

export const MAX_UTM_FIELDS = 20

const text = (what: string, max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => s.trim() !== "", { message: () => `${what} must not be empty` }),
    Schema.maxLength(max, { message: () => `${what} must have at most ${max} characters` })
  )

export const UtmFieldCode = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9_]{1,64}$/, {
    message: () => "field_code must be 1 to 64 characters from a-z, 0-9 and _ (like utm_source)"
  })
)

/** One query parameter a UTM template adds to a link's redirect URL. */
export const UtmField = Schema.Struct({
  label: text("label", 100),
  field_code: UtmFieldCode,
  type: text("type", 50),
  required: Schema.Boolean
}).annotations({ identifier: "UtmField", message: () => "a field must be an object {label, field_code, type, required}" })
export type UtmField = typeof UtmField.Type

export const UtmFields = Schema.Array(UtmField)
  .annotations({ message: () => "must be an array of objects {label, field_code, type, required}" })
  .pipe(
    Schema.minItems(1, { message: () => "a template needs at least one field" }),
    Schema.maxItems(MAX_UTM_FIELDS, { message: () => `a template has at most ${MAX_UTM_FIELDS} fields` }),
    Schema.filter((fields) => {
      const seen = new Set<string>()
      for (const [index, field] of fields.entries()) {
        if (seen.has(field.field_code)) return { path: [index, "field_code"], message: `field_code "${field.field_code}" appears twice` }
        seen.add(field.field_code)
      }
      return undefined
    })
  )

export const UtmTemplateName = text("the template name", 100)

export class UtmTemplate extends Schema.Class<UtmTemplate>("UtmTemplate")({
  id: Schema.Int,
  name: Schema.String,
  fields: UtmFields
}) {}
