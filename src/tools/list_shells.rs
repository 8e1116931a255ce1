//! The `list_shells` tool: every background shell and monitor, newest
//! first, so an agent that lost its IDs (a compacted context) finds them
//! again.

use std::sync::Arc;

use serde_json::Value;

use super::{params, ToolResult};
use crate::api::core::Core;
use crate::texts;

pub(crate) fn list_shells(core: &Arc<Core>, input: &Value) -> ToolResult {
    if let Err(e) = params::check("list_shells", &[params::LIST_SHELLS], input) {
        return ToolResult::error(e);
    }
    if let Err(e) = core.check_open() {
        return super::answers::error(&e);
    }
    let lines: Vec<String> = core
        .listing()
        .iter()
        .map(|l| texts::shell_line(&l.id, l.status, l.exit_code, l.elapsed, &l.what))
        .collect();
    if lines.is_empty() {
        ToolResult::ok(texts::NO_SHELLS)
    } else {
        ToolResult::ok(lines.join("\n"))
    }
}
