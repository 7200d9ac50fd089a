"""`agentrig run --record-mode none|once|new_episodes|all` against the loopback provider: pytest-recording's meanings,
provider errors recorded and replayed as the same error, the recording's model checked, replay without a key, and
`check`, `convert` and `diff` reading recordings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentrig.cli import main
from agentrig.runtime.runfolder import jsonio
from tests.providers.conftest import ServerFactory
from tests.providers.loopback import error, text
from tests.same_conversation import compared_messages

pytestmark = pytest.mark.providers

_TURN = """\
  - user: Say hello ({number}).
    expect:
      output: {{contains: hello}}
"""


def _write(tmp_path: Path, name: str = "greet", turns: int = 1) -> Path:
    directory = tmp_path / "scenarios"
    directory.mkdir(exist_ok=True)
    body = "".join(_TURN.format(number=number) for number in range(1, turns + 1))
    (directory / f"{name}.yaml").write_text(f"name: {name}\nsystem_prompt: Be terse.\nturns:\n{body}", encoding="utf-8")
    return directory


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        main(["run", *args])
    except SystemExit as exited:
        code = exited.code
    else:
        code = 0
    captured = capsys.readouterr()
    return (code if isinstance(code, int) else 1), captured.out, captured.err


def _model(server: Any, name: str = "openai:gpt-4o") -> list[str]:
    return ["--model", name, "--base-url", server.openai_base_url]


def _report(out: Path) -> dict[str, Any]:
    return jsonio.read_json_file(out / "report.json")


def test_a_provider_error_is_recorded_and_replayed_as_the_same_error(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([error(401, "Incorrect API key provided")])
    scenarios, recordings = _write(tmp_path), tmp_path / "recordings"
    code, out, err = _run(
        capsys, str(scenarios), "--out", str(tmp_path / "live"), *_model(server), "--record", str(recordings)
    )
    assert code == 3, out + err
    live_error = _report(tmp_path / "live")["scenarios"][0]["error"]
    assert live_error["kind"] == "auth"
    recorded = jsonio.read_json_file(recordings / "greet.json")
    assert recorded["exchanges"][0]["error"]["kind"] == "auth"
    assert recorded["exchanges"][0]["error"]["status_code"] == 401

    code, out, err = _run(capsys, str(scenarios), "--out", str(tmp_path / "replay"), "--replay", str(recordings))
    assert code == 3, out + err
    assert _report(tmp_path / "replay")["scenarios"][0]["error"] == live_error
    assert len(server.requests) == 1  # the replay reached no provider


def test_replay_needs_no_key_even_with_model_named(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("hello")])
    scenarios, recordings = _write(tmp_path), tmp_path / "recordings"
    record = [str(scenarios), "--out", str(tmp_path / "rec"), *_model(server), "--record", str(recordings)]
    assert _run(capsys, *record)[0] == 0
    # No OPENAI_API_KEY (the no_real_keys fixture), no --base-url: building the live model would need a key.
    for flags in (["--replay", str(recordings)], ["--record-mode", "none", "--record", str(recordings)]):
        code, out, err = _run(
            capsys, str(scenarios), "--out", str(tmp_path / "replay"), "--model", "openai:gpt-4o", *flags
        )
        assert code == 0, out + err
        report = _report(tmp_path / "replay")
        assert report["scenarios"][0]["cost"]["spent_usd"] == 0  # replayed: nothing spent...
        assert report["scenarios"][0]["cost"]["usd"] > 0  # ...but priced as what it costs on that model
    assert len(server.requests) == 1


def test_a_replay_under_another_model_is_refused_with_both_names(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("hello")])
    scenarios, recordings = _write(tmp_path), tmp_path / "recordings"
    assert (
        _run(capsys, str(scenarios), "--out", str(tmp_path / "rec"), *_model(server), "--record", str(recordings))[0]
        == 0
    )
    out_dir = tmp_path / "replay"
    code, out, err = _run(
        capsys, str(scenarios), "--out", str(out_dir), "--model", "openai:gpt-4o-mini", "--replay", str(recordings)
    )
    assert code == 2, out + err
    assert len(err.strip().splitlines()) == 1
    assert "recorded with openai:gpt-4o, but this run's --model is openai:gpt-4o-mini" in err
    assert not out_dir.exists()  # nothing touched


def test_once_replays_what_exists_and_records_what_is_missing(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback(default=text("hello"))
    scenarios, recordings = _write(tmp_path, "first"), tmp_path / "recordings"
    once = ["--record-mode", "once", "--record", str(recordings)]
    assert _run(capsys, str(scenarios), "--out", str(tmp_path / "a"), *_model(server), *once)[0] == 0
    assert len(server.requests) == 1
    _write(tmp_path, "second")
    code, out, err = _run(capsys, str(scenarios), "--out", str(tmp_path / "b"), *_model(server), *once)
    assert code == 0, out + err
    assert len(server.requests) == 2  # only the new scenario reached the provider
    assert (recordings / "second.json").is_file()


def test_none_without_a_recording_fails_that_scenario(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenarios, recordings = _write(tmp_path), tmp_path / "recordings"
    recordings.mkdir()
    code, out, err = _run(
        capsys, str(scenarios), "--out", str(tmp_path / "o"), "--model", "openai:gpt-4o", "--record-mode", "none",
        "--record", str(recordings),
    )  # fmt: skip
    assert code == 1, out + err  # the scenario does not replay: failed, not an error of the agent or provider
    scenario = _report(tmp_path / "o")["scenarios"][0]
    assert (scenario["status"], scenario["error"]["kind"]) == ("failed", "replay_mismatch")
    assert "no recording of this scenario" in scenario["error"]["message"]


def test_new_episodes_replays_the_recorded_requests_and_records_the_new_ones(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback(default=text("hello"))
    recordings = tmp_path / "recordings"
    scenarios = _write(tmp_path, turns=1)
    record = ["--record-mode", "all", "--record", str(recordings)]
    assert _run(capsys, str(scenarios), "--out", str(tmp_path / "a"), *_model(server), *record)[0] == 0
    first = jsonio.read_json_file(recordings / "greet.json")["exchanges"]
    assert len(server.requests) == 1

    _write(tmp_path, turns=3)  # two new turns: two requests the recording does not hold
    new = ["--record-mode", "new_episodes", "--record", str(recordings)]
    code, out, err = _run(capsys, str(scenarios), "--out", str(tmp_path / "b"), *_model(server), *new)
    assert code == 0, out + err
    assert len(server.requests) == 3  # the first request was replayed
    exchanges = jsonio.read_json_file(recordings / "greet.json")["exchanges"]
    assert len(exchanges) == 3
    assert exchanges[0] == first[0]
    report = _report(tmp_path / "b")["scenarios"][0]
    assert report["cost"]["usd"] == pytest.approx(report["cost"]["spent_usd"] * 3 / 2)

    # Now everything is recorded: `none` replays all three offline.
    code, out, err = _run(
        capsys, str(scenarios), "--out", str(tmp_path / "c"), "--replay", str(recordings), "--model", "openai:gpt-4o"
    )
    assert code == 0, out + err
    assert len(server.requests) == 3


def test_all_records_again(loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = loopback([text("hello one"), text("hello two")])
    scenarios, recordings = _write(tmp_path), tmp_path / "recordings"
    record = ["--record-mode", "all", "--record", str(recordings)]
    for run in ("a", "b"):
        assert _run(capsys, str(scenarios), "--out", str(tmp_path / run), *_model(server), *record)[0] == 0
    assert len(server.requests) == 2
    (exchange,) = jsonio.read_json_file(recordings / "greet.json")["exchanges"]
    assert exchange["response"]["parts"][0]["content"] == "hello two"


def test_check_convert_and_diff_read_recordings(
    loopback: ServerFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = loopback([text("hello one"), text("hello two")])
    scenarios = _write(tmp_path)
    for name in ("one", "two"):
        record = ["--record", str(tmp_path / name)]
        assert _run(capsys, str(scenarios), "--out", str(tmp_path / f"out-{name}"), *_model(server), *record)[0] == 0
    one, two = tmp_path / "one" / "greet.json", tmp_path / "two" / "greet.json"

    for argv in (["check", str(one)], ["convert", str(one), "--to", "canonical"], ["diff", str(one), str(two)]):
        try:
            main(argv)
            code = 0
        except SystemExit as exited:
            code = exited.code
        captured = capsys.readouterr()
        assert "not an agentrig" not in captured.err
        if argv[0] == "check":
            assert code == 0, captured
        if argv[0] == "convert":
            assert code == 0, captured
            history = jsonio.loads(captured.out)
            recorded_run = jsonio.read_json_file(tmp_path / "out-one" / "scenarios" / "greet" / "history.json")
            assert compared_messages(history) == compared_messages(recorded_run)
        if argv[0] == "diff":
            assert code == 1, captured
            assert "hello two" in captured.out
