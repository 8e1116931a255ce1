//! The `write_stdin` tool: type into an interactive shell's terminal and
//! answer, in `bash_output`'s form, with what it printed in reply.

use std::sync::Arc;

use serde_json::Value;

use super::params;
use super::{answers, input, ToolResult};
use crate::api::core::Core;
use crate::config::defaults;
use crate::texts;

pub(crate) fn write_stdin(core: &Arc<Core>, input: &Value) -> ToolResult {
    let parsed = params::check("write_stdin", &[params::WRITE_STDIN], input).and_then(|args| {
        let id = input::required_str(args, "shell_id")?;
        let text = input::required_str(args, "input")?;
        let yield_time = input::millis(args, "yield_ms", defaults::YIELD, core.config.max_timeout);
        Ok((id, text, yield_time))
    });
    let (id, text, yield_time) = match parsed {
        Ok(p) => p,
        Err(e) => return ToolResult::error(e),
    };
    if let Err(e) = core.check_open() {
        return answers::error(&e);
    }
    match core.write_stdin(id, text.as_bytes(), yield_time) {
        Ok(out) => {
            let info = out.info();
            ToolResult::ok(texts::shell_output(
                info.status(),
                info.exit_code(),
                answers::oom_of(info),
                out.text(),
                answers::cap_of(info.stopped()),
            ))
            .with_exit_code(info.exit_code())
            .with_output(out.text(), out.truncated_chars())
            .with_task(
                id,
                Some(info.status()),
                Some(info.output_file().to_path_buf()),
            )
        }
        Err(e) => answers::error(&e),
    }
}
