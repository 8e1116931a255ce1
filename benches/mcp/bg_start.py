#!/usr/bin/env python3
"""Background start through the MCP server, with the default process limit
and with none (`--pids-limit 0`): the median time of a `bash` call with
`run_in_background` (40 `sleep 30` shells, raw JSON-RPC over stdio), and of
a foreground `echo hi` after them, for each. Usage:
`python3 benches/mcp/bg_start.py target/release/bashtools-mcp`."""
import json, subprocess, sys, time, statistics
def run(args, n=40):
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    def send(m): p.stdin.write(json.dumps(m) + "\n"); p.stdin.flush()
    def recv(i):
        for line in p.stdout:
            m = json.loads(line)
            if m.get("id") == i: return m
    send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}); recv(1)
    send({"jsonrpc":"2.0","method":"notifications/initialized"})
    bg=[];fg=[]
    for i in range(n):
        t=time.perf_counter(); send({"jsonrpc":"2.0","id":100+i,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 30","run_in_background":True}}}); recv(100+i); bg.append(time.perf_counter()-t)
    for i in range(n):
        t=time.perf_counter(); send({"jsonrpc":"2.0","id":1000+i,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo hi"}}}); recv(1000+i); fg.append(time.perf_counter()-t)
    p.stdin.close(); p.wait()
    return statistics.median(bg)*1000, statistics.median(fg)*1000
if __name__ == '__main__':
  b=sys.argv[1]
  for r in range(2):
    d=run([b]); z=run([b,"--pids-limit","0"])
    print(f"default: bg {d[0]:.2f} ms fg {d[1]:.2f} ms | pids 0: bg {z[0]:.2f} ms fg {z[1]:.2f} ms | ratio bg {d[0]/z[0]:.2f}x")
