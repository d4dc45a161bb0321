// medulla's hooks for opencode, written by `medulla connect opencode --hooks` (taken out by
// `medulla disconnect opencode`; rewritten whole by the next connect). opencode has no
// hook entries in its configuration, it has plugins: this one runs `medulla prime`,
// `medulla hint` and `medulla nudge` as Claude Code, Codex and Gemini CLI run them from
// their hooks, in Claude Code's hook shape, and puts what they print where opencode's
// model reads it:
// - the session-start digest: one more system message on each of the session's requests;
// - the prompt hint: a text part after the person's words;
// - the file hint: after the output of opencode's read, edit and write tools;
// - the end-of-turn ask: once a session, after real work that wrote nothing to memory,
//   a user message the running turn answers.
// Any failure (no medulla, no owner, no brain, a slow answer) adds nothing: a hook never
// breaks a turn. Plain JavaScript and node: built-ins only, so opencode loads it as is.
import { spawn } from "node:child_process"

const MEDULLA = __MEDULLA__
// A hook gives up by itself within a second; this only guards against a wedged process.
const WAIT_MS = 3000
// The tool calls that make a session real work (medulla nudge decides; this spares it
// being asked sooner).
const MIN_TOOL_CALLS = __MIN_TOOL_CALLS__
const FILE_TOOLS = { read: "Read", edit: "Edit", write: "Write" }

// `medulla ARGS` with INPUT (an object) on stdin, run in CWD: its stdout, or "" on any
// failure.
function medulla(args, input, cwd) {
  return new Promise((resolve) => {
    let out = ""
    let done = false
    const finish = () => {
      if (!done) {
        done = true
        resolve(out)
      }
    }
    let child
    try {
      child = spawn(MEDULLA[0], [...MEDULLA.slice(1), ...args], { cwd, stdio: ["pipe", "pipe", "ignore"] })
    } catch {
      return finish()
    }
    const timer = setTimeout(() => (child.kill("SIGKILL"), finish()), WAIT_MS)
    child.stdout.on("data", (d) => (out += d))
    child.on("error", () => (clearTimeout(timer), finish()))
    child.on("close", () => (clearTimeout(timer), finish()))
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(input))
  })
}

function parsed(out) {
  try {
    return JSON.parse(out) || {}
  } catch {
    return {}
  }
}

const context = (out) => parsed(out).hookSpecificOutput?.additionalContext || ""

export const Medulla = async ({ client, directory }) => {
  const sessions = new Map()
  const session = (id) => {
    if (!sessions.has(id)) {
      sessions.set(id, { started: Date.now(), digest: null, tools: 0, hinted: false, said: "", asked: false, child: false })
    }
    return sessions.get(id)
  }
  const digest = (id) => {
    const s = session(id)
    if (!s.digest) {
      const input = { session_id: id, cwd: directory, hook_event_name: "SessionStart", source: "startup" }
      s.digest = medulla(["prime", "--client", "opencode"], input, directory).then(context)
    }
    return s.digest
  }
  const hint = async (id, input) => {
    const c = context(await medulla(["hint", "--client", "opencode"], { session_id: id, cwd: directory, ...input }, directory))
    if (c) session(id).hinted = true
    return c
  }

  return {
    event: async ({ event }) => {
      if (event.type !== "session.created") return
      const info = event.properties.info
      if (info.parentID) session(info.id).child = true
      else digest(info.id) // begun now; the first request waits for it
    },

    "experimental.chat.system.transform": async (input, output) => {
      const id = input.sessionID
      if (!id || session(id).child) return
      if (output.system.some((s) => s.startsWith("You are a title generator"))) return
      const d = await digest(id)
      if (d) output.system.push(d)
    },

    "chat.message": async (input, output) => {
      const words = output.parts.filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n")
      if (!words) return
      const c = await hint(input.sessionID, { hook_event_name: "UserPromptSubmit", prompt: words })
      if (!c) return
      // Parts are ordered by id: this one sorts right after the person's.
      const last = output.parts.map((p) => p.id).filter(Boolean).sort().pop() || "prt_"
      output.parts.push({ id: last + "medulla", sessionID: input.sessionID, messageID: output.message.id, type: "text", text: c, synthetic: true })
    },

    "tool.execute.after": async (input, output) => {
      const s = session(input.sessionID)
      s.tools += 1
      const name = FILE_TOOLS[input.tool]
      const file = input.args?.filePath
      if (!name || !file || typeof output.output !== "string") return
      const c = await hint(input.sessionID, { hook_event_name: "PostToolUse", tool_name: name, tool_input: { file_path: file } })
      if (c) output.output += "\n\n" + c
    },

    // A text part of the answer ended: the end of a turn as far as a plugin can tell
    // (`opencode run` exits at the session's first idle, too late to ask anything).
    "experimental.text.complete": async (input, output) => {
      const id = input.sessionID
      const s = session(id)
      s.said += (output.text || "") + "\n"
      if (s.child || s.asked || (s.tools < MIN_TOOL_CALLS && !s.hinted)) return
      const stop = { session_id: id, cwd: directory, hook_event_name: "Stop", stop_hook_active: false, tool_calls: s.tools, started_ms: s.started, said: s.said }
      const answer = parsed(await medulla(["nudge", "--client", "opencode"], stop, directory))
      if (answer.decision !== "block" || !answer.reason) return
      s.asked = true
      await client.session.prompt({ path: { id }, body: { noReply: true, parts: [{ type: "text", text: answer.reason }] } })
    },
  }
}
