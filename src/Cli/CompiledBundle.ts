import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname } from "node:path"
import { Script } from "node:vm"

/**
 * The CLI's CommonJS bundle run with V8's code cache (`FILE.cache` beside it): Node 20 has no compile
 * cache for modules, and compiling the bundle was a quarter of a command's time. `npm run build`
 * stores the cache (`storeCodeCache`); a cache V8 refuses (another Node, other V8 flags) or a missing
 * one is written again when the command ends, where the folder is writable.
 */

/** The bundle's text is one function expression taking these (scripts/bundle-cli.mjs wraps it). */
type Factory = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void

const isFactory = (value: unknown): value is Factory => typeof value === "function"

const readCache = (file: string): Buffer | undefined => {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

/** Writes the cache whole or not at all: another command may be reading it. */
const writeCache = (file: string, data: Buffer) => {
  const partial = `${file}.${process.pid}.partial`
  try {
    writeFileSync(partial, data)
    renameSync(partial, file)
  } catch {
    rmSync(partial, { force: true })
  }
}

const evaluate = (file: string, cachedData: Buffer | undefined) => {
  const script = new Script(readFileSync(file, "utf8"), cachedData === undefined ? { filename: file } : { filename: file, cachedData })
  const factory: unknown = script.runInThisContext()
  if (!isFactory(factory)) throw new Error(`${file} is not a bundle of the CLI`)
  const module = { exports: {} }
  factory(module.exports, createRequire(file), module, file, dirname(file))
  return { script, exports: module.exports }
}

/** The bundle's exports, its code taken from the cache when V8 accepts it. */
export const loadBundle = (file: string): object => {
  const cachedData = readCache(`${file}.cache`)
  const { script, exports } = evaluate(file, cachedData)
  if (cachedData === undefined || script.cachedDataRejected === true) {
    process.once("exit", () => writeCache(`${file}.cache`, script.createCachedData()))
  }
  return exports
}

/** Compiles and runs the bundle (`warm`: what else it should run), then stores its code, all that was compiled by the time the process exits. */
export const storeCodeCache = async (file: string, warm: (exports: object) => Promise<unknown>) => {
  const { script, exports } = evaluate(file, undefined)
  process.once("exit", () => writeCache(`${file}.cache`, script.createCachedData()))
  await warm(exports)
}
