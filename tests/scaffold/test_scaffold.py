"""`agentrig scaffold`: what the scenario holds, and that it fails the day the agent's behaviour changes."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from pydantic_ai.messages import ToolCallPart as PydanticToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentrig.errors import UsageError
from agentrig.runtime.history.canonical import Message, TextPart, ToolCallPart, ToolReturnPart
from agentrig.runtime.history.redaction import refresh_secrets
from agentrig.runtime.history.sessions import new_session
from agentrig.runtime.history.tinyagent_export import session_to_tinyagent_json
from agentrig.runtime.runfolder import jsonio
from agentrig.runtime.scaffold import Unreplayable
from agentrig.runtime.suite.options import RunOptions
from agentrig.runtime.suite.runner import run_suite
from agentrig.scenarios.schema import STORED_SCHEMA_PATH
from tests.cli.cli_helpers import run_main
from tests.scaffold import shop
from tests.scaffold.conversations import INSTRUCTIONS, UNKNOWN_YEN, shop_history, write_dump
from tests.scaffold.replay import failures, run_scenario, scaffold_to

SHOP = "tests.scaffold.shop:build_agent"


def _load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return document


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "conversation.json", shop_history())


def test_the_scenario_scripts_every_response_and_keeps_ids_args_usage_and_instructions(
    dump: Path, tmp_path: Path
) -> None:
    written = scaffold_to(dump, tmp_path / "suite")
    scenario = _load(written.scenario_path)
    assert scenario["system_prompt"] == INSTRUCTIONS
    first, second = scenario["turns"]
    assert first["user"] == "Convert 10 EUR to USD."
    assert second["user"] == "And to yen?\nJust the number."
    assert first["model"] == [
        {
            "text": "Let me convert.",
            "tool_calls": [{"id": "c1", "name": "convert", "args": {"amount": 10, "currency": "USD"}}],
            "usage": {"input_tokens": 120, "output_tokens": 20},
        },
        {"text": "10 EUR is 10.0 USD.", "usage": {"input_tokens": 160, "output_tokens": 9}},
    ]
    assert first["expect"] == {
        "output": {"equals": "10 EUR is 10.0 USD."},
        "tool_calls": {
            "sequence": [
                {"name": "convert", "id": "c1", "args": {"amount": 10, "currency": "USD"}, "args_match": "exact"}
            ]
        },
        "usage": {"requests": 2, "input_tokens": 280, "output_tokens": 29},
    }
    assert scenario["tools"]["convert"]["results"] == [
        {"when": {"amount": 10, "currency": "USD"}, "return": 10.0},
        {"when": {"amount": 10, "currency": "JPY"}, "retry": UNKNOWN_YEN},
    ]
    assert scenario["expect"] == {
        "usage": {"requests": 4, "input_tokens": 720, "output_tokens": 48},
        "invariants": "all",
        "golden": "golden/conversation.json",
    }
    assert run_scenario(written.scenario_path).status == "passed"


def test_the_scenario_links_back_to_its_source(dump: Path, tmp_path: Path) -> None:
    written = scaffold_to(dump, tmp_path)
    digest = hashlib.sha256(dump.read_bytes()).hexdigest()
    scenario = _load(written.scenario_path)
    assert f"conversation.json (sha256:{digest}, 8 messages)" in scenario["description"]
    assert f"sha256: {digest}  messages: 8" in written.scenario_path.read_text(encoding="utf-8").splitlines()[1]
    assert scenario["tags"] == ["scaffolded"]


def test_the_scenario_validates_against_the_json_schema(dump: Path, tmp_path: Path) -> None:
    written = scaffold_to(dump, tmp_path)
    schema = jsonio.read_json_file(STORED_SCHEMA_PATH)
    jsonschema.validate(_load(written.scenario_path), schema)


def test_a_changed_argument_fails_loudly(dump: Path, tmp_path: Path) -> None:
    written = scaffold_to(dump, tmp_path)
    scenario = _load(written.scenario_path)
    # The agent (here: its script) now asks for 11 EUR: no recorded result answers that.
    scenario["turns"][0]["model"][0]["tool_calls"][0]["args"]["amount"] = 11
    written.scenario_path.write_text(yaml.safe_dump(scenario, sort_keys=False), encoding="utf-8")
    result = run_scenario(written.scenario_path)
    assert result.status == "failed"
    assert result.error is not None, failures(result)
    assert 'call #1 with args {"amount": 11, "currency": "USD"}: no result rule matches' in result.error.message


def test_with_the_agent_its_real_tools_must_return_what_was_recorded(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = scaffold_to(dump, tmp_path, agent=SHOP)
    scenario = _load(written.scenario_path)
    assert scenario["agent"] == SHOP
    assert "tools" not in scenario
    assert "system_prompt" not in scenario
    assert run_scenario(written.scenario_path).status == "passed"

    monkeypatch.setitem(shop.RATES, "USD", 1.08)  # the agent's behaviour changes: its tool returns 10.8
    result = run_scenario(written.scenario_path)
    assert result.status == "failed"
    assert [check.name for check in result.checks if not check.passed] == ["scenario: golden"]


def test_check_calls_accepts_other_results_but_not_other_calls(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = scaffold_to(dump, tmp_path, agent=SHOP, check="calls")
    scenario = _load(written.scenario_path)
    assert "golden" not in scenario["expect"]
    assert not (tmp_path / "golden").exists()
    monkeypatch.setitem(shop.RATES, "USD", 1.08)
    assert run_scenario(written.scenario_path).status == "passed"

    text = written.scenario_path.read_text(encoding="utf-8")
    written.scenario_path.write_text(text.replace("id: c2", "id: c9", 1), encoding="utf-8")  # the script's call id
    result = run_scenario(written.scenario_path)
    assert result.status == "failed"
    assert any("tool_calls" in check.name for check in result.checks if not check.passed), failures(result)


def test_one_call_answered_differently_each_time_is_pinned_by_its_ordinal(tmp_path: Path) -> None:
    history = shop_history()
    # The same call twice, the tool answering differently (the rates changed in between).
    usd = {"amount": 10, "currency": "USD"}
    again = [
        Message.request(TextPart(content="Again, please.")),
        Message.response(ToolCallPart(tool_call_id="c3", tool_name="convert", args=usd)),
        Message.request(ToolReturnPart(tool_call_id="c3", tool_name="convert", content=10.8)),
        Message.response(TextPart(content="Now 10.8 USD.")),
    ]
    source = write_dump(tmp_path / "twice.json", [*history, *again])
    written = scaffold_to(source, tmp_path / "suite")
    rules = _load(written.scenario_path)["tools"]["convert"]["results"]
    assert rules[:2] == [
        {"when": {"amount": 10, "currency": "USD"}, "call": 1, "return": 10.0},
        {"when": {"amount": 10, "currency": "USD"}, "call": 3, "return": 10.8},
    ]
    assert run_scenario(written.scenario_path).status == "passed"


_KEY = "sk-scaffold-secret-0123456789abcdefXYZ"


def test_secrets_never_reach_the_files_and_the_replay_still_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", _KEY)
    refresh_secrets()
    history = shop_history()
    history[0] = Message.request(TextPart(content=f"My key is {_KEY}, convert 10 EUR."))
    history[2] = Message.request(
        ToolReturnPart(tool_call_id="c1", tool_name="convert", content={"echo": _KEY, "value": 10.0})
    )
    source = write_dump(tmp_path / "leaky.json", history, instructions=f"Use {_KEY} nowhere.")
    written = scaffold_to(source, tmp_path / "suite")
    assert written.golden_path is not None
    for path in (written.scenario_path, written.golden_path):
        text = path.read_text(encoding="utf-8")
        assert _KEY not in text
        assert "[REDACTED]" in text
    assert run_scenario(written.scenario_path).status == "passed"


@pytest.mark.parametrize(("mode", "replacement"), [("mask", "[MASKED]"), ("drop", None)])
def test_tool_results_can_be_masked_or_dropped(mode: str, replacement: str | None, tmp_path: Path) -> None:
    history = shop_history(usd_result=123.45)
    source = write_dump(tmp_path / "private.json", history)
    written = scaffold_to(source, tmp_path / "suite", tool_results=mode)
    assert written.golden_path is not None
    golden = jsonio.read_json_file(written.golden_path)
    returns = [p for m in golden["messages"] for p in m["parts"] if p["part_kind"] == "tool-return"]
    assert [p.get("content") for p in returns] == [replacement]
    rules = _load(written.scenario_path)["tools"]["convert"]["results"]
    assert rules[0]["return"] == replacement
    assert "123.45" not in written.golden_path.read_text(encoding="utf-8").replace("10 EUR is 123.45 USD.", "")
    assert run_scenario(written.scenario_path).status == "passed"


def test_masking_with_the_agent_needs_check_calls(dump: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="needs --check calls"):
        scaffold_to(dump, tmp_path, agent=SHOP, tool_results="mask")
    written = scaffold_to(dump, tmp_path, agent=SHOP, tool_results="mask", check="calls")
    assert run_scenario(written.scenario_path).status == "passed"


def test_last_turns_resumes_from_the_conversation_before_them(dump: Path, tmp_path: Path) -> None:
    written = scaffold_to(dump, tmp_path, last_turns=1, tool_results="mask")
    scenario = _load(written.scenario_path)
    assert scenario["initial_history"] == "histories/conversation.json"
    assert [turn["user"] for turn in scenario["turns"]] == ["And to yen?\nJust the number."]
    assert scenario["tools"]["convert"]["results"] == [
        {"when": {"amount": 10, "currency": "JPY"}, "retry": UNKNOWN_YEN}
    ]
    assert scenario["expect"]["usage"] == {"requests": 2, "input_tokens": 440, "output_tokens": 19}
    earlier = jsonio.read_json_file(tmp_path / "histories" / "conversation.json")["messages"]
    assert len(earlier) == 4
    assert "10.0" not in jsonio.dumps(earlier).decode().replace("10 EUR is 10.0 USD.", "")  # masked there too
    result = run_scenario(written.scenario_path)
    assert result.status == "passed", failures(result)


def test_a_tunacode_session_replays(tmp_path: Path) -> None:
    session = new_session(working_directory="/work", messages=shop_history())
    source = tmp_path / "tunacode.json"
    jsonio.write_atomic(source, jsonio.dumps(session_to_tinyagent_json(session)))
    assert "role" in jsonio.read_json_file(source)["messages"][0]  # tinyagent messages, not canonical ones
    written = scaffold_to(source, tmp_path / "suite")
    result = run_scenario(written.scenario_path)
    assert result.status == "passed", failures(result)


def test_the_scenario_replays_streamed_too(dump: Path, tmp_path: Path) -> None:
    written = scaffold_to(dump, tmp_path)
    (result,) = run_suite(RunOptions(paths=(written.scenario_path,), out_dir=None, stream=True)).results
    assert result.status == "passed", failures(result)


def test_a_structured_output_is_expected_as_json(tmp_path: Path) -> None:
    # The source: a real pydantic-ai run of the quote agent, stored as applications store it.
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            convert = PydanticToolCallPart(tool_name="convert", args={"amount": 5, "currency": "GBP"})
            return ModelResponse(parts=[convert])
        output = PydanticToolCallPart(tool_name=info.output_tools[0].name, args={"amount": 4.25, "currency": "GBP"})
        return ModelResponse(parts=[output])

    run = asyncio.run(shop.build_quote_agent().run("5 EUR in GBP?", model=FunctionModel(respond)))
    source = tmp_path / "quote.json"
    source.write_bytes(ModelMessagesTypeAdapter.dump_json(run.all_messages()))

    # Without the agent: the YAML agent's output tool, with a schema inferred from the output it returned.
    yaml_agent = scaffold_to(source, tmp_path / "yaml")
    document = _load(yaml_agent.scenario_path)
    assert document["output"] == {
        "schema": {"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}}},
        "mode": "tool",
    }
    assert document["turns"][0]["expect"]["output"] == {"json_equals": {"amount": 4.25, "currency": "GBP"}}
    result = run_scenario(yaml_agent.scenario_path)
    assert result.status == "passed", failures(result)
    written = scaffold_to(source, tmp_path / "suite", agent="tests.scaffold.shop:build_quote_agent")
    (turn,) = _load(written.scenario_path)["turns"]
    assert turn["expect"]["output"] == {"json_equals": {"amount": 4.25, "currency": "GBP"}}
    result = run_scenario(written.scenario_path)
    assert result.status == "passed", failures(result)


# --- the command ---


def test_the_command_writes_a_scenario_that_validate_accepts(
    dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "suite" / "replay.yaml"
    code, out, err = run_main(capsys, "scaffold", str(dump), "-o", str(target), "--name", "shop-usd")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        f"wrote {target} (scenario shop-usd: 2 turn(s), 4 step(s), 1 tool(s), from 8 messages)",
        f"wrote {tmp_path / 'suite' / 'golden' / 'shop-usd.json'}",
    ]
    code, out, _ = run_main(capsys, "validate", str(target))
    assert code == 0, out


def test_a_source_it_cannot_replay_exits_2_naming_the_message_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = shop_history()[1:]  # the conversation's first request is missing
    source = write_dump(tmp_path / "cut.json", history)
    target = tmp_path / "suite" / "replay.yaml"
    code, out, err = run_main(capsys, "scaffold", str(source), "-o", str(target))
    assert code == 2
    assert out == ""
    assert err == (
        f"agentrig: error: {source}: messages[0]: the history starts with a model response; a turn starts with the"
        " user: scaffold the run's session.json or history.json, which start with the user, or add the user's message"
        " before it (agentrig convert SOURCE -o FILE.json writes the history to edit)\n"
    )
    assert not (tmp_path / "suite").exists()


@pytest.mark.parametrize("parts", [(), (TextPart(content=" \n"),)])
def test_an_empty_response_is_refused(parts: tuple[TextPart, ...], tmp_path: Path) -> None:
    history = [Message.request(TextPart(content="Hello?")), Message.response(*parts)]
    source = write_dump(tmp_path / "blank.json", history)
    with pytest.raises(Unreplayable, match=r"messages\[1\]: an empty response"):
        scaffold_to(source, tmp_path / "suite")
    assert not (tmp_path / "suite").exists()


def test_an_existing_scenario_is_replaced_only_with_force_and_only_when_scaffold_wrote_it(
    dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "replay.yaml"
    assert run_main(capsys, "scaffold", str(dump), "-o", str(target))[0] == 0
    code, _, err = run_main(capsys, "scaffold", str(dump), "-o", str(target))
    assert code == 2
    assert "the file exists; pass --force" in err
    assert run_main(capsys, "scaffold", str(dump), "-o", str(target), "--force")[0] == 0  # its own, unchanged

    target.write_text(target.read_text(encoding="utf-8") + "# my note\n", encoding="utf-8")  # edited since
    code, _, err = run_main(capsys, "scaffold", str(dump), "-o", str(target), "--force")
    assert code == 2
    assert "not written by agentrig scaffold, or changed since; not replaced, even with --force" in err
    assert target.read_text(encoding="utf-8").endswith("# my note\n")


def test_a_users_file_in_the_way_is_never_replaced(
    dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden = tmp_path / "golden" / "conversation.json"
    golden.parent.mkdir()
    golden.write_text("mine\n", encoding="utf-8")
    code, _, err = run_main(capsys, "scaffold", str(dump), "-o", str(tmp_path / "replay.yaml"), "--force")
    assert code == 2
    assert f"{golden}: not written by agentrig scaffold" in err
    assert golden.read_text(encoding="utf-8") == "mine\n"
    assert not (tmp_path / "replay.yaml").exists()  # all or none


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--check", "calls"], "--check calls needs --agent"),
        (["--agent", "not-a-spec"], "expected module:attribute"),
        (["--name", "-bad name"], "--name"),
    ],
)
def test_bad_options_are_usage_errors(
    args: list[str], message: str, dump: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_main(capsys, "scaffold", str(dump), "-o", str(tmp_path / "x.yaml"), *args)
    assert code == 2
    assert message in err, err
    assert not (tmp_path / "x.yaml").exists()


def test_a_missing_source_is_a_file_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_main(capsys, "scaffold", str(tmp_path / "nope.json"), "-o", str(tmp_path / "x.yaml"))
    assert code == 2
    assert err.startswith("agentrig: error: ")
    assert "nope.json" in err
    assert err.count("\n") == 1


def test_a_turn_of_more_model_requests_than_the_default_gets_its_budget(tmp_path: Path) -> None:
    history = [Message.request(TextPart(content="Count to 21."))]
    for number in range(1, 21):
        call = ToolCallPart(tool_call_id=f"c{number}", tool_name="count", args={"n": number})
        history += [
            Message.response(call),
            Message.request(ToolReturnPart(tool_call_id=call.tool_call_id, content=number)),
        ]
    history.append(Message.response(TextPart(content="21.")))
    source = write_dump(tmp_path / "long.json", history)
    written = scaffold_to(source, tmp_path / "suite")
    assert _load(written.scenario_path)["settings"] == {"max_iterations": 21}  # 20 is the default
    result = run_scenario(written.scenario_path)
    assert result.status == "passed", failures(result)
