//! The MCP server (contract §9): the tools over JSON-RPC 2.0, one
//! message per line, for any MCP client.
//!
//! ```no_run
//! use bashtools::{BashTools, Tasks};
//! let tools = BashTools::builder().tasks(Tasks::new()).build()?;
//! tools.server().serve_stdio()?; // until stdin ends
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! What it speaks:
//! - **Handshakes.** The classic `initialize` for protocol versions
//!   2024-11-05, 2025-03-26, 2025-06-18 and 2025-11-25 (the client's version
//!   when it is one of those, else 2025-11-25), and the stateless 2026-07-28
//!   revision: `server/discover`, and any request whose `params._meta`
//!   names `io.modelcontextprotocol/protocolVersion` (with
//!   `io.modelcontextprotocol/clientCapabilities`). An unknown version there
//!   is error `-32022`, whose data lists the supported ones. `ping` answers
//!   `{}`.
//! - **Tools.** `tools/list` and `tools/call`; a tool's failure is a result
//!   with `isError: true`, an unknown tool error `-32602`. Each call runs on
//!   a thread of its own: a long foreground `bash` never delays another
//!   request. `notifications/cancelled` stops a call's foreground command
//!   (its whole group) and no response is sent for it.
//! - **Notifications.** Each task notification and monitor event reaches
//!   the model in the next `tools/call` result of the session: after the
//!   result's own text, one more text item per notification not delivered
//!   yet, each once, in order. A `bash_output` with `block: true` on a
//!   running shell also returns early when one arrives. They also go out
//!   as `notifications/message` (level `info`, logger `bashtools`, data
//!   `{task_id, status?, text}`), for clients and UIs that show logs: for
//!   classic clients unless `logging/setLevel` asked for more than `info`,
//!   for stateless requests only when their `_meta` set
//!   `io.modelcontextprotocol/logLevel` to `debug` or `info` (the
//!   2026-07-28 opt-in). [`Options::deliver`] chooses the paths. A task's
//!   notification is never written before the response that named its ID.
//! - **Progress.** A `tools/call` whose `_meta` carries a `progressToken`
//!   (echoed as given) gets `notifications/progress` every
//!   [`Options::progress_interval`] while a foreground `bash` or a
//!   blocking `bash_output` runs: `progress` the seconds elapsed, `total`
//!   the timeout in seconds, `message` the last non-blank output line (at
//!   most 200 characters); never after the call's response.
//! - **Bad input** is answered and the server goes on: `-32700` for a line
//!   that is not JSON or not UTF-8, `-32600` for JSON that is not a request
//!   (not an object, a batch array, no `jsonrpc` or `method`, a line past
//!   [`Options::max_line_bytes`], answered with the request's id when it
//!   can be read from the line's start; a request id that is still
//!   running; a classic request before `initialize`), `-32601` for an
//!   unknown method.
//! - **The end.** At the end of input only the responses to requests
//!   already read are written (no log, no progress message), every shell
//!   and monitor is stopped (as
//!   [`BashTools::stop_all`](crate::BashTools::stop_all)), the running
//!   calls answer, and `serve` returns — within `kill_grace` + 1 s, even
//!   when the client has stopped reading.

mod ask;
mod backend;
mod calls;
mod inbox;
mod jsonrpc;
mod lines;
mod options;
mod progress;
mod protocol;
mod session;
mod tasks;
mod tools;
mod writer;

use std::io::{BufReader, Read, Write};
use std::sync::Arc;

use crate::texts::seconds;
use crate::BashTools;
use backend::Backend;

pub use calls::MAX_CALLS_IN_FLIGHT;
pub use inbox::{HEARD as RECIPIENT, UNHEARD as UNHEARD_RECIPIENT};
pub use lines::MAX_LINE_BYTES;
pub use options::{Deliver, Options, UnknownDeliver};
pub use protocol::{CLASSIC_VERSIONS, STATELESS_VERSION};

/// The MCP server of one [`BashTools`], from
/// [`BashTools::server`](crate::BashTools::server). Its tool calls are the
/// tools' own, with recipient [`RECIPIENT`] (or [`UNHEARD_RECIPIENT`] for
/// calls whose client declined log messages): an application that shares
/// the [`Tasks`](crate::Tasks) registry keeps its own recipients' queues.
pub struct McpServer {
    backend: Backend,
    instructions: String,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").finish_non_exhaustive()
    }
}

impl McpServer {
    /// The server of `tools` (a handle: the tools live as long as it does).
    pub fn new(tools: BashTools) -> McpServer {
        let backend = Backend::new(tools);
        let instructions = instructions(&backend, Deliver::Both);
        McpServer {
            backend,
            instructions,
        }
    }

    /// Serves one client on stdin and stdout until stdin ends. Nothing but
    /// MCP messages is written to stdout; diagnostics go to stderr.
    ///
    /// # Errors
    /// Reading stdin failed (after which, as at its end, every shell has
    /// been stopped).
    pub fn serve_stdio(&self) -> std::io::Result<()> {
        self.serve_stdio_with(&Options::default())
    }

    /// [`serve_stdio`](Self::serve_stdio) with `options`.
    ///
    /// # Errors
    /// As [`serve_stdio`](Self::serve_stdio).
    pub fn serve_stdio_with(&self, options: &Options) -> std::io::Result<()> {
        self.serve_with(options, std::io::stdin().lock(), std::io::stdout())
    }

    /// Serves one client: messages are read from `input`, one per line, and
    /// written to `output`, one per line. Returns at the end of `input`,
    /// once every shell and monitor has been stopped and the calls still
    /// running have answered (or a few seconds passed).
    ///
    /// One client per [`BashTools`]: once `serve` has
    /// returned, the tools refuse new commands, as after
    /// [`stop_all`](crate::BashTools::stop_all).
    ///
    /// # Errors
    /// Reading `input` failed, or a thread of the session could not start;
    /// the shells are stopped all the same.
    pub fn serve(
        &self,
        input: impl Read,
        output: impl Write + Send + 'static,
    ) -> std::io::Result<()> {
        self.serve_with(&Options::default(), input, output)
    }

    /// [`serve`](Self::serve) with `options`.
    ///
    /// # Errors
    /// As [`serve`](Self::serve).
    pub fn serve_with(
        &self,
        options: &Options,
        input: impl Read,
        output: impl Write + Send + 'static,
    ) -> std::io::Result<()> {
        let out = match writer::Writer::start(output) {
            Ok(w) => Arc::new(w),
            Err(e) => {
                self.backend.close();
                return Err(e);
            }
        };
        let served =
            session::Session::new(self, options, out).and_then(|s| s.run(BufReader::new(input)));
        if served.is_err() {
            self.backend.close();
        }
        served
    }

    /// The `instructions` sent to clients (at `initialize` and in
    /// `server/discover`) with the default [`Options`]: how to use the
    /// tools well, in a few sentences.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }
}

impl BashTools {
    /// The MCP server of these tools (`bashtools-mcp` serves it on stdio);
    /// each call makes a new one, cheaply. It holds a handle: the tools live
    /// as long as it does. Only with the `mcp` feature (on by default).
    pub fn server(&self) -> McpServer {
        McpServer::new(self.clone())
    }
}

fn instructions(backend: &Backend, deliver: Deliver) -> String {
    let c = backend.settings();
    let mut s = format!(
        "Shell tools, as in Claude Code. Run commands with bash (timeout in seconds, default {}, at most {}); \
         a command still running at its timeout is not killed but moves to the background as bash_N. \
         For servers, watchers and long builds use run_in_background: true, read new output with bash_output \
         (block: true waits for the end), and stop with kill_shell. Output over {} characters keeps its head and tail.",
        seconds(c.default_timeout),
        seconds(c.max_timeout),
        c.output_limit,
    );
    if backend.has_tasks() {
        s.push_str(match deliver {
            Deliver::Result | Deliver::Both => {
                " When a background command ends, and for each batch of a monitor's lines, a <task-notification> \
                 arrives in a later tool result; bash_output with block: true also returns when one arrives. \
                 Use monitor to wait for a line in a log instead of polling."
            }
            Deliver::Log => {
                " When a background command ends, and for each batch of a monitor's lines, the server sends a \
                 notifications/message (logger \"bashtools\"), which your client may not show you: check with \
                 bash_output (block: true waits for the end)."
            }
        });
    }
    s
}
