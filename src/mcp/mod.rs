//! The MCP server (SPEC section 9): the four tools over JSON-RPC 2.0, one
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
//! - **Notifications.** Task notifications and monitor events go out as
//!   `notifications/message` (level `info`, logger `bashtools`, data
//!   `{task_id, status?, text}`), in order: for classic clients unless
//!   `logging/setLevel` asked for more than `info`, for stateless requests
//!   only when their `_meta` set `io.modelcontextprotocol/logLevel` to
//!   `debug` or `info` (the 2026-07-28 opt-in).
//! - **Bad input** is answered and the server goes on: `-32700` for a line
//!   that is not JSON or not UTF-8, `-32600` for JSON that is not a request
//!   (not an object, a batch array, no `jsonrpc` or `method`, a line past
//!   [`MAX_LINE_BYTES`], a request id that is still running, a classic
//!   request before `initialize`), `-32601` for an unknown method.
//! - **The end.** At the end of input every shell and monitor is stopped
//!   (as [`BashTools::stop_all`](crate::BashTools::stop_all)), the running
//!   calls answer, and `serve` returns.

mod calls;
mod jsonrpc;
mod lines;
mod notify;
mod protocol;
mod session;
mod tools;
mod writer;

use std::io::{BufReader, Read, Write};
use std::sync::Arc;

use crate::texts::seconds;
use crate::BashTools;

pub use calls::MAX_CALLS_IN_FLIGHT;
pub use lines::MAX_LINE_BYTES;
pub use notify::{HEARD as RECIPIENT, UNHEARD as UNHEARD_RECIPIENT};
pub use protocol::{CLASSIC_VERSIONS, STATELESS_VERSION};

/// The MCP server of one [`BashTools`], from
/// [`BashTools::server`](crate::BashTools::server). Its tool calls are the
/// tools' own, with recipient [`RECIPIENT`] (or [`UNHEARD_RECIPIENT`] for
/// calls whose client declined log messages): an application that shares
/// the [`Tasks`](crate::Tasks) registry keeps its own recipients' queues.
pub struct McpServer {
    tools: BashTools,
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
        let instructions = instructions(&tools);
        McpServer {
            tools,
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
        self.serve(std::io::stdin().lock(), std::io::stdout())
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
    /// Reading `input` failed; the shells are stopped all the same.
    pub fn serve(
        &self,
        input: impl Read,
        output: impl Write + Send + 'static,
    ) -> std::io::Result<()> {
        let out = Arc::new(writer::Writer::new(output));
        session::Session::new(self, out).run(BufReader::new(input))
    }

    /// The `instructions` sent to clients (at `initialize` and in
    /// `server/discover`): how to use the tools well, in a few sentences.
    pub fn instructions(&self) -> &str {
        &self.instructions
    }
}

impl BashTools {
    /// The MCP server of these tools (`bashtools-mcp` serves it on stdio).
    /// It holds a handle: the tools live as long as the server does.
    pub fn server(&self) -> crate::mcp::McpServer {
        crate::mcp::McpServer::new(self.clone())
    }
}

fn instructions(tools: &BashTools) -> String {
    let c = tools.settings();
    let mut s = format!(
        "Shell tools, as in Claude Code. Run commands with bash (timeout in seconds, default {}, at most {}); \
         a command still running at its timeout is not killed but moves to the background as bash_N. \
         For servers, watchers and long builds use run_in_background: true, read new output with bash_output \
         (block: true waits for the end), and stop with kill_shell. Output over {} characters keeps its head and tail.",
        seconds(c.default_timeout()),
        seconds(c.max_timeout()),
        c.output_limit(),
    );
    if tools.tasks().is_some() {
        s.push_str(
            " When a background command ends, and for each batch of a monitor's lines, the server sends a \
             notifications/message (logger \"bashtools\", data {task_id, status, text}); use monitor to wait \
             for a line in a log instead of polling.",
        );
    }
    s
}
