import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Schema } from "effect"
import { inflateSync } from "node:zlib"
import QRCode from "qrcode"
import {
  EPS_SCALE,
  MAX_QR_TEXT_LENGTH,
  PNG_SCALE,
  QR_CONTENT_TYPES,
  QR_MARGIN,
  QrFormat,
  QrRenderer,
  QrTextTooLong
} from "../src/Links/QrRenderer.ts"

const LINK = "https://sho.rt/abc123?qr=1"
const OTHER_LINK = "https://sho.rt/xyz789?qr=1"
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

type Matrix = ReadonlyArray<ReadonlyArray<boolean>>

const libraryMatrix = (text: string): Matrix => {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: "M" })
  return Array.from({ length: modules.size }, (_, row) =>
    Array.from({ length: modules.size }, (_, col) => modules.get(row, col) === 1)
  )
}

const decode = (body: Uint8Array) => new TextDecoder().decode(body)

const render = (text: string, format: QrFormat) =>
  Effect.flatMap(QrRenderer, (qr) => qr.render(text, format)).pipe(Effect.provide(QrRenderer.Default))

interface ParsedEps {
  readonly boundingBox: ReadonlyArray<number>
  readonly scale: number
  readonly cellsDrawn: number
  readonly matrix: Matrix
}

/** Reads back the runs the renderer wrote (`x y width R`, y growing upwards) into a module matrix. */
const parseEps = (eps: string, size: number): ParsedEps => {
  const box = /^%%BoundingBox: (\d+) (\d+) (\d+) (\d+)$/m.exec(eps)
  const scale = /^(\d+) (\d+) scale$/m.exec(eps)
  if (box === null || scale === null) throw new Error("no BoundingBox or scale")
  const side = size + 2 * QR_MARGIN
  const matrix = Array.from({ length: size }, () => Array.from({ length: size }, () => false))
  let cellsDrawn = 0
  for (const [, x, y, width] of eps.matchAll(/^(\d+) (\d+) (\d+) R$/gm)) {
    const row = side - QR_MARGIN - 1 - Number(y)
    const col = Number(x) - QR_MARGIN
    for (let i = 0; i < Number(width); i++) {
      const line = matrix[row]
      if (line === undefined || col + i >= size || line[col + i] === true) throw new Error(`bad run ${x} ${y} ${width}`)
      line[col + i] = true
    }
    cellsDrawn += Number(width)
  }
  return { boundingBox: box.slice(1).map(Number), scale: Number(scale[1]), cellsDrawn, matrix }
}

/** Reads back the `M x y h w v1 h-w z` runs of the SVG path into a module matrix. */
const parseSvg = (svg: string, size: number): Matrix => {
  const matrix = Array.from({ length: size }, () => Array.from({ length: size }, () => false))
  for (const [, x, y, width] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-\3z/g)) {
    for (let i = 0; i < Number(width); i++) {
      const line = matrix[Number(y) - QR_MARGIN]
      if (line === undefined) throw new Error(`bad run ${x} ${y} ${width}`)
      line[Number(x) - QR_MARGIN + i] = true
    }
  }
  return matrix
}

/** Grey level of every pixel of an 8-bit RGBA or greyscale PNG: the IDAT chunks inflated and unfiltered. */
const pngPixels = (png: Uint8Array) => {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength)
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  const channels = new Map([[0, 1], [2, 3], [4, 2], [6, 4]]).get(png[25] ?? -1)
  if (png[24] !== 8 || channels === undefined) throw new Error("unsupported PNG layout")
  const idat: Array<Uint8Array> = []
  for (let at = 8; at < png.length; ) {
    const length = view.getUint32(at)
    if (new TextDecoder().decode(png.subarray(at + 4, at + 8)) === "IDAT") idat.push(png.subarray(at + 8, at + 8 + length))
    at += 12 + length
  }
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const pixels = new Uint8Array(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i] ?? 0
      const a = i >= channels ? (pixels[y * stride + i - channels] ?? 0) : 0
      const b = y > 0 ? (pixels[(y - 1) * stride + i] ?? 0) : 0
      const c = i >= channels && y > 0 ? (pixels[(y - 1) * stride + i - channels] ?? 0) : 0
      const p = a + b - c
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a : Math.abs(p - b) <= Math.abs(p - c) ? b : c
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter ?? -1]
      if (predictor === undefined) throw new Error(`bad filter ${filter}`)
      pixels[y * stride + i] = (x + predictor) & 0xff
    }
  }
  return { width, isDark: (x: number, y: number) => (pixels[y * stride + x * channels] ?? 255) < 128 }
}

const darkCount = (matrix: Matrix) => matrix.flat().filter(Boolean).length

describe("QrRenderer (E14)", () => {
  it.effect("QrFormat accepts png, svg and eps only, each with its content type", () =>
    Effect.sync(() => {
      const is = Schema.is(QrFormat)
      expect(["png", "svg", "eps"].every(is)).toBe(true)
      expect(["PNG", "jpg", "", "pdf"].some(is)).toBe(false)
      expect(QR_CONTENT_TYPES).toEqual({ png: "image/png", svg: "image/svg+xml", eps: "application/postscript" })
    })
  )

  it.effect("PNG has the signature and an IHDR of (modules + 8) × 8 px square", () =>
    Effect.gen(function* () {
      const image = yield* render(LINK, "png")
      expect(image.contentType).toBe("image/png")
      expect(Array.from(image.body.subarray(0, 8))).toEqual(PNG_SIGNATURE)
      const view = new DataView(image.body.buffer, image.body.byteOffset, image.body.byteLength)
      expect(decode(image.body.subarray(12, 16))).toBe("IHDR")
      const expected = (libraryMatrix(LINK).length + 2 * QR_MARGIN) * PNG_SCALE
      expect(view.getUint32(16)).toBe(expected)
      expect(view.getUint32(20)).toBe(expected)
    })
  )

  it.effect("PNG pixels show exactly the QR matrix, with a white quiet zone", () =>
    Effect.gen(function* () {
      const expected = libraryMatrix(LINK)
      const png = pngPixels((yield* render(LINK, "png")).body)
      const side = expected.length + 2 * QR_MARGIN
      const drawn = Array.from({ length: side }, (_, row) =>
        Array.from({ length: side }, (_, col) => png.isDark(col * PNG_SCALE + PNG_SCALE / 2, row * PNG_SCALE + PNG_SCALE / 2))
      )
      const quietZone = drawn.flatMap((line, row) =>
        line.filter((_, col) => Math.min(row, col) < QR_MARGIN || Math.max(row, col) >= side - QR_MARGIN)
      )
      expect(quietZone.some(Boolean)).toBe(false)
      expect(drawn.slice(QR_MARGIN, side - QR_MARGIN).map((line) => line.slice(QR_MARGIN, side - QR_MARGIN))).toEqual(expected)
    })
  )

  it.effect("SVG is a standalone document whose path draws exactly the QR matrix", () =>
    Effect.gen(function* () {
      const image = yield* render(LINK, "svg")
      const svg = decode(image.body)
      const expected = libraryMatrix(LINK)
      const side = expected.length + 2 * QR_MARGIN
      expect(image.contentType).toBe("image/svg+xml")
      expect(svg.startsWith("<?xml") || svg.startsWith("<svg")).toBe(true)
      expect(svg).toContain(`<svg xmlns="http://www.w3.org/2000/svg"`)
      expect(svg).toContain(`viewBox="0 0 ${side} ${side}"`)
      expect(svg).toMatch(/<path [^>]*d="M/)
      expect(svg.trimEnd().endsWith("</svg>")).toBe(true)
      expect(parseSvg(svg, expected.length)).toEqual(expected)
    })
  )

  it.effect("EPS has the EPSF-3.0 header, a BoundingBox of (modules + 8) × scale and %%EOF", () =>
    Effect.gen(function* () {
      const image = yield* render(LINK, "eps")
      const eps = decode(image.body)
      const size = libraryMatrix(LINK).length
      const parsed = parseEps(eps, size)
      expect(image.contentType).toBe("application/postscript")
      expect(eps.startsWith("%!PS-Adobe-3.0 EPSF-3.0\n")).toBe(true)
      expect(parsed.scale).toBe(EPS_SCALE)
      expect(parsed.boundingBox).toEqual([0, 0, (size + 8) * EPS_SCALE, (size + 8) * EPS_SCALE])
      expect(eps.trimEnd().endsWith("%%EOF")).toBe(true)
    })
  )

  it.effect("EPS draws as many cells as the matrix has dark modules, and reads back to the same matrix", () =>
    Effect.gen(function* () {
      for (const text of [LINK, OTHER_LINK, "https://example.com/" + "a".repeat(300) + "?qr=1"]) {
        const expected = libraryMatrix(text)
        const parsed = parseEps(decode((yield* render(text, "eps")).body), expected.length)
        expect(parsed.cellsDrawn).toBe(darkCount(expected))
        expect(parsed.matrix).toEqual(expected)
      }
    })
  )

  it.effect("EPS merges horizontal runs: fewer rectangles than dark modules", () =>
    Effect.gen(function* () {
      const eps = decode((yield* render(LINK, "eps")).body)
      const rectangles = eps.match(/^\d+ \d+ \d+ R$/gm)?.length ?? 0
      expect(rectangles).toBeGreaterThan(0)
      expect(rectangles).toBeLessThan(darkCount(libraryMatrix(LINK)))
    })
  )

  it.effect("the same text gives the same bytes twice in every format", () =>
    Effect.gen(function* () {
      for (const format of QrFormat.literals) {
        const first = yield* render(LINK, format)
        const second = yield* render(LINK, format)
        expect(Buffer.from(second.body).equals(Buffer.from(first.body))).toBe(true)
      }
    })
  )

  it.effect("different texts give different matrices and different images", () =>
    Effect.gen(function* () {
      const size = libraryMatrix(LINK).length
      const one = parseEps(decode((yield* render(LINK, "eps")).body), size).matrix
      const other = parseEps(decode((yield* render(OTHER_LINK, "eps")).body), size).matrix
      expect(one).not.toEqual(other)
      for (const format of QrFormat.literals) {
        const a = yield* render(LINK, format)
        const b = yield* render(OTHER_LINK, format)
        expect(Buffer.from(a.body).equals(Buffer.from(b.body))).toBe(false)
      }
    })
  )

  it.effect("a text longer than the QR limit, or too long for level M, dies with QrTextTooLong", () =>
    Effect.gen(function* () {
      for (const text of ["1".repeat(MAX_QR_TEXT_LENGTH + 1), "é".repeat(2000)]) {
        const exit = yield* Effect.exit(render(text, "png"))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const defect = Cause.dieOption(exit.cause)
          expect(Option.isSome(defect) && defect.value instanceof QrTextTooLong).toBe(true)
          expect(Option.isSome(Cause.failureOption(exit.cause))).toBe(false)
        }
      }
    })
  )
})
