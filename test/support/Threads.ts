import { readdirSync, readFileSync } from "node:fs"

/** The nice value of every thread of this process (on Linux a thread has its own). */
export const threadNiceValues = () =>
  readdirSync("/proc/self/task").map((task) => {
    const stat = readFileSync(`/proc/self/task/${task}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16])
  })
