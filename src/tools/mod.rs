//! The tools a model calls (SPEC section 4). Each file reads its arguments,
//! asks the core, and words the answer with [`crate::texts`].

pub(crate) mod bash;
pub(crate) mod bash_output;
pub(crate) mod definitions;
pub(crate) mod kill_shell;
pub(crate) mod monitor;

/// What a tool call answers: the text a model reads, and whether it is an
/// error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The result text.
    pub text: String,
    /// True for an error result (a failed command, bad input, an unknown ID).
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> ToolResult {
        ToolResult {
            text: text.into(),
            is_error: false,
        }
    }

    /// An error result.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            text: text.into(),
            is_error: true,
        }
    }
}

impl From<Result<ToolResult, String>> for ToolResult {
    fn from(r: Result<ToolResult, String>) -> ToolResult {
        r.unwrap_or_else(ToolResult::error)
    }
}
