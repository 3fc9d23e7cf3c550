import { Context, Effect, Layer } from "effect"

/**
 * What follows a committed change of a link's destination URL in features above Links (the preview
 * tags taken from the destination: `SmartLinks/PreviewTags.ts`). Links cannot import them, so they
 * provide this under it; `layerNone` for Links without them.
 */
export class DestinationChanged extends Context.Tag("DestinationChanged")<DestinationChanged, (linkId: number) => Effect.Effect<void>>() {
  static readonly layerNone = Layer.succeed(this, () => Effect.void)
}
