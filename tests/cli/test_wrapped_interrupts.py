"""A Ctrl-C that another library wrapped on its way out is still an interruption: pydantic-core turns a
KeyboardInterrupt raised while it builds a schema (a model class or TypeAdapter defined as a module imports, in the
first second of `agentrig prompt`) into a SchemaError naming it. One line and exit code 130, never a traceback;
any other SchemaError is still a crash with its traceback. Real processes: the entry point ends them with
os._exit."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.process

_WRAPPED = (
    "Error building `default` serializer:\\n  SchemaError: Error building `literal` serializer:\\n  KeyboardInterrupt: "
)
_UNRELATED = "Error building `literal` serializer:\\n  TypeError: unhashable type"


def _entry_point_raising(message: str, *, while_importing: bool) -> subprocess.CompletedProcess[str]:
    """Run agentrig's entry point with the CLI raising a SchemaError with `message`: as it is imported, or as the
    command runs."""
    if while_importing:
        arrange = """
            class _Failing(types.ModuleType):
                def __getattr__(self, name):
                    raise pydantic_core.SchemaError(MESSAGE)
            sys.modules["agentrig.cli"] = _Failing("agentrig.cli")
            """
    else:
        arrange = """
            import agentrig.cli
            def _failing(argv=None):
                raise pydantic_core.SchemaError(MESSAGE)
            agentrig.cli.main = _failing
            """
    program = (
        textwrap.dedent(
            f"""
        import sys, types
        import pydantic_core
        MESSAGE = "{message}"
        """
        )
        + textwrap.dedent(arrange)
        + "from agentrig.__main__ import main\nmain()\n"
    )
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("while_importing", [True, False], ids=["importing-the-cli", "in-a-command"])
def test_a_ctrl_c_wrapped_in_a_schema_error_is_an_interruption(while_importing: bool) -> None:
    done = _entry_point_raising(_WRAPPED, while_importing=while_importing)
    assert (done.returncode, done.stderr) == (130, "agentrig: interrupted\n")


@pytest.mark.parametrize("while_importing", [True, False], ids=["importing-the-cli", "in-a-command"])
def test_any_other_schema_error_is_still_a_crash_with_its_traceback(while_importing: bool) -> None:
    done = _entry_point_raising(_UNRELATED, while_importing=while_importing)
    assert done.returncode == 1
    assert "Traceback" in done.stderr
    assert "unhashable type" in done.stderr
