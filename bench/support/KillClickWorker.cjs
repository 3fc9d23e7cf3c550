// Loaded with `--require` (NODE_OPTIONS) into the service under test, so it runs in every thread: in
// the click writer thread (told apart by its settings) it throws an uncaught error, as a crash would,
// once the file KILL_CLICK_WORKER_TRIGGER exists, and only once per KILL_CLICK_WORKER_MARKER file.
const { isMainThread, workerData } = require("node:worker_threads")
const { existsSync, writeFileSync } = require("node:fs")

const trigger = process.env.KILL_CLICK_WORKER_TRIGGER
const marker = process.env.KILL_CLICK_WORKER_MARKER
const isClickWriter = !isMainThread && typeof workerData === "object" && workerData !== null && typeof workerData.spillDir === "string"

if (isClickWriter && trigger !== undefined && marker !== undefined && !existsSync(marker)) {
  const watch = setInterval(() => {
    if (!existsSync(trigger)) return
    clearInterval(watch)
    if (existsSync(marker)) return
    writeFileSync(marker, `${Date.now()}\n`)
    throw new Error("the click writer thread was killed by the test")
  }, 50)
  watch.unref()
}
