// Loaded with `--require` (NODE_OPTIONS) into the service under test, so it runs in every thread: in
// the click writer thread (told apart by its settings) it throws an uncaught error after
// KILL_CLICK_WORKER_AFTER_MS, as a crash would, once per KILL_CLICK_WORKER_MARKER file.
const { isMainThread, workerData } = require("node:worker_threads")
const { existsSync, writeFileSync } = require("node:fs")

const after = Number(process.env.KILL_CLICK_WORKER_AFTER_MS)
const marker = process.env.KILL_CLICK_WORKER_MARKER
const isClickWriter = !isMainThread && typeof workerData === "object" && workerData !== null && typeof workerData.spillDir === "string"

if (isClickWriter && after > 0 && marker !== undefined && !existsSync(marker)) {
  setTimeout(() => {
    if (existsSync(marker)) return
    writeFileSync(marker, `${Date.now()}\n`)
    throw new Error("the click writer thread was killed by the test")
  }, after).unref()
}
