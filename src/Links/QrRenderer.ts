import { Data, Effect, Schema } from "effect"
import QRCode from "qrcode"

export const QrFormat = Schema.Literal("png", "svg", "eps")
export type QrFormat = typeof QrFormat.Type

export const QR_CONTENT_TYPES: { readonly [F in QrFormat]: string } = {
  png: "image/png",
  svg: "image/svg+xml",
  eps: "application/postscript"
}

/** The most characters any QR code holds (version 40, level L, alphanumeric). */
export const MAX_QR_TEXT_LENGTH = 4296
/** Quiet zone around the symbol, in modules; 4 is the minimum the QR standard asks for. */
export const QR_MARGIN = 4
/** PNG pixels per module: whole pixels keep module edges sharp, and a short link (version 3–5) gives 264–296 px. */
export const PNG_SCALE = 8
/** EPS points per module (1 pt = 1/72 in): a version 4 code is 41 × 4 pt ≈ 5.8 cm wide. */
export const EPS_SCALE = 4

export interface QrImage {
  readonly contentType: string
  readonly body: Uint8Array
}

/**
 * The text does not fit a QR code at error correction level M. Raised as a defect, not a failure: the only
 * caller encodes its own short links, far below the limit, so an over-long text is a programming error.
 */
export class QrTextTooLong extends Data.TaggedError("QrTextTooLong")<{
  readonly length: number
  readonly reason: string
}> {}

/** A horizontal run of dark modules on one row, in module coordinates without the quiet zone. */
export interface DarkRun {
  readonly row: number
  readonly col: number
  readonly width: number
}

export interface QrMatrix {
  readonly size: number
  readonly version: number
  readonly maskPattern: QRCode.QRCodeMaskPattern | undefined
  readonly isDark: (row: number, col: number) => boolean
}

export const darkRuns = (matrix: QrMatrix): ReadonlyArray<DarkRun> => {
  const runs: Array<DarkRun> = []
  for (let row = 0; row < matrix.size; row++) {
    let col = 0
    while (col < matrix.size) {
      if (!matrix.isDark(row, col)) {
        col++
        continue
      }
      const start = col
      while (col < matrix.size && matrix.isDark(row, col)) col++
      runs.push({ row, col: start, width: col - start })
    }
  }
  return runs
}

const encode = (text: string): Effect.Effect<QrMatrix> =>
  text.length > MAX_QR_TEXT_LENGTH
    ? Effect.die(new QrTextTooLong({ length: text.length, reason: `more than ${MAX_QR_TEXT_LENGTH} characters` }))
    : Effect.try({
        try: () => {
          const qr = QRCode.create(text, { errorCorrectionLevel: "M" })
          const { modules } = qr
          return {
            size: modules.size,
            version: qr.version,
            maskPattern: qr.maskPattern,
            isDark: (row: number, col: number) => modules.get(row, col) === 1
          }
        },
        // Texts within the character limit can still exceed level M (at most 2331 bytes in byte mode).
        catch: (error) => new QrTextTooLong({ length: text.length, reason: String(error) })
      }).pipe(Effect.orDie)

const renderPng = (text: string, matrix: QrMatrix): Effect.Effect<Uint8Array> =>
  Effect.promise(() =>
    QRCode.toBuffer(text, {
      errorCorrectionLevel: "M",
      // Pinning the version and mask makes the PNG show exactly the matrix the other formats draw.
      version: matrix.version,
      ...(matrix.maskPattern === undefined ? {} : { maskPattern: matrix.maskPattern }),
      margin: QR_MARGIN,
      scale: PNG_SCALE
    })
  ).pipe(Effect.map((buffer) => new Uint8Array(buffer)))

/** One path of unit-high rectangles in module units; the viewBox includes the quiet zone. */
export const svgFromMatrix = (matrix: QrMatrix): string => {
  const side = matrix.size + 2 * QR_MARGIN
  const pixels = side * PNG_SCALE
  const d = darkRuns(matrix)
    .map((run) => `M${run.col + QR_MARGIN} ${run.row + QR_MARGIN}h${run.width}v1h-${run.width}z`)
    .join("")
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${pixels}" height="${pixels}" ` +
    `viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges">\n` +
    `<rect width="${side}" height="${side}" fill="#ffffff"/>\n` +
    `<path fill="#000000" d="${d}"/>\n` +
    `</svg>\n`
  )
}

/**
 * EPSF-3.0 drawn in module units after `scale`; PostScript's y axis points up, so row 0 is drawn at the top.
 * Each dark run is one `x y width R` line, R filling a rectangle one module high.
 */
export const epsFromMatrix = (matrix: QrMatrix): string => {
  const side = matrix.size + 2 * QR_MARGIN
  const points = side * EPS_SCALE
  const lines = [
    "%!PS-Adobe-3.0 EPSF-3.0",
    `%%BoundingBox: 0 0 ${points} ${points}`,
    `%%HiResBoundingBox: 0 0 ${points} ${points}`,
    "%%Creator: link-shortener",
    "%%Title: QR code",
    "%%LanguageLevel: 2",
    "%%Pages: 1",
    "%%EndComments",
    "%%BeginProlog",
    "/R { 1 rectfill } bind def",
    "%%EndProlog",
    "%%Page: 1 1",
    "gsave",
    `${EPS_SCALE} ${EPS_SCALE} scale`,
    "1 setgray",
    `0 0 ${side} ${side} rectfill`,
    "0 setgray",
    ...darkRuns(matrix).map((run) => `${run.col + QR_MARGIN} ${side - QR_MARGIN - 1 - run.row} ${run.width} R`),
    "grestore",
    "showpage",
    "%%Trailer",
    "%%EOF",
    ""
  ]
  return lines.join("\n")
}

const utf8 = (text: string) => new TextEncoder().encode(text)

/** QR codes at error correction level M; every format draws the same module matrix with a 4-module quiet zone. */
export class QrRenderer extends Effect.Service<QrRenderer>()("QrRenderer", {
  succeed: {
    /** Dies with QrTextTooLong when `text` does not fit a QR code at level M. */
    render: (text: string, format: QrFormat): Effect.Effect<QrImage> =>
      Effect.gen(function* () {
        const matrix = yield* encode(text)
        const body =
          format === "png"
            ? yield* renderPng(text, matrix)
            : utf8(format === "svg" ? svgFromMatrix(matrix) : epsFromMatrix(matrix))
        return { contentType: QR_CONTENT_TYPES[format], body }
      })
  }
}) {}
