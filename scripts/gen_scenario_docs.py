"""Generate docs/scenarios.md, the scenario format reference, from the models in `agentrig.scenarios.model`,
and the stored JSON Schema `agentrig schema` prints (src/agentrig/scenarios/scenario.schema.json).

    python scripts/gen_scenario_docs.py            # rewrite both
    python scripts/gen_scenario_docs.py --check    # exit 1 if either is out of date

The intro and the examples are written here by hand; every field (type, default, description) comes from
the models, so the reference cannot drift. tests/scenarios/test_docs.py checks the committed file equals
this output and that every YAML example in it validates.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from agentrig.scenarios import control_expectations, event_model, model, turn_controls, ui_model
from agentrig.scenarios.field_docs import field_docstrings

DOCS_PATH = Path(__file__).resolve().parent.parent / "docs" / "scenarios.md"
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "src" / "agentrig" / "scenarios" / "scenario.schema.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class Example:
    """One example scenario file shown in the docs."""

    title: str
    """Section heading."""
    file_name: str
    """The file name the example is shown as (and written to by tests and the bench)."""
    explanation: str
    """Markdown shown above the YAML."""
    yaml: str
    """The complete scenario file."""


SUPPORT_FILES: dict[str, str] = {
    "prompts/terse.md": "You are terse. Answer in one sentence.\n",
    "photos/receipt.png": "(the bytes of a PNG image)\n",
    "docs/receipt-scan": "(the bytes of a PDF file)\n",
    "AGENTS.md": "# Project guide\n\nRun `make test` before answering.\n",
    "histories/interrupted.json": '{"format": "agentrig.history/1", "messages": []}\n',
}
"""Files the examples refer to, relative to the examples' directory (tests and the bench write them)."""

EXAMPLES: tuple[Example, ...] = (
    Example(
        title="A self-contained agent with YAML tools",
        file_name="yaml_tools.yaml",
        explanation="""No Python needed: the agent is built from `system_prompt` and `tools`. Each tool answers from
its `results` rules, tried in order: by arguments (`when`), by call order (`call`), with a `retry`
(the tool raises `ModelRetry`), a `fail`ure, or after a `delay`. A call no rule matches fails the
scenario with a message naming the call.""",
        yaml="""\
name: yaml-tools
description: Rules picked by arguments, by call order, retry and failure.
tags: [tools, self-contained]
system_prompt: You are a careful shell assistant.
tools:
  bash:
    description: Run a shell command.
    parameters:
      type: object
      properties: {command: {type: string}}
      required: [command]
    results:
      - when: {command: ls}
        return: "a.txt\\nb.txt"
      - when: {command: cat a.txt}
        call: 2                      # only the 2nd call of bash in the scenario
        return: hello
      - when: {command: rm -rf /}
        fail: refusing to run that   # non-retryable: the turn ends with a tool_failed error
      - retry: unknown command       # anything else: the model is asked to try again
  slow_search:
    description: Search the web (slowly).
    results:
      - return: {hits: 3}
        delay: 0.2                   # seconds, exercises timeouts and parallel calls
turns:
  - user: List the files, then search.
    model:
      - tool_calls:
          - {id: tc_1, name: bash, args: {command: ls}}
          - {id: tc_2, name: slow_search, args: {}}
        usage: {input_tokens: 120, output_tokens: 20}
      - tool_calls: [{id: tc_3, name: bash, args: {command: cat a.txt}}]
        usage: {input_tokens: 180, output_tokens: 12}
      - text: a.txt says hello; 3 hits.
        usage: {input_tokens: 210, output_tokens: 8}
    expect:
      output: {contains: hello}
      tool_calls:
        sequence:
          - {name: bash, args: {command: ls}}
          - {name: slow_search}
          - {name: bash, args: {command: cat a.txt}}
      usage: {requests: 3, input_tokens: 510}
""",
    ),
    Example(
        title="Testing your own agent",
        file_name="own_agent.yaml",
        explanation="""`agent: module:attribute` names your `Agent` (or a function with no arguments that builds one).
Its real tools run; only its model is replaced by the script. YAML `tools` are not allowed here:
the tools are your agent's. Run it against a real model with `agentrig run --model provider:name`;
the script is then ignored and script-only expectations are skipped with a reason.""",
        yaml="""\
name: own-agent-weather
agent: myapp.agents:build_agent
turns:
  - user: What's the weather in Paris?
    model:
      - tool_calls: [{id: tc_1, name: get_weather, args: {city: Paris}}]
        usage: {input_tokens: 90, output_tokens: 15}
      - text: Sunny, 21 degrees.
        usage: {input_tokens: 140, output_tokens: 7}
    expect:
      tool_calls: {used: [get_weather], counts: {get_weather: 1}}
      output: {regex: '\\d+ degrees'}
""",
    ),
    Example(
        title="Scripted model steps",
        file_name="scripted_steps.yaml",
        explanation="""One file may hold a list of scenarios. Each `model` step is one model response, in order: text,
a `thought`, several `tool_calls` (run in parallel), raw-string `args` (malformed JSON on purpose),
explicit `usage` (give it on every step: pydantic-ai's estimate differs between versions), an
`empty` response, a provider `error`, a response the provider ends early (`cut`: the turn fails with
`incomplete_response` and keeps the text that arrived), a `delay`, an `abort` point, a tool call written inside
the text (fallback parsing), and `expect_input` checks on what the model received.""",
        yaml="""\
- name: steps-thought-and-parallel-calls
  system_prompt_file: prompts/terse.md     # relative to this file
  context_file: AGENTS.md                  # appended under <user_context>
  tools:
    read: {results: [{return: contents}]}
    grep: {results: [{return: "3 matches"}]}
  turns:
    - user: Read and grep.
      model:
        - thought: I need both files.
          tool_calls:
            - {id: tc_1, name: read, args: {path: a.txt}}
            - {id: tc_2, name: grep, args: {pattern: TODO}}
          usage: {input_tokens: 100, output_tokens: 30}
        - text: Done.
          usage: {input_tokens: 150, output_tokens: 3}
          expect_input:
            no_dangling_tool_calls: true
            contains_text: [contents, "3 matches"]
            tools: [read, grep]

- name: steps-malformed-args-and-empty
  tools:
    read: {results: [{return: ok}]}
  turns:
    - user: Go.
      model:
        - tool_calls: [{id: tc_1, name: read, args: '{"path": "a.txt"'}]   # invalid JSON
          usage: {input_tokens: 50, output_tokens: 10}
        - empty: true                      # no parts at all
          usage: {input_tokens: 60, output_tokens: 0}
        - text: Recovered.
          usage: {input_tokens: 70, output_tokens: 2}

- name: steps-provider-error
  turns:
    - user: Summarize everything.
      model:
        - error: {kind: context_length, message: "maximum context length is 8192 tokens"}
      expect:
        error: {kind: context_length, contains: maximum context}

- name: steps-cut-response
  turns:
    - user: Tell me a story.
      model:
        - text: Once upon a ti       # what arrived before the stream ended, kept as [INTERRUPTED] Once upon a ti
          cut: true
          usage: {input_tokens: 30, output_tokens: 4}
      expect:
        error: {kind: incomplete_response, contains: ended early}

- name: steps-delay-and-abort
  settings: {timeout: 5}
  turns:
    - user: Write a long essay.
      model:
        - delay: 0.5
          abort: true
          text: The essay begins     # partial text kept in the [INTERRUPTED] response
      expect: {interrupted: true}
    - user: Start again, shorter.
      model:
        - text: Short essay.
          usage: {input_tokens: 40, output_tokens: 3}

- name: steps-fallback-tool-call
  tools:
    bash: {results: [{return: "a.txt"}]}
  turns:
    - user: List files.
      model:
        - text: '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>'
          usage: {input_tokens: 30, output_tokens: 20}
        - text: One file.
          usage: {input_tokens: 60, output_tokens: 3}
      expect:
        tool_calls: {used: [bash]}
""",
    ),
    Example(
        title="Expectations, per turn and per scenario",
        file_name="expectations.yaml",
        explanation="""`expect` under a turn checks that turn; `expect` at the top checks the whole scenario (the same
checks on the final state, plus history `invariants` and a `golden` canonical history compared
exactly). A missing golden file is a warning for `agentrig validate`; `agentrig run --update-golden`
writes it. `initial_history` resumes from a stored history.

A scripted call to a tool the agent does not have (`fetsh` for `fetch`) is never green, although
pydantic-ai only answers it with a retry prompt ("Unknown tool name: ..."). For a self-contained
agent the file is invalid (`validate` and `run` name it, with a did-you-mean); for your own agent
(`agent:`) the scenario fails with the check `scenario: tool call ID names a tool the agent has`.
When a script calls an unknown tool on purpose (to test how the agent recovers), say so in a
`tool_calls` expectation of the turn or the scenario: name the tool in `used`, `sequence` or
`counts`, or the call's id in `status` (its status is `failed`). The scripts of sub-agents (`agents:`) are
checked the same way, in the histories of their runs (`agent M:A: tool call ID names a tool the agent has`);
the `tool_calls` expectations describe the scenario's agent, so such a call always fails.""",
        yaml="""\
name: expectations-tour
initial_history: histories/interrupted.json
tools:
  bash: {results: [{return: "a.txt"}]}
turns:
  - user: List the files.
    model:
      - tool_calls: [{id: tc_1, name: bash, args: {command: ls}}]
        usage: {input_tokens: 120, output_tokens: 14}
      - text: One file, a.txt.
        usage: {input_tokens: 160, output_tokens: 5}
    expect:
      output: {contains: [a.txt], not_contains: error}
      tool_calls:
        sequence: [{name: bash, args: {command: ls}, args_match: exact, id: tc_1}]
        status: {tc_1: completed}
      usage:
        requests: 2
        output_tokens: {min: 10, max: 30}
expect:
  invariants: all
  usage: {requests: 2, input_tokens: 280, total_tokens: {max: 400}}
  tool_calls: {not_used: [rm]}
  golden: golden/expectations-tour.json
""",
    ),
    Example(
        title="Deferred tool calls",
        file_name="deferred.yaml",
        explanation="""A tool result with `defer: true` hands the call to the host: the turn ends with the call pending.
The next turn gives the host's answer in `deferred_results` (by tool_call_id) and has no `user`
message: the run continues where it stopped.""",
        yaml="""\
name: deferred-approval
tools:
  deploy:
    description: Deploy the app (a human approves it).
    results: [{defer: true}]
turns:
  - user: Deploy to production.
    model:
      - tool_calls: [{id: tc_1, name: deploy, args: {env: prod}}]
        usage: {input_tokens: 80, output_tokens: 12}
  - deferred_results: {tc_1: approved and deployed}
    model:
      - text: Deployed to production.
        usage: {input_tokens: 120, output_tokens: 5}
    expect:
      output: {equals: Deployed to production.}
""",
    ),
    Example(
        title="Steering and cancellation",
        file_name="steering.yaml",
        explanation="""`steer` enqueues messages during the turn, as a host does with pydantic-ai's
`enqueue(priority='asap')`: `from_call` from inside the tool running that call (`RunContext.enqueue`),
`after_call` once that call returned and `after_request` once the turn's Nth request was answered (both
`AgentRun.enqueue`). Every steering message is checked to reach the model once per request from the request that
carried it on and to be stored once; `expect.steering` names that request, or says it stayed `pending`. `cancel`
cancels the turn through pydantic-ai's `CancellationToken`: `before_request`, `during_response` after
`after_chunks` chunks, or `during_call`; `expect.cancelled` checks pydantic-ai's `RunCancelled` snapshot. A
steering message a cancelled turn did not deliver is left out of the saved turn and rides with the next turn's first
request. Where pydantic-ai versions store a message differently, `stored` lists the placement per version
(`when_pydantic_ai`): the check holds each version to its own, and `agentrig matrix` names the difference. A point
that names a call or a request the turn's script never makes is an error at its line.""",
        yaml="""\
name: steering-tour
tools:
  notify: {results: [{return: notified}]}
  slow: {results: [{return: never}]}
turns:
  - user: go
    steer:
      - text: "STEER: also check the logs"
        from_call: notify_1
      - text: "STEER: then stop"
        after_request: 2
    model:
      - tool_calls: [{id: notify_1, name: notify}]
        usage: {input_tokens: 100, output_tokens: 10}
      - text: Checked the logs.
        usage: {input_tokens: 120, output_tokens: 5}
      - text: Stopping.
        usage: {input_tokens: 130, output_tokens: 2}
    expect:
      steering:
        - text: "STEER: also check the logs"
          request: 2
          stored:
            - {when_pydantic_ai: "<2.59", placement: own_request}
            - {when_pydantic_ai: ">=2.59", placement: with_tool_return}
        - {text: "STEER: then stop", request: 3, stored: own_request}
  - user: Check slowly.
    cancel: {during_call: slow_1}
    model:
      - tool_calls: [{id: slow_1, name: slow}]
        usage: {input_tokens: 150, output_tokens: 8}
    expect:
      interrupted: true
      cancelled: {unresolved_calls: [slow_1], kept_results: [], requests: 1}
""",
    ),
    Example(
        title="Host-action chains",
        file_name="host_actions.yaml",
        explanation="""When a run defers several calls to the host, a continuation may answer them one at a time: each
result that is not the last is held and the next call handed over without a model run (`usage.requests` 0), and
the model resumes only with the last result, getting all of them in one request. `pending_calls` names the calls
still waiting for the host after a turn, in call order.""",
        yaml="""\
name: host-chain-tour
tools:
  open_file: {description: Opened by the host., results: [{defer: true}]}
turns:
  - user: Open both files.
    model:
      - tool_calls: [{id: h1, name: open_file, args: {path: a}}, {id: h2, name: open_file, args: {path: b}}]
        usage: {input_tokens: 50, output_tokens: 20}
    expect: {pending_calls: [h1, h2]}
  - deferred_results: {h1: opened a}
    expect: {pending_calls: [h2], usage: {requests: 0}}
  - deferred_results: {h2: opened b}
    model:
      - text: Both open.
        usage: {input_tokens: 90, output_tokens: 3}
    expect: {pending_calls: [], output: {equals: Both open.}}
""",
    ),
    Example(
        title="Capabilities, history processors and optional extras",
        file_name="capabilities.yaml",
        explanation="""`capabilities` attaches your pydantic-ai capabilities (an `AbstractCapability` or a zero-argument
factory, by `module:attribute`) to every run; `history_processors` attaches functions as `ProcessHistory`.
`expect_input` on each step checks what the model was sent after them. `requires` names the optional extras a
scenario needs (`ag-ui`, `vercel-ai`, `harness`): where one is missing the scenario is refused with one line
naming it (status `error`, exit code 3: the scenario did not run, so the run is not green; `nox` installs them
all). `agentrig matrix` installs the extras its scenarios require in each version's environment. The tinyagent
engine refuses all three, with the reason.""",
        yaml="""\
name: capabilities-tour
capabilities: ["myapp.policy:clear_old_tool_results"]
history_processors: ["myapp.policy:keep_recent"]
requires: [harness]
turns:
  - user: Hello.
    model:
      - text: Hi.
        usage: {input_tokens: 10, output_tokens: 1}
        expect_input: {message_count: 1, not_contains_text: ["contents of a"]}
""",
    ),
    Example(
        title="Attachments: images, documents, audio and URLs",
        file_name="attachments.yaml",
        explanation="""A turn's `user` may be a list: text pieces and attachments, in order, as pydantic-ai's
`UserPromptPart` holds them (`BinaryContent`, `ImageUrl`, `DocumentUrl`, `AudioUrl`, `VideoUrl`). A `file` is read
relative to the scenario file and sent as its bytes, its media type taken from its extension unless `media_type`
says; `data` gives the bytes inline as base64. A file outside the scenario's folder is an error unless the
attachment says so (`{file: ../shared/logo.png, outside: true}`), so a scenario never sends a file from elsewhere on
the machine by accident; a file larger than 32 MiB, or one that is not a regular file, is an error at its line. A
URL is sent as a URL: agentrig never fetches it (with a real model, `force_download: true` asks pydantic-ai to). The
canonical history keeps every attachment with its media type and the SHA-256 of its bytes
(docs/canonical-format.md). `expect_input.attachments` checks, in the same words, exactly which attachments the
model received, in order, over every message it was sent (a file compared by its content). Reports name each
attachment by a label: `<image/png, 73 bytes, sha256:4c44f00a5f49>`, `<image-url https://...>` in report.json's
prompt, the failure text of `agentrig run` and summary.md (`the model was asked: user-prompt "..." + <...>`), and a
chip with its kind, media type, size and hash in report.html (docs/report.md). A golden file keeps the bytes (as
base64), but its diff in a failure shows an attachment's `data` by size and hash
(`"data": "<73 bytes in base64, sha256:4c44f00a5f49>"`), and so does report.html's diff against a baseline.""",
        yaml="""\
name: attachments-tour
tags: [attachments]
turns:
  - user:
      - Compare the photo, the receipt and the contract; then listen to the memo.
      - file: photos/receipt.png               # bytes, image/png from the extension
      - {file: docs/receipt-scan, media_type: application/pdf, identifier: receipt-1}
      - {data: "U2hpcCBieSBGcmlkYXku", media_type: text/plain}
      - image_url: https://example.com/photo.jpg
        vendor_metadata: {detail: high}        # provider options, e.g. OpenAI's image detail
      - {document_url: https://example.com/contract, media_type: application/pdf}
      - {audio_url: https://example.com/memo.mp3, force_download: true}
      - video_url: https://example.com/demo.mp4
    model:
      - text: The receipt matches the contract.
        expect_input:
          attachments:
            - file: photos/receipt.png
            - {file: docs/receipt-scan, media_type: application/pdf}
            - {data: "U2hpcCBieSBGcmlkYXku", media_type: text/plain}
            - image_url: https://example.com/photo.jpg
            - {document_url: https://example.com/contract, media_type: application/pdf}
            - audio_url: https://example.com/memo.mp3
            - video_url: https://example.com/demo.mp4
        usage: {input_tokens: 3000, output_tokens: 7}
""",
    ),
    Example(
        title="Structured output and output validators",
        file_name="structured_output.yaml",
        explanation="""`output` gives a self-contained agent an output type: a JSON Schema inline (`schema`) or a
Python type by `module:attribute` (`type`), delivered as `mode` says: `tool` (the model calls the output tool,
`final_result` unless `name` says), `native` (the provider's structured output: JSON text) or `prompted` (the
instructions ask for JSON text). pydantic-ai validates the output against it, so an output that does not fit gets
pydantic's error details as its retry prompt, as a real agent's would; a schema that is not an object is wrapped
as `{response: ...}` by pydantic-ai, as an `int` output is. `validators` are an `@agent.output_validator` as
rules: the first rule that matches an output (`when`: its JSON contains this; `contains`: its text does; `call`:
the Nth output judged in the scenario) asks the model to try again with `retry`. Without `schema` or `type` the
output is text and the validators judge the text. A union of output types (pydantic-ai's `output_type=[A, B]`) is
`tools`, instead of `schema` or `type`: two output tools or more, each with its `name` and its `schema` or `type`
(and `description`); the model ends the run by calling any of them (pydantic-ai names a bare member
`final_result_<Type>`, which is the name to give to replay its runs). A conversation ended by an output tool
replays without the application's code. `settings.output_retries` bounds the retries, as pydantic-ai's
`retries={'output': n}`.""",
        yaml="""\
- name: structured-output-tour
  output:
    schema:
      type: object
      properties:
        order_id: {type: integer}
        status: {enum: [pending, shipped]}
      required: [order_id, status]
    mode: tool
    name: order_status
    description: Where the order is.
    allow_text: false                  # true: a plain text answer ends the run too
    validators:
      - when: {status: pending}
        retry: Look the order up first.
  settings: {output_retries: 2}
  turns:
    - user: Where is order 42?
      model:
        - tool_calls: [{id: out_1, name: order_status, args: {order_id: 42, status: pending}}]
          usage: {input_tokens: 80, output_tokens: 12}
        - tool_calls: [{id: out_2, name: order_status, args: {order_id: 42, status: shipped}}]
          expect_input: {contains_text: ["Look the order up first."]}
          usage: {input_tokens: 110, output_tokens: 12}
      expect:
        output: {json_equals: {order_id: 42, status: shipped}}

- name: structured-output-model-tour
  output:
    type: myapp.models:OrderStatus     # a pydantic model of the application
    mode: prompted
    validators:
      - call: 1
        retry: Give the days until it arrives.
      - contains: '"eta_days":null'
        retry: The days are known for a shipped order.
  turns:
    - user: Where is order 42?
      model:
        - text: '{"order_id": 42, "status": "shipped"}'
          usage: {input_tokens: 140, output_tokens: 14}
        - text: '{"order_id": 42, "status": "shipped", "eta_days": 2}'
          usage: {input_tokens: 170, output_tokens: 16}

- name: union-output-tour
  output:
    tools:                             # output_type=[Point, ToolOutput(int, name="count")]
      - name: final_result_Point
        schema: {type: object, properties: {x: {type: integer}, y: {type: integer}}, required: [x, y]}
      - name: count
        schema: {type: integer}        # called as {response: 3}
        description: How many there are.
  turns:
    - user: Where is it?
      model:
        - tool_calls: [{id: out_1, name: final_result_Point, args: {x: 1, y: 2}}]
      expect:
        output: {json_equals: {x: 1, y: 2}}
    - user: How many?
      model:
        - tool_calls: [{id: out_2, name: count, args: {response: 3}}]
      expect:
        output: {json_equals: 3}
""",
    ),
    Example(
        title="Tool outcomes, argument validation, aborts, thoughts and provider errors",
        file_name="outcomes.yaml",
        explanation="""A YAML tool validates the model's arguments against its `parameters` as pydantic-ai
validates a real function's (unless `validate_args: false`): arguments that do not fit get pydantic's error
details as a retry prompt and never reach `results`, which see the validated arguments with defaults filled in.
A `return` may end the call `failed` (pydantic-ai's `ToolFailed`: the model reads the failure and the run goes on,
unlike `fail`, which ends the turn) or `denied` (`ToolDenied`); `abort` cancels the run while the tool runs, as
Ctrl-C would. A `thought` may carry what its provider attached (`signature`, `provider_name`, `id`,
`provider_details`), kept in the history and sent back. An `error` step may be any 4xx a provider refuses a
request with (`request_rejected`), and give the HTTP `status` when it is not the kind's usual one.""",
        yaml="""\
name: outcomes-tour
tools:
  read_file:
    parameters:
      type: object
      properties: {path: {type: string, minLength: 1}}
      required: [path]
      additionalProperties: false
    results:
      - when: {path: missing.txt}
        return: "No such file: missing.txt"
        outcome: failed                # a failed result the model reads; the run goes on
      - return: hello
  delete_file:
    validate_args: false               # every call reaches the rules as the model wrote it
    results:
      - {return: Deleting is not allowed here., outcome: denied}
  build:
    results:
      - abort: true                    # Ctrl-C while the tool runs: the turn ends [INTERRUPTED]
turns:
  - user: Read missing.txt, then delete it.
    model:
      - thought:
          content: Read first.
          signature: sig-abc
          provider_name: anthropic
          id: rs_1
          provider_details: {redacted: false}
        tool_calls:
          - {id: tc_1, name: read_file, args: {path: missing.txt}}
          - {id: tc_2, name: read_file, args: {file: notes.txt}}   # not in the schema: a retry prompt
          - {id: tc_3, name: delete_file, args: {path: missing.txt}}
        usage: {input_tokens: 90, output_tokens: 30}
      - error: {kind: request_rejected, status: 404, message: "The model does not exist"}
    expect:
      error: {kind: request_rejected, contains: "HTTP 404"}
      tool_calls: {status: {tc_1: failed, tc_2: failed, tc_3: failed}}
  - user: Build it.
    model:
      - tool_calls: [{id: tc_4, name: build, args: {}}]
        usage: {input_tokens: 120, output_tokens: 8}
    expect:
      interrupted: true
""",
    ),
    Example(
        title="A UI-protocol turn (AG-UI, Vercel AI)",
        file_name="ui_turn.yaml",
        explanation="""A turn with `ui:` is one request a frontend sends: an AG-UI `RunAgentInput` (thread, messages,
frontend tools) or a Vercel AI SDK chat request, as `input` (a mapping, written as the protocol spells it),
`input_file` (a JSON file) or `body` (raw text, for a malformed request). pydantic-ai's adapter reads it
(`from_request`, `build_run_input`, `load_messages`), the agent runs on the conversation the request carries (it
replaces the stored one, as the adapter hands the client's messages to the agent; agentrig's history preparation does
not apply), AG-UI's frontend tools are the model's in that turn (a call to one pauses the run for the client), and
the adapter's own event stream encodes the run (`transform_stream`, `encode_event`): the run always streams, as the
adapter's does. A request the adapter refuses gets the answer its `dispatch_request` gives (a 422 with the validation
errors, a 415 for another content type from pydantic-ai 2.44, a 500 when the adapter raises) and nothing runs.
`expect.ui` checks a turn's status (200 unless it says otherwise, or per version with `when_pydantic_ai`) and its
events in order (each a JSON subset of one event); `expect.ui_events` compares every UI turn's events with a golden
file, the ids and timestamps the adapter makes up masked, and states the fields that differ between versions
(the first variant whose `when_pydantic_ai` / `when_ag_ui_protocol` match holds them). Every answer is written to
the scenario's `ui_answers.json`. The turn needs its protocol's extra (`requires` may list it; missing, the scenario
is refused at the turn's `ui.protocol`); the tinyagent engine refuses UI turns.""",
        yaml="""\
name: ui-tour
requires: [ag-ui]
turns:
  - ui:
      protocol: ag-ui
      input:
        threadId: thread-1
        runId: run-1
        state: {}
        context: []
        forwardedProps: {}
        messages: [{id: u1, role: user, content: Book a table.}]
        tools: [{name: confirm, description: Ask the user., parameters: {type: object}}]
    model:
      - tool_calls: [{id: tc_1, name: confirm}]
        usage: {input_tokens: 40, output_tokens: 8}
    expect:
      pending_calls: [tc_1]
      ui:
        events:
          - {type: TOOL_CALL_START, toolCallId: tc_1, toolCallName: confirm}
          - {type: RUN_FINISHED}
  - ui: {protocol: ag-ui, body: "{not json"}
    expect:
      ui: {status: 422, body_contains: json_invalid}
expect:
  ui_events:
    golden: golden/ui-tour.events.json
    versions:
      - {when_pydantic_ai: ">=2.63", when_ag_ui_protocol: ">=1.0",
         fields: {RUN_STARTED: {protocolVersion: "1.0"}, TEXT_MESSAGE_START: {role: assistant}}}
      - {when_ag_ui_protocol: "<1.0", fields: {TEXT_MESSAGE_START: {role: assistant}}}
      - {when_pydantic_ai: "<2.63", fields: {}}
""",
    ),
    Example(
        title="pydantic-ai's own history cleanup",
        file_name="public_cleanup.yaml",
        explanation="""Before every run agentrig prepares the stored history (the loop contract: dangling calls and
orphaned results removed, consecutive requests merged), so by default what the model receives shows agentrig's
cleanup. `settings.prepare_history: false` hands the stored history to pydantic-ai as it is, and the scenario proves
pydantic-ai's own: `synthesized_returns` names the calls that reached the model closed by a return pydantic-ai
synthesized (`interrupted`), `not_contains_text` an orphaned result it dropped. The tinyagent engine refuses both.""",
        yaml="""\
name: public-cleanup-tour
initial_history: histories/interrupted.json
settings: {prepare_history: false}
turns:
  - user: Go on.
    model:
      - text: Going on.
        usage: {input_tokens: 30, output_tokens: 3}
        expect_input: {synthesized_returns: [], not_contains_text: [stale]}
""",
    ),
    Example(
        title="Settings",
        file_name="settings.yaml",
        explanation="""`settings` changes how the run behaves: iteration and usage limits, retries, a per-turn timeout,
pruning of old tool outputs and context compaction (a `summary` step answers the summarize request).""",
        yaml="""\
name: settings-tour
settings:
  max_iterations: 5
  tool_retries: 2
  timeout: 30
  request_limit: 10
  total_tokens_limit: 50000
  prune_keep_recent_tool_outputs: 3
  compaction: {context_window: 4000, reserve: 500, keep_recent: 1000}
turns:
  - user: Hello.
    model:
      - text: Hi.
        usage: {input_tokens: 10, output_tokens: 1}
    expect:
      compaction: {status: skipped, reason: below_threshold}
""",
    ),
    Example(
        title="Judged checks and limits",
        file_name="judged.yaml",
        explanation="""`judge` grades the output (or, with `of: conversation`, the whole conversation) against a rubric
and, with `reference`, a reference answer: the check passes when the verdict's `pass` is true and its `score` is at
least `threshold`, and every report shows the score and the reason beside it. A `script` is the verdict of an
offline judge; `model: openai:gpt-4o` asks a real one ([evaluation.md](evaluation.md)). At scenario level
`max_latency_s`, `max_cost_usd` and `max_requests` bound what the run measured.""",
        yaml="""\
name: refund-policy
system_prompt: You are a support agent. Refunds take 5 business days.
turns:
  - user: When do I get my money back?
    model:
      - text: Your refund arrives within 5 business days.
    expect:
      judge:
        rubric: States the refund delay and stays polite.
        reference: Refunds take 5 business days.
        threshold: 0.7
        script: {pass: true, score: 0.9, reason: States the 5-day delay politely.}
expect:
  max_latency_s: 30
  max_cost_usd: 0.02
  max_requests: 3
""",
    ),
    Example(
        title="A simulated user",
        file_name="simulated.yaml",
        explanation="""`simulate` lets a user model write the turn's user messages from a `persona` and a `goal`: the
turn's `user` is sent first, then the user model is shown the conversation and writes the next message (or says it
is done), for up to `max_turns` turns or until an answer meets `stop`. Each message runs as an ordinary turn (the
agent's `model` steps answer them in order), so the run folder holds an ordinary conversation `agentrig scaffold`
scripts; `expect` holds after the last one. A `script` is an offline user writing its messages in order; `model:
openai:gpt-4o` asks a real one ([evaluation.md](evaluation.md#simulated-users)).""",
        yaml="""\
name: refund-chat
system_prompt: You are a support agent. Refunds take 5 business days.
turns:
  - user: Hi, I sent back order A-1001.
    simulate:
      persona: An impatient customer who returned order A-1001.
      goal: Learn when the refund arrives.
      max_turns: 4
      stop: {contains: business days}
      script: ["When do I get my money?", Thanks.]
    model:
      - text: I see the return of order A-1001.
      - text: Within 5 business days of the return arriving.
    expect:
      output: {contains: 5 business days}
""",
    ),
)


INTRO = """\
# Scenario files

A scenario is a YAML file that describes an agent, a conversation, the model's scripted answers and
what must hold afterwards. `agentrig run` executes scenarios against pydantic-ai's `FunctionModel`
(offline, deterministic) or a real model (`--model provider:name`); `agentrig validate` checks them
without running anything.

<!-- Generated by scripts/gen_scenario_docs.py from src/agentrig/scenarios/*_model.py. Do not edit by hand:
     change the models' field docstrings or the script, then run `python scripts/gen_scenario_docs.py`. -->

## Files and discovery

- A file holds one scenario (a mapping) or a list of scenarios. Scenario names are unique across
  everything loaded together.
- Given a directory, agentrig reads every `*.yaml` and `*.yml` below it, in sorted order, skipping
  directories named `golden` or `recordings`, hidden directories, and files whose name starts with `_`.
  A file named explicitly on the command line is always read.
- File names inside a scenario (`system_prompt_file`, `context_file`, `initial_history`, an attachment's
  `file`, `expect.golden`) are relative to the scenario file. Missing files are errors, except a golden
  file, which `agentrig run --update-golden` writes (a directory in its place is an error). An attachment's
  file must lie inside the scenario file's folder unless the attachment says `outside: true`.
- Unknown keys are errors (with a suggestion for typos), and so are duplicate keys. YAML is read
  with the safe loader: no Python object tags. Anchors and aliases work, but a file whose aliases
  expand to more than a million values (an "alias bomb"), or add more than 16 million characters to
  the text the file holds (one long string aliased thousands of times), or refer to a value containing
  them is an error at that line.
- Every value ends up in a JSON file, so an integer outside the 64-bit range (a 30-digit number) is an
  error at its line, and a scripted step's token counts are at most a trillion each.
- A scenario file whose name is not UTF-8 is an error (the reports name every file); rename it.
- A scenario file, and a `system_prompt_file` or `context_file` it names, is a regular file of at most
  16 MiB; a FIFO, a device (`/dev/zero`) or a larger file is an error before it is read
  ([exit-codes.md](exit-codes.md#input-files-regular-files-within-a-limit)). `initial_history` and
  `expect.golden` are JSON files: at most 256 MiB.

## Checking files

```
$ agentrig validate scenarios/
ok     scenarios/tool_roundtrip.yaml (1 scenario)
error  scenarios/broken.yaml:14:9: turns[0].model[1].tool_calls[0]: missing required field 'id'
INVALID: 2 files, 1 valid scenario, 1 error in 1 file
```

Every error names file, line, column and the field path. Exit code 0 when every file is valid,
2 otherwise; `--json` prints the same as one JSON object.

## Editor support

`agentrig schema -o scenario.schema.json` writes the JSON Schema (draft 2020-12) of the format.
Editors using yaml-language-server (VS Code's YAML extension, Neovim, Helix) then complete and check
fields when a scenario file starts with:

```
# yaml-language-server: $schema=../scenario.schema.json
```
"""


# --------------------------------------------------------------------------------------------
# The reference, from the models
# --------------------------------------------------------------------------------------------

REFERENCE_GROUPS: tuple[tuple[str, tuple[type[BaseModel], ...]], ...] = (
    ("The scenario", (model.Scenario,)),
    ("Tools", (model.ToolSpec, model.ToolResult)),
    ("Structured output", (model.OutputSpec, model.OutputTool, model.OutputValidatorRule)),
    ("Turns and the scripted model", (
        model.Turn, model.Attachment, model.ApprovalDecision, model.ModelStep, model.ScriptedThought,
        model.ScriptedToolCall, model.ScriptedUsage, model.ScriptedError, model.ModelInputCheck, model.SubAgentScript,
    )),
    ("The host's actions during a turn", (turn_controls.SteeringMessage, turn_controls.CancelPoint)),
    ("Expectations", (
        model.TurnExpectations, model.ScenarioExpectations, model.OutputExpectation, model.ToolCallsExpectation,
        model.ToolCallMatcher, model.UsageExpectation, model.Bounds, model.ErrorExpectation,
        model.CompactionExpectation, control_expectations.SteeringExpectation,
        control_expectations.StoredPlacementWhen, control_expectations.CancellationExpectation,
    )),
    ("Judged checks (docs/evaluation.md)", (model.JudgeExpectation, model.JudgeVerdict)),
    ("Simulated users (docs/evaluation.md)", (model.SimulatedUser, model.SimulationStop)),
    ("UI turns", (
        ui_model.UiRequest, ui_model.UiAnswerExpectation, ui_model.UiStatusWhen, ui_model.UiEventsGolden,
        ui_model.UiEventFields,
    )),
    ("Event log checks (docs/events.md)", (
        event_model.EventExpectations, event_model.EventMatcher, event_model.EventCount,
    )),
    ("Settings", (model.Settings, model.CompactionSettings, model.ProviderSettings)),
)  # fmt: skip
"""Every model reachable from `Scenario`, in reading order (`render` fails if one is missing)."""


def render() -> str:
    """The whole of docs/scenarios.md."""
    _check_every_model_documented()
    sections = [INTRO, "## Examples\n"]
    for example in EXAMPLES:
        sections.append(
            f"### {example.title}\n\n{example.explanation}\n\n`{example.file_name}`:\n\n```yaml\n{example.yaml}```\n"
        )
    sections.append("## Reference\n\nEvery field, its type, its default and what it does.\n")
    for group_title, models in REFERENCE_GROUPS:
        sections.append(f"### {group_title}\n")
        sections.extend(_model_section(model_class) for model_class in models)
    return "\n".join(sections).rstrip() + "\n"


def _model_section(model_class: type[BaseModel]) -> str:
    doc = " ".join((model_class.__doc__ or "").split())
    lines = [
        f"#### {model_class.__name__}\n",
        f"{doc}\n",
        "| Field | Type | Default | Description |",
        "|---|---|---|---|",
    ]
    docstrings = field_docstrings(model_class)
    for name, info in model_class.model_fields.items():
        description = " ".join(docstrings.get(name, "").split()).replace("|", "\\|")
        lines.append(f"| `{info.alias or name}` | {_field_type(info)} | {_default(info)} | {description} |")
    return "\n".join(lines) + "\n"


def _field_type(info: FieldInfo) -> str:
    text = _type_text(info.annotation)
    constraints = [_constraint_text(item) for item in info.metadata]
    shown = [text, *(c for c in constraints if c)]
    return ", ".join(shown).replace("|", "\\|")


def _constraint_text(item: object) -> str:
    if isinstance(item, annotated_types.Ge):
        return f"≥ {item.ge}"
    if isinstance(item, annotated_types.Gt):
        return f"> {item.gt}"
    if isinstance(item, annotated_types.MinLen):
        return f"at least {item.min_length} item{'' if item.min_length == 1 else 's'}"
    pattern = getattr(item, "pattern", None)
    if isinstance(pattern, str):
        return f"matching `{pattern}`"
    return ""


def _type_text(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _type_text(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return " or ".join(_type_text(member) for member in get_args(annotation))
    if origin is Literal:
        values = [f'`"{value}"`' for value in get_args(annotation)]
        return values[0] if len(values) == 1 else "one of " + ", ".join(values)
    if origin in (tuple, list):
        return f"list of {_grouped(_type_text(get_args(annotation)[0]))}"
    if origin is dict:
        value_type = get_args(annotation)[1]
        return "mapping" if value_type is Any else f"mapping to {_grouped(_type_text(value_type))}"
    if annotation is Any:
        return "any"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    return names.get(annotation, str(annotation))


def _grouped(text: str) -> str:
    """Parenthesize a type made of alternatives, so `list of (a or b)` is not read as `(list of a) or b`."""
    return f"({text})" if " or " in text or text.startswith("one of ") else text


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value: Any = info.default_factory()  # pyright: ignore[reportCallIssue]
    elif info.default is PydanticUndefined:
        return "required"
    else:
        value = info.default
    if isinstance(value, BaseModel):
        return "(defaults)"
    return f"`{_yaml_scalar(value)}`"


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_yaml_scalar(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_yaml_scalar(item)}" for key, item in value.items()) + "}"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _check_every_model_documented() -> None:
    documented = {model_class for _, models in REFERENCE_GROUPS for model_class in models}
    reachable: set[type[BaseModel]] = set()
    pending: list[Any] = [model.Scenario]
    while pending:
        annotation = pending.pop()
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation in reachable:
                continue
            reachable.add(annotation)
            pending.extend(info.annotation for info in annotation.model_fields.values())
        else:
            pending.extend(get_args(annotation))
    missing = sorted(model_class.__name__ for model_class in reachable - documented)
    if missing:
        raise SystemExit(f"add these models to REFERENCE_GROUPS in {__file__}: {', '.join(missing)}")


def render_schema() -> bytes:
    """The stored schema file: `scenario_json_schema()` as `agentrig schema` prints it."""
    from agentrig.runtime.runfolder.jsonio import dumps
    from agentrig.scenarios.schema import scenario_json_schema

    return dumps(scenario_json_schema(), pretty=True)


def main(argv: list[str]) -> int:
    """Write docs/scenarios.md and the stored schema, or with `--check` report whether they are up to date."""
    outputs = {DOCS_PATH: render().encode("utf-8"), SCHEMA_PATH: render_schema()}
    if "--check" in argv:
        stale = [path for path, data in outputs.items() if not path.exists() or path.read_bytes() != data]
        for path in stale:
            print(f"{path} is out of date: run python scripts/gen_scenario_docs.py", file=sys.stderr)
        return 1 if stale else 0
    for path, data in outputs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
