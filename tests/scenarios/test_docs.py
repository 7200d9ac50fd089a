"""docs/scenarios.md is generated from the models and its examples are valid scenario files."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

import pytest

from agentrig.scenarios.loader import validation_report
from tests.scenarios.conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "scenarios.md"


def test_committed_docs_equal_the_generator_output(docs_generator: ModuleType) -> None:
    assert DOCS.read_text(encoding="utf-8") == docs_generator.render(), (
        "docs/scenarios.md is stale: run `python scripts/gen_scenario_docs.py`"
    )


def test_every_yaml_example_in_the_docs_validates(docs_generator: ModuleType, tmp_path: Path) -> None:
    blocks = re.findall(r"```yaml\n(.*?)```", DOCS.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert len(blocks) == len(docs_generator.EXAMPLES)
    for relative, text in docs_generator.SUPPORT_FILES.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text, encoding="utf-8")
    for number, block in enumerate(blocks):
        (tmp_path / f"example_{number}.yaml").write_text(block, encoding="utf-8")
    report = validation_report([tmp_path])
    assert [str(error) for error in report.errors] == []
    assert len(report.files) == len(blocks)
    # The one expected warning: the golden file of the expectations example is written by --update-golden.
    assert [warning.field for warning in report.warnings] == ["expect.golden"]


def test_docs_cover_every_model_field(docs_generator: ModuleType) -> None:
    text = DOCS.read_text(encoding="utf-8")
    for _, models in docs_generator.REFERENCE_GROUPS:
        for model_class in models:
            assert f"#### {model_class.__name__}\n" in text
            for name, info in model_class.model_fields.items():
                assert f"| `{info.alias or name}` |" in text, f"{model_class.__name__}.{name}"


def test_check_mode_reports_drift(docs_generator: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "scenarios.md"
    stale.write_text("old\n", encoding="utf-8")
    monkeypatch.setattr(docs_generator, "DOCS_PATH", stale)
    assert docs_generator.main(["--check"]) == 1
    assert docs_generator.main([]) == 0
    assert docs_generator.main(["--check"]) == 0


LANGUAGE_FIELDS = {
    # issue 29: user content, structured output, tool outcomes, thoughts, provider errors
    "Attachment": ("file", "data", "image_url", "document_url", "audio_url", "video_url", "media_type", "identifier",
                   "vendor_metadata", "force_download", "outside"),
    "OutputSpec": ("schema", "type", "mode", "name", "description", "allow_text", "validators", "tools"),
    "OutputTool": ("name", "schema", "type", "description"),
    "OutputValidatorRule": ("when", "contains", "call", "retry"),
    "ScriptedThought": ("content", "signature", "provider_name", "id", "provider_details"),
    "ToolResult": ("outcome", "abort"),
    "ToolSpec": ("validate_args",),
    "ScriptedError": ("status",),
    "ModelInputCheck": ("attachments",),
    "Scenario": ("output",),
}  # fmt: skip


def test_every_field_of_the_scenario_language_has_an_example(docs_generator: ModuleType) -> None:
    examples = "\n".join(f"{example.explanation}\n{example.yaml}" for example in docs_generator.EXAMPLES)
    missing = [
        f"{model}.{field}"
        for model, fields in LANGUAGE_FIELDS.items()
        for field in fields
        if not re.search(rf"(^|[\s{{,-]){re.escape(field)}:(\s|$)", examples, flags=re.MULTILINE)
    ]
    assert missing == []
