import { Effect } from "effect"
import { readdirSync, readFileSync } from "node:fs"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { type Family, gaugeFamily, registerCollector } from "./Collectors.ts"
import { FixedHistogram } from "./FixedHistogram.ts"

const ROOT = new URL("../../", import.meta.url)

const readText = (path: string) => {
  try {
    return readFileSync(new URL(path, ROOT), "utf8").trim()
  } catch {
    return undefined
  }
}

/** The version in package.json. */
export const packageVersion = (): string => {
  const manifest: unknown = JSON.parse(readText("package.json") ?? "{}")
  return typeof manifest === "object" && manifest !== null && "version" in manifest && typeof manifest.version === "string"
    ? manifest.version
    : "unknown"
}

/** The commit checked out where the service runs from, when that is a git work tree; else "unknown". */
export const gitCommit = (): string => {
  const head = readText(".git/HEAD")
  if (head === undefined) return "unknown"
  if (!head.startsWith("ref: ")) return /^[0-9a-f]{40}$/.test(head) ? head : "unknown"
  const ref = head.slice(5)
  const loose = readText(`.git/${ref}`)
  if (loose !== undefined && /^[0-9a-f]{40}$/.test(loose)) return loose
  const packed = (readText(".git/packed-refs") ?? "").split("\n").find((line) => line.endsWith(` ${ref}`))
  return packed === undefined ? "unknown" : packed.slice(0, 40)
}

const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")

const GC_KINDS: ReadonlyArray<readonly [number, string]> = [
  [constants.NODE_PERFORMANCE_GC_MINOR, "minor"],
  [constants.NODE_PERFORMANCE_GC_MAJOR, "major"],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, "incremental"],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, "weakcb"]
]

const GC_BOUNDS = [0.001, 0.01, 0.1, 1, 2, 5]

const openFds = () => {
  try {
    return readdirSync("/proc/self/fd").length
  } catch {
    return undefined
  }
}

/**
 * The process and its main thread's runtime at every scrape: CPU, memory, heap, open files, start
 * time, garbage collections by kind (observed while the scope lasts) and the build.
 */
export const processMetrics = Effect.gen(function* () {
  const gc = new Map(GC_KINDS.map(([kind, name]) => [kind, { name, histogram: new FixedHistogram(GC_BOUNDS) }]))
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const detail: unknown = "detail" in entry ? entry.detail : undefined
      const kind = typeof detail === "object" && detail !== null && "kind" in detail && typeof detail.kind === "number" ? detail.kind : undefined
      if (kind !== undefined) gc.get(kind)?.histogram.observe(entry.duration / 1000)
    }
  })
  yield* Effect.acquireRelease(
    Effect.sync(() => observer.observe({ entryTypes: ["gc"] })),
    () => Effect.sync(() => observer.disconnect())
  )
  const startSeconds = Math.round((Date.now() - performance.now()) / 10) / 100
  const build = `version="${escape(packageVersion())}",node_version="${escape(process.version)}",commit="${escape(gitCommit())}"`
  yield* registerCollector("process", (): ReadonlyArray<Family> => {
    const cpu = process.cpuUsage()
    const memory = process.memoryUsage()
    const fds = openFds()
    return [
      { name: "process_cpu_user_seconds_total", type: "counter", help: "User CPU time of the process (every thread) in seconds", samples: [`process_cpu_user_seconds_total ${cpu.user / 1e6}`] },
      { name: "process_cpu_system_seconds_total", type: "counter", help: "System CPU time of the process (every thread) in seconds", samples: [`process_cpu_system_seconds_total ${cpu.system / 1e6}`] },
      { name: "process_cpu_seconds_total", type: "counter", help: "User and system CPU time of the process in seconds", samples: [`process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`] },
      gaugeFamily("process_resident_memory_bytes", "Resident memory of the process in bytes", memory.rss),
      gaugeFamily("process_start_time_seconds", "When the process started, in seconds since the Unix epoch", startSeconds),
      ...(fds === undefined ? [] : [gaugeFamily("process_open_fds", "Open file descriptors of the process", fds)]),
      gaugeFamily("nodejs_heap_size_total_bytes", "V8 heap of the main thread, in bytes", memory.heapTotal),
      gaugeFamily("nodejs_heap_size_used_bytes", "V8 heap of the main thread in use, in bytes", memory.heapUsed),
      gaugeFamily("nodejs_external_memory_bytes", "Memory of C++ objects bound to JavaScript objects of the main thread, in bytes", memory.external),
      {
        name: "nodejs_gc_duration_seconds",
        type: "histogram",
        help: "Garbage collections of the main thread by kind (minor, major, incremental, weakcb), in seconds",
        samples: [...gc.values()].flatMap(({ name, histogram }) => histogram.samples("nodejs_gc_duration_seconds", `kind="${name}"`))
      },
      gaugeFamily("build_info", "The running build: package version, Node.js version and git commit (\"unknown\" outside a git checkout); always 1", [[build, 1]])
    ]
  })
})
