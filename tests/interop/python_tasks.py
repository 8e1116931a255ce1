"""Interop: a task run to completion by the official MCP Python SDK (PyPI
`mcp` 2.x), which has no tasks runtime of its own: a small client
extension on its `ClientExtension` API claims the `"task"` result of the
tasks extension (`io.modelcontextprotocol/tasks`) and resolves it by
polling `tasks/get` until the task is done, so `call_tool` returns the
command's result as if it had waited. Written from the extension's
specification, nothing of bashtools'.

Checks: a quick command answers inline; a slow one goes through a task
whose result is the foreground result; `tasks/cancel` ends a task
`cancelled`; a call without the extension never gets a task.

Prints `ok - NAME` or `FAIL - NAME: WHY` per check; exits 1 if any failed.
Usage: python python_tasks.py PATH/TO/bashtools-mcp
"""

import sys
from typing import Any, Literal

import anyio
from pydantic import ConfigDict, Field, TypeAdapter

from mcp import Client, StdioServerParameters
from mcp import types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim

BIN = sys.argv[1]
ARGS = ["--kill-grace", "1", "--task-after-ms", "300"]
EXTENSION = "io.modelcontextprotocol/tasks"
failures = 0
created = []


def check(name, ok, why=""):
    global failures
    if ok:
        print(f"ok - python-sdk tasks: {name}", flush=True)
    else:
        failures += 1
        print(f"FAIL - python-sdk tasks: {name}: {why}", flush=True)


class CreateTaskResult(types.Result):
    """The extension's CreateTaskResult (resultType "task")."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(default=None, alias="pollIntervalMs")


class TaskParams(types.RequestParams):
    task_id: str = Field(alias="taskId")


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


ANY = TypeAdapter(dict[str, Any])


async def get(session, task_id):
    return await session.send_request(GetTask(params=TaskParams(taskId=task_id)), ANY)


class Tasks(ClientExtension):
    identifier = EXTENSION

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, task: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        created.append(task)
        with anyio.fail_after(60):
            while True:
                state = await get(ctx.session, task.task_id)
                if state["status"] not in ("working", "input_required"):
                    break
                await anyio.sleep((task.poll_interval_ms or 1000) / 1000)
        if state["status"] != "completed":
            raise RuntimeError(f"task ended {state['status']}")
        return types.CallToolResult.model_validate(state["result"])


async def main():
    server = StdioServerParameters(command=BIN, args=ARGS)
    async with Client(server, mode="2026-07-28", extensions=[Tasks()]) as client:
        quick = await client.call_tool("bash", {"command": "echo quick"})
        check("a quick command answers inline", quick.content[0].text == "quick" and not created, quick)

        slow = await client.call_tool("bash", {"command": "sleep 1; echo slow; exit 4"})
        check(
            "a slow command runs as a task and ends with the foreground result",
            len(created) == 1
            and created[0].task_id.startswith("task_")
            and slow.content[0].text == "Exit code 4\nslow"
            and slow.is_error
            and (slow.structured_content or {}).get("exit_code") == 4,
            slow,
        )

        # A task left running, then cancelled: its tree is stopped.
        background = await client.call_tool("bash", {"command": "sleep 1000", "run_in_background": True})
        task_id = (background.structured_content or {}).get("taskId", "")
        check("run_in_background names its task", task_id.startswith("task_"), background)
        await client.session.send_request(CancelTask(params=TaskParams(taskId=task_id)), ANY)
        state = await get(client.session, task_id)
        check("tasks/cancel ends the task cancelled", state.get("status") == "cancelled", state)

    # Without the extension: no task, the call waits.
    async with Client(server, mode="2026-07-28") as plain:
        r = await plain.call_tool("bash", {"command": "sleep 0.6; echo plain"})
        check("without the extension a call never gets a task", r.content[0].text == "plain", r)


try:
    anyio.run(main)
except Exception as e:  # one failed check, with the reason
    check("run", False, repr(e))
sys.exit(1 if failures else 0)
