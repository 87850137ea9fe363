// capy's OpenCode plugin, written by `capy setup --platform opencode` (`capy setup --undo`
// removes it). OpenCode has no command hooks, so this module forwards each event to capy's hook
// command as one JSON envelope {event, input, output, directory} on stdin and applies the answer:
// {decision: "deny", reason} stops the tool, {args} replaces its arguments, {context} is added to
// a compaction. A capy that fails or answers nothing changes nothing: the agent is never blocked
// by a broken hook.
const COMMANDS = __CAPY_COMMANDS__;

async function ask(event, input, output, directory) {
  const argv = COMMANDS[event];
  if (!argv) return null;
  try {
    const proc = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "inherit", cwd: directory });
    proc.stdin.write(JSON.stringify({ event, input, output, directory }));
    proc.stdin.end();
    const text = await new Response(proc.stdout).text();
    await proc.exited;
    return text.trim() ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

export const CapyPlugin = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const answer = await ask("tool.execute.before", input, output, directory);
    if (answer?.decision === "deny") throw new Error(answer.reason || "blocked by capy");
    if (answer?.args && typeof answer.args === "object") Object.assign(output.args, answer.args);
  },
  "tool.execute.after": async (input, output) => {
    await ask("tool.execute.after", input, output, directory);
  },
  "chat.message": async (input, output) => {
    await ask("chat.message", input, output, directory);
  },
  "experimental.session.compacting": async (input, output) => {
    const answer = await ask("experimental.session.compacting", input, output, directory);
    if (typeof answer?.context === "string" && Array.isArray(output.context)) {
      output.context.push(answer.context);
    }
  },
  event: async ({ event }) => {
    if (event?.type in COMMANDS) await ask(event.type, { ...event.properties }, {}, directory);
  },
});
