"""`townbot --help` must stay light: building the parser imports no model client, Discord,
numpy or the town. Each command's module loads in `main` once the command is chosen."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("openai", "httpx2", "discord", "onnxruntime", "numpy", "yaml", "pydantic", "rich",
         "prompt_toolkit", "aiosqlite", "aiohttp", "matplotlib", "PIL", "townbot.town.engine")
PROBE = f"""
import json, sys
import townbot.cli
townbot.cli.build_parser().format_help()
print(json.dumps([name for name in {HEAVY!r} if name in sys.modules]))
"""


def test_building_the_parser_imports_nothing_heavy():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_the_offline_sim_never_imports_the_openai_client(tmp_path):
    command = ["sim", "--hours", "0.5", "--quiet", "--db", str(tmp_path / "t.db")]
    probe = ("import sys, townbot.cli\n"
             f"code = townbot.cli.main({command!r})\n"
             "print('openai' in sys.modules, code)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, cwd=tmp_path)
    assert done.stdout.splitlines()[-1] == "False 0"


def test_hosting_on_discord_offline_does_not_import_the_openai_client():
    probe = "import sys, townbot.platforms.discord.bot; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


BLAS_PROBE = """
import sys
{first}
import townbot.cli
code = townbot.cli.main({command!r})
loaded = [name for name in ("tomllib", "rich.console", "rich.text", "rich.progress", "rich.table",
                           "threadpoolctl") if name in sys.modules]
from threadpoolctl import threadpool_info
print(loaded, sorted({{lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}}),
      code)
"""


def sim_probe(tmp_path, first: str = "") -> str:
    command = ["sim", "--hours", "0.5", "--quiet", "--db", str(tmp_path / "t.db")]
    done = subprocess.run([sys.executable, "-c", BLAS_PROBE.format(first=first, command=command)],
                          capture_output=True, text=True, check=True, cwd=tmp_path,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    return done.stdout.splitlines()[-1]


def test_sim_into_a_pipe_runs_without_toml_rich_console_or_threadpoolctl(tmp_path):
    """No townbot.toml, output into a pipe (plain text; its closing tables need only rich's
    cell widths): none of them is needed, and numpy's OpenBLAS still runs one thread (it
    started after OPENBLAS_NUM_THREADS=1)."""
    assert sim_probe(tmp_path) == "[] [1] 0"


def test_blas_loaded_before_the_cli_is_still_pinned_to_one_thread(tmp_path):
    """numpy loaded before `main` set OPENBLAS_NUM_THREADS: OpenBLAS started with its own
    count of threads, and threadpoolctl brings it to one."""
    assert sim_probe(tmp_path, first="import numpy") == "['threadpoolctl'] [1] 0"
