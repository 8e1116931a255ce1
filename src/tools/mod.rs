//! The JSON edge: the tools a model calls. Each file reads its JSON
//! arguments, calls the typed API, and words the answer with
//! [`crate::texts`]; this layer is the only place a typed outcome or error
//! becomes the text a model reads (see [`answers`]).

mod answers;
pub(crate) mod async_tools;
pub(crate) mod bash;
pub(crate) mod bash_output;
pub(crate) mod definitions;
pub(crate) mod input;
pub(crate) mod kill_shell;
pub(crate) mod list_shells;
mod methods;
pub(crate) mod monitor;
pub(crate) mod params;
pub(crate) mod write_stdin;

use std::path::PathBuf;

pub use definitions::ToolDefinition;

use crate::status::TaskStatus;

/// What a tool call answers: the text a model reads, whether it is an error
/// result, and, for callers that want them, the typed facts behind the text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The result text.
    pub text: String,
    /// True for an error result (a failed command, bad input, an unknown ID).
    pub is_error: bool,
    /// The exit code of a command that ended (a foreground `bash`, or a
    /// shell `bash_output` found ended).
    pub exit_code: Option<i32>,
    /// The ID of the shell or entry the result is about (`bash_3`).
    pub task_id: Option<String>,
    /// The status of that shell or entry.
    pub status: Option<TaskStatus>,
    /// The output file of that shell.
    pub output_file: Option<PathBuf>,
    /// The output the result shows (a foreground command's, or what
    /// `bash_output` or `write_stdin` read), after truncation.
    pub output: Option<String>,
    /// How many characters of that output were left out (0: none).
    pub truncated_chars: Option<u64>,
    /// What the command cost and the limits it ran into, once it ended.
    pub usage: Option<crate::limits::Usage>,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> ToolResult {
        ToolResult {
            text: text.into(),
            is_error: false,
            exit_code: None,
            task_id: None,
            status: None,
            output_file: None,
            output: None,
            truncated_chars: None,
            usage: None,
        }
    }

    /// An error result.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            is_error: true,
            ..ToolResult::ok(text)
        }
    }

    /// The text with one more line at its end.
    pub(crate) fn with_note(mut self, line: &str) -> ToolResult {
        self.text.push('\n');
        self.text.push_str(line);
        self
    }

    pub(crate) fn with_exit_code(mut self, code: Option<i32>) -> ToolResult {
        self.exit_code = code;
        self
    }

    pub(crate) fn with_output(mut self, output: &str, truncated_chars: u64) -> ToolResult {
        self.output = Some(output.to_string());
        self.truncated_chars = Some(truncated_chars);
        self
    }

    pub(crate) fn with_task(
        mut self,
        id: impl Into<String>,
        status: Option<TaskStatus>,
        output_file: Option<PathBuf>,
    ) -> ToolResult {
        self.task_id = Some(id.into());
        self.status = status;
        self.output_file = output_file;
        self
    }
}

impl From<Result<ToolResult, String>> for ToolResult {
    fn from(r: Result<ToolResult, String>) -> ToolResult {
        r.unwrap_or_else(ToolResult::error)
    }
}
