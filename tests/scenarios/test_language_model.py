"""The scenario language of issue 29, as files: attachments, structured output, tool outcomes, thoughts, provider
errors. Every bad value is one error naming file, line and field; an attachment never reads a file outside the
scenario's folder, a device or a huge file unless it says so."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from agentrig.errors import ScenarioError
from agentrig.scenarios.content_model import MAX_ATTACHMENT_BYTES, Attachment
from agentrig.scenarios.loader import load_scenario_file, validation_report


def _errors(tmp_path: Path, text: str, *, name: str = "scenario.yaml") -> list[str]:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return [str(error) for error in validation_report([path]).errors]


def _user(items: str) -> str:
    return f"""\
        name: s
        turns:
          - user: {items}
            model: [{{text: x}}]
        """


def test_a_user_message_holds_text_and_attachments_in_order(tmp_path: Path) -> None:
    (tmp_path / "cat.png").write_bytes(b"png")
    (tmp_path / "scenario.yaml").write_text(
        _user('["Look:", {file: cat.png}, {image_url: "https://x.example/a.jpg"}, "and this."]'), encoding="utf-8"
    )
    (loaded,) = load_scenario_file(tmp_path / "scenario.yaml")
    user = loaded.scenario.turns[0].user
    assert isinstance(user, tuple)
    text, image, url, more = user
    assert (text, more) == ("Look:", "and this.")
    assert isinstance(image, Attachment)
    assert (image.file, image.resolved_media_type, image.url_kind) == ("cat.png", "image/png", None)
    assert isinstance(url, Attachment)
    assert (url.url, url.url_kind, url.resolved_media_type) == ("https://x.example/a.jpg", "image-url", "image/jpeg")


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ("[{file: ../outside.txt}]", "user[0].file: {dir}/../outside.txt is outside the scenario's folder"),
        ("[{file: nope.png}]", "user[0].file: cannot read {dir}/nope.png: no such file"),
        ("[{file: /dev/zero, outside: true}]", "user[0].file: /dev/zero is not a regular file"),
        ("[{image_url: 'https://x.example/noext'}]", "user[0]: cannot tell the media type of"),
        ("[{data: '!!!', media_type: text/plain}]", "user[0]: data is not valid base64"),
        ("[{data: 'aGk='}]", "user[0]: inline data needs a media_type"),
        ("[{file: a.png, image_url: 'https://x/a.png'}]", "got file, image_url"),
        ("[{fil: a.png}]", "user[0].fil: unknown field 'fil'; did you mean 'file'?"),
        ("[{image_url: 'https://x/a.png', outside: true}]", "user[0]: outside is for a file"),
        ("[{data: 'aGk=', media_type: text/plain, force_download: true}]", "force_download is for a URL"),
        ("[{data: 'aGk=', media_type: png}]", "media_type 'png' is not a MIME type"),
        ("[]", "user: an empty list sends nothing"),
    ],
)
def test_a_bad_attachment_is_one_located_error(tmp_path: Path, items: str, expected: str) -> None:
    folder = tmp_path / "suite"
    (tmp_path / "outside.txt").write_text("secret", encoding="utf-8")
    errors = _errors(folder, _user(items))
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{folder}/scenario.yaml:3:"), errors[0]
    assert expected.format(dir=folder) in errors[0]


def test_a_symbolic_link_out_of_the_folder_is_outside_it(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    (tmp_path / "private.key").write_text("-----BEGIN KEY-----", encoding="utf-8")
    (folder / "innocent.png").symlink_to(tmp_path / "private.key")
    (error,) = _errors(folder, _user("[{file: innocent.png}]"))
    assert "innocent.png is outside the scenario's folder" in error
    assert "say `outside: true`" in error


def test_outside_true_sends_a_file_from_elsewhere(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    (tmp_path / "shared.png").write_bytes(b"png")
    assert _errors(folder, _user("[{file: ../shared.png, outside: true}]")) == []


def test_a_file_over_the_size_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    with (folder / "huge.bin").open("wb") as sparse:  # a sparse file: nothing is written to disk
        sparse.truncate(MAX_ATTACHMENT_BYTES + 1)
    (error,) = _errors(folder, _user("[{file: huge.bin}]"))
    assert f"more than an attachment may be ({MAX_ATTACHMENT_BYTES})" in error


def test_expect_input_attachments_are_checked_like_the_user_s(tmp_path: Path) -> None:
    text = """\
        name: s
        turns:
          - user: hi
            model:
              - text: x
                expect_input: {attachments: [{file: gone.png}]}
        """
    (error,) = _errors(tmp_path, text)
    assert "turns[0].model[0].expect_input.attachments[0].file: cannot read" in error
    assert ":6:" in error


_A = "{name: a, schema: {type: object}}"
_B = "{name: b, schema: {type: integer}}"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("output: {schema: {type: strnig}}", "output: schema.type: unknown type 'strnig'"),
        ("output: {schema: {type: object}, type: 'a.b:C'}", "output: give the output's schema or its type, not both"),
        ("output: {mode: native}", "mode, name, description and allow_text describe a structured output"),
        ("output: {validators: [{when: {a: 1}}]}", "output.validators[0]: missing required field 'retry'"),
        ("output: {type: not-a-spec}", "output.type"),
        ("agent: 'm:a'\noutput: {validators: [{retry: x}]}", "`output` is for a self-contained agent"),
        (
            "output: {schema: {type: object, properties: {a: {$ref: '#/$defs/Nope'}}}}",
            "schema.properties.a.$ref: '#/$defs/Nope' names no definition",
        ),
        (f"output: {{tools: [{_A}]}}", "output: tools lists two output tools or more"),
        (f"output: {{tools: [{_A}, {_A}]}}", "output: two output tools are named 'a'"),
        (f"output: {{name: x, tools: [{_A}, {_B}]}}", "give no schema, type, name or description beside it"),
        (f"output: {{mode: native, tools: [{_A}, {_B}]}}", "several output tools are mode tool, not native"),
        (f"output: {{tools: [{{name: a}}, {_B}]}}", "output.tools[0]: an output tool gives its schema or its type"),
        (f"output: {{tools: [{_A}, {{schema: {{}}}}]}}", "output.tools[1]: missing required field 'name'"),
    ],
)
def test_a_bad_output_is_one_located_error(tmp_path: Path, body: str, expected: str) -> None:
    text = f"name: s\n{body}\nturns: [{{user: hi, model: [{{text: x}}]}}]\n"
    errors = _errors(tmp_path, text)
    assert len(errors) == 1, errors
    assert expected in errors[0]


@pytest.mark.parametrize(
    ("tool", "expected"),
    [
        ("{results: [{return: 3, outcome: failed}]}", "outcome failed needs `return` with the message, a string"),
        ("{results: [{retry: x, outcome: denied}]}", "outcome denied needs `return`"),
        ("{results: [{abort: true, return: x}]}", "exactly one of return, retry, fail, defer, abort"),
        ("{parameters: {type: object, required: x}}", "tools.t: parameters.required: expected a list"),
        ("{parameters: {type: object, properties: {a: 5}}}", "parameters.properties.a: expected a JSON Schema"),
    ],
)
def test_a_bad_tool_result_or_schema_is_one_located_error(tmp_path: Path, tool: str, expected: str) -> None:
    text = f"name: s\ntools:\n  t: {tool}\nturns: [{{user: hi, model: [{{text: x}}]}}]\n"
    errors = _errors(tmp_path, text)
    assert len(errors) == 1, errors
    assert expected in errors[0]


def test_a_schema_validate_args_false_does_not_read_is_accepted(tmp_path: Path) -> None:
    tool = "t: {validate_args: false, parameters: {type: strnig}}"
    text = f"name: s\ntools:\n  {tool}\nturns: [{{user: hi, model: [{{text: x}}]}}]\n"
    assert _errors(tmp_path, text) == []


@pytest.mark.parametrize(
    ("error", "message"),
    [
        ("{kind: rate_limit, status: 500}", "status 500 does not fit kind rate_limit (429..429)"),
        ("{kind: connection, status: 502}", "status 502 does not fit kind connection (no status (it never got one))"),
        ("{kind: request_rejected, status: 429}", "status 429 does not fit kind request_rejected"),
    ],
)
def test_a_provider_error_status_must_fit_its_kind(tmp_path: Path, error: str, message: str) -> None:
    (found,) = _errors(tmp_path, f"name: s\nturns: [{{user: hi, model: [{{error: {error}}}]}}]\n")
    assert message in found


def test_a_scripted_call_of_the_output_tool_is_a_known_tool(tmp_path: Path) -> None:
    body = (
        "output: {schema: {type: object}, name: answer}\n"
        "turns: [{user: hi, model: [{tool_calls: [{id: a, name: %s}]}]}]\n"
    )
    assert _errors(tmp_path, "name: s\n" + body % "answer") == []
    (error,) = _errors(tmp_path, "name: s\n" + body % "final_result")
    assert "the agent has no tool 'final_result'" in error
    assert "its tools: 'answer'" in error


def test_a_scripted_call_of_any_of_several_output_tools_is_a_known_tool(tmp_path: Path) -> None:
    body = f"output: {{tools: [{_A}, {_B}]}}\nturns: [{{user: hi, model: [{{tool_calls: [{{id: a, name: %s}}]}}]}}]\n"
    assert _errors(tmp_path, "name: s\n" + body % "a") == []
    assert _errors(tmp_path, "name: s\n" + body % "b") == []
    (error,) = _errors(tmp_path, "name: s\n" + body % "final_result")
    assert "its tools: 'a', 'b'" in error


def test_a_thought_is_text_or_the_thought_with_its_provider_fields(tmp_path: Path) -> None:
    text = """\
        name: s
        turns:
          - user: hi
            model:
              - {thought: plain, text: a}
              - text: b
                thought: {content: signed, signature: sig, provider_name: openai, id: rs_1, provider_details: {k: 1}}
        """
    path = tmp_path / "scenario.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    (loaded,) = load_scenario_file(path)
    plain, signed = (step.scripted_thought for step in loaded.scenario.turns[0].model)
    assert plain is not None
    assert (plain.content, plain.signature) == ("plain", None)
    assert signed is not None
    assert (signed.signature, signed.provider_name, signed.id, signed.provider_details) == (
        "sig",
        "openai",
        "rs_1",
        {"k": 1},
    )


def test_an_attachment_file_removed_after_loading_is_a_scenario_error_at_run_time(tmp_path: Path) -> None:
    from agentrig.runtime.models.attachments import turn_prompt

    (tmp_path / "cat.png").write_bytes(b"png")
    path = tmp_path / "scenario.yaml"
    path.write_text(_user('["Look:", {file: cat.png}]'), encoding="utf-8")
    (loaded,) = load_scenario_file(path)
    os.remove(tmp_path / "cat.png")
    with pytest.raises(ScenarioError) as raised:
        turn_prompt(loaded, 0)
    assert str(raised.value).startswith(f"{path}:3:")
    assert "turns[0].user[1].file: cannot read" in str(raised.value)
