"""Scenario files -> validated `LoadedScenario`s, with errors that name file, line, column and field.

A scenario file holds one scenario (a mapping) or several (a list of mappings). Directories are
searched recursively for `*.yaml` / `*.yml`, skipping `golden/` and `recordings/` directories (run
artifacts), hidden directories and files whose name starts with `_` (shared fragments).

    load_paths(paths)      -> every scenario, or raise the first ScenarioError
    iter_scenarios(paths)  -> the same, file by file as they are read (for `agentrig run`)
    validate_paths(paths)  -> (scenarios, every error) (for `agentrig validate`)
    validation_report(...) -> the same, per file, with warnings (what `agentrig validate` prints)

Checks beyond the models: duplicate keys, duplicate scenario names across the loaded set, and files
the scenario names (`system_prompt_file`, `context_file`, `initial_history`, attachments) must exist
(`referenced_files`). A missing `expect.golden` is only a warning: `agentrig run --update-golden` creates it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from pydantic import ValidationError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentrig.errors import ScenarioError
from agentrig.input_files import SCENARIO_FILE_LIMIT, InputFileError, read_input_text, reason_of
from agentrig.scenarios._validation_errors import validation_errors
from agentrig.scenarios._yaml_source import (
    PathElement,
    find_node,
    format_field_path,
    node_position,
    parse_yaml,
    ui_field_lines,
)
from agentrig.scenarios.model import Scenario
from agentrig.scenarios.referenced_files import ScenarioWarning, check_referenced_files
from agentrig.scenarios.tool_names import unknown_tool_call_errors

__all__ = [
    "SKIPPED_DIRECTORIES",
    "FileReport",
    "LoadedScenario",
    "ScenarioWarning",
    "ValidationReport",
    "discover",
    "iter_scenarios",
    "load_paths",
    "load_scenario_file",
    "load_scenario_text",
    "validate_paths",
    "validation_report",
]

SCENARIO_SUFFIXES = (".yaml", ".yml")
SKIPPED_DIRECTORIES = frozenset({"golden", "recordings"})
"""Directories that hold run artifacts next to scenarios, never scenarios."""

USER_CONTEXT_TAG = "user_context"


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedScenario:
    """A validated scenario and where it came from."""

    scenario: Scenario
    """The validated scenario."""
    path: Path
    """The file it was read from, as given (relative paths stay relative)."""
    index: int
    """Its position in the file: 0 for a single-scenario file, else the list index."""
    line: int
    """1-based line where the scenario's mapping starts."""
    base_dir: Path
    """The directory that relative file names in the scenario are resolved against (the file's directory)."""
    in_list: bool = False
    """The file holds a list of scenarios (error field paths then start with the index, e.g. `[2].turns`)."""
    warnings: tuple[ScenarioWarning, ...] = ()
    """Non-fatal findings, e.g. a golden file that does not exist yet."""
    node: Node | None = field(default=None, compare=False, repr=False)
    """The scenario's YAML node, for `line_of` (None when built without a file or `detached`)."""
    top_level_lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)
    """Line of each top-level field's value (and of each UI turn's `ui` fields, by field path), kept by `detached` so
    `line_of` still answers for them without the node."""

    def detached(self) -> LoadedScenario:
        """This scenario without its YAML node: small to pickle, so `-j` workers get the scenario itself
        instead of parsing its file again. `line_of` still answers for top-level fields (what running needs)."""
        if self.node is None:
            return self
        lines: dict[str, int] = {}
        if isinstance(self.node, MappingNode):
            for key_node, value_node in self.node.value:  # the last equal key wins, as in `find_node`
                if isinstance(key_node, ScalarNode):
                    lines[str(key_node.value)] = node_position(value_node)[0]
        lines.update(ui_field_lines(self.node))  # a UI turn's errors at run time name its line
        return replace(self, node=None, top_level_lines=lines)

    @property
    def id(self) -> str:
        """A stable id, `path::name` (the name is unique across a loaded set)."""
        return f"{self.path.as_posix()}::{self.scenario.name}"

    @property
    def name(self) -> str:
        """The scenario's name."""
        return self.scenario.name

    @property
    def tags(self) -> tuple[str, ...]:
        """The scenario's tags (what `-k` matches, besides the name)."""
        return self.scenario.tags

    def resolve(self, relative: str) -> Path:
        """A file name from the scenario, resolved against the scenario file's directory."""
        return self.base_dir / relative

    def line_of(self, *field_path: PathElement) -> int:
        """The line of a field in the file (e.g. `line_of("turns", 1, "expect")`); the nearest ancestor's if absent."""
        if self.node is None:
            return self.top_level_lines.get(format_field_path(field_path), self.line)
        return node_position(find_node(self.node, field_path).node)[0]

    def declares(self, *field_path: PathElement) -> bool:
        """Whether the file itself writes this field (a default filled in later, e.g. `--deps`, does not).

        Once `detached`, only top-level fields are known: a nested one answers False."""
        if self.node is None:
            return len(field_path) == 1 and str(field_path[0]) in self.top_level_lines
        return find_node(self.node, field_path).found

    def system_prompt_text(self) -> str | None:
        """The system prompt: inline or from `system_prompt_file`, with `context_file` appended under `<user_context>`.

        None when the scenario gives neither a prompt nor a context file.
        """
        scenario = self.scenario
        prompt = scenario.system_prompt
        if scenario.system_prompt_file is not None:
            prompt = self._read_text(scenario.system_prompt_file, "system_prompt_file")
        if scenario.context_file is None:
            return prompt
        context = self._read_text(scenario.context_file, "context_file").strip()
        section = f"<{USER_CONTEXT_TAG}>\n{context}\n</{USER_CONTEXT_TAG}>"
        return section if not prompt else f"{prompt.rstrip()}\n\n{section}"

    def initial_history_path(self) -> Path | None:
        """The resolved `initial_history` file, if the scenario names one."""
        name = self.scenario.initial_history
        return None if name is None else self.resolve(name)

    def golden_path(self) -> Path | None:
        """The resolved `expect.golden` file, if the scenario names one (it may not exist yet)."""
        name = self.scenario.expect.golden
        return None if name is None else self.resolve(name)

    def _read_text(self, relative: str, field_name: str) -> str:
        target = self.resolve(relative)
        try:
            return read_input_text(target, limit=SCENARIO_FILE_LIMIT, what="a file a scenario names")
        except (OSError, UnicodeDecodeError, InputFileError) as error:
            message = f"cannot read {target}: {reason_of(error)}"
            raise ScenarioError(message, path=self.path, line=self.line_of(field_name), field=field_name) from None


# --------------------------------------------------------------------------------------------
# One file
# --------------------------------------------------------------------------------------------


def load_scenario_file(path: Path) -> list[LoadedScenario]:
    """Load and validate every scenario of one file; raise the first `ScenarioError` (the one on the earliest line)."""
    scenarios, errors = _load_file(Path(path))
    if errors:
        raise errors[0]
    return scenarios


def _load_file(path: Path) -> tuple[list[LoadedScenario], list[ScenarioError]]:
    if not _is_utf8(path):
        # report.json, junit.xml and summary.md name every scenario's file, and hold UTF-8 text only.
        return [], [ScenarioError("the file name is not UTF-8; rename the file (reports name it)", path=path)]
    try:
        text = read_input_text(path, limit=SCENARIO_FILE_LIMIT, what="a scenario file")
    except FileNotFoundError:
        return [], [ScenarioError("no such file", path=path)]
    except (OSError, UnicodeDecodeError, InputFileError) as error:  # a FIFO, a device, a file over the limit: unread
        return [], [ScenarioError(f"cannot read file: {reason_of(error)}", path=path)]
    return _load_text(text, path)


def _load_text(text: str, path: Path) -> tuple[list[LoadedScenario], list[ScenarioError]]:
    try:
        parsed = parse_yaml(text, path)
    except ScenarioError as error:
        return [], [error]
    root = parsed.root
    if root is None:
        return [], [ScenarioError("empty file: expected a scenario (a mapping) or a list of scenarios", path=path)]
    if isinstance(root, MappingNode):
        items: list[tuple[int, Node, object, tuple[PathElement, ...]]] = [(0, root, parsed.data, ())]
    elif isinstance(root, SequenceNode):
        if not root.value:
            return [], [_error_at(root, path, "empty list: expected at least one scenario")]
        data_items: list[object] = parsed.data
        items = [(index, node, data_items[index], (index,)) for index, node in enumerate(root.value)]
    else:
        return [], [_error_at(root, path, "expected a scenario (a mapping) or a list of scenarios")]

    loaded: list[LoadedScenario] = []
    errors: list[ScenarioError] = []
    for index, node, data, prefix in items:
        if not isinstance(node, MappingNode):
            errors.append(_error_at(node, path, "expected a scenario (a mapping)", prefix))
            continue
        try:
            scenario = Scenario.model_validate(data)
        except ValidationError as error:
            errors.extend(validation_errors(error, model=Scenario, root=node, path=path, prefix=prefix))
            continue
        file_errors, warnings = check_referenced_files(scenario, node, path, prefix)
        if file_errors:
            errors.extend(file_errors)
            continue
        loaded.append(
            LoadedScenario(
                scenario=scenario,
                path=path,
                index=index,
                line=node_position(node)[0],
                base_dir=path.parent,
                in_list=bool(prefix),
                warnings=tuple(warnings),
                node=node,
            )
        )
    return loaded, sorted(errors, key=lambda e: (e.line or 0, e.column or 0))


def _is_utf8(path: Path) -> bool:
    """The path is text: a non-UTF-8 byte of a file name comes back from the OS as a lone surrogate."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _error_at(node: Node, path: Path, message: str, prefix: tuple[PathElement, ...] = ()) -> ScenarioError:
    line, column = node_position(node)
    return ScenarioError(message, path=path, line=line, column=column, field=format_field_path(prefix) or None)


# --------------------------------------------------------------------------------------------
# Many files
# --------------------------------------------------------------------------------------------


def discover(paths: Sequence[Path]) -> list[Path]:
    """The scenario files under `paths`: files as given, directories searched recursively (sorted).

    Skips directories named `golden` or `recordings`, hidden directories, and files starting with `_`.
    A file named explicitly is always included. Raises `ScenarioError` for a path that does not exist.
    """
    found: list[Path] = []
    for given in paths:
        given = Path(given)
        if given.is_dir():
            found.extend(_scenario_files_under(given))
        elif given.exists():
            found.append(given)
        else:
            raise ScenarioError("no such file or directory", path=given)
    return list(dict.fromkeys(found))


def _scenario_files_under(directory: Path) -> list[Path]:
    files: list[Path] = []
    for candidate in directory.rglob("*"):
        relative_parts = candidate.relative_to(directory).parts
        if any(part in SKIPPED_DIRECTORIES or part.startswith(".") for part in relative_parts[:-1]):
            continue
        if candidate.suffix in SCENARIO_SUFFIXES and not candidate.name.startswith(("_", ".")) and candidate.is_file():
            files.append(candidate)
    return sorted(files)


@dataclass(frozen=True, slots=True, kw_only=True)
class FileReport:
    """What validating one file found."""

    path: Path
    """The scenario file (or the path given, when nothing could be read)."""
    scenarios: tuple[LoadedScenario, ...] = ()
    """The valid scenarios it holds."""
    errors: tuple[ScenarioError, ...] = ()
    """Every error found, in line order."""
    warnings: tuple[ScenarioWarning, ...] = ()
    """Non-fatal findings."""

    @property
    def ok(self) -> bool:
        """The file has no errors."""
        return not self.errors


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationReport:
    """What validating a set of paths found, file by file."""

    files: tuple[FileReport, ...]
    """One report per file (and per given path that yielded no file)."""

    @property
    def ok(self) -> bool:
        """Every file is valid."""
        return all(report.ok for report in self.files)

    @property
    def scenarios(self) -> list[LoadedScenario]:
        """Every valid scenario, in discovery order."""
        return [scenario for report in self.files for scenario in report.scenarios]

    @property
    def errors(self) -> list[ScenarioError]:
        """Every error, file by file."""
        return [error for report in self.files for error in report.errors]

    @property
    def warnings(self) -> list[ScenarioWarning]:
        """Every warning, file by file."""
        return [warning for report in self.files for warning in report.warnings]


def validation_report(paths: Iterable[Path]) -> ValidationReport:
    """Validate every scenario file under `paths`, collecting every error instead of stopping at the first."""
    return ValidationReport(files=tuple(_file_reports(paths, keep_nodes=True)))


def _file_reports(paths: Iterable[Path], *, keep_nodes: bool) -> Iterator[FileReport]:
    """What each file holds, file by file as they are read (`keep_nodes=False`: each scenario `detached`)."""
    seen_files: set[Path] = set()
    # name -> where it is first defined: only that, not the scenario (a run of 10,000 would hold them all here)
    names: dict[str, tuple[Path, int]] = {}
    for given in paths:
        given = Path(given)
        try:
            files = discover([given])
        except ScenarioError as error:
            yield FileReport(path=given, errors=(error,))
            continue
        if not files:
            message = f"no scenario files (*.yaml, *.yml) in {given}"
            yield FileReport(path=given, errors=(ScenarioError(message, path=given),))
            continue
        for file in files:
            if file in seen_files:
                continue  # named twice (e.g. a directory and a file in it)
            seen_files.add(file)
            loaded, errors = _load_file(file)
            unique: list[LoadedScenario] = []
            for scenario in loaded:
                first = names.get(scenario.name)
                unknown_tools = unknown_tool_call_errors(
                    scenario.scenario,
                    path=scenario.path,
                    node=scenario.node,
                    prefix=(scenario.index,) if scenario.in_list else (),
                )
                if unknown_tools:  # a typo in a script's tool name makes the file invalid, like any bad field
                    errors.extend(unknown_tools)
                elif first is None:
                    names[scenario.name] = (scenario.path, scenario.line_of("name"))
                    unique.append(scenario if keep_nodes else scenario.detached())
                else:
                    errors.append(_duplicate_name_error(scenario, first))
            yield FileReport(
                path=file,
                scenarios=tuple(unique),
                errors=tuple(sorted(errors, key=lambda e: (e.line or 0, e.column or 0))),
                warnings=tuple(warning for scenario in unique for warning in scenario.warnings),
            )


def _duplicate_name_error(duplicate: LoadedScenario, first: tuple[Path, int]) -> ScenarioError:
    line = duplicate.line_of("name")
    node = find_node(duplicate.node, ("name",)).node if duplicate.node is not None else None
    column = node_position(node)[1] if node is not None else None
    prefix: tuple[PathElement, ...] = (duplicate.index,) if duplicate.in_list else ()
    return ScenarioError(
        f"duplicate scenario name '{duplicate.name}' (first defined in {first[0]}:{first[1]})",
        path=duplicate.path,
        line=line,
        column=column,
        field=format_field_path((*prefix, "name")),
    )


def validate_paths(paths: Iterable[Path]) -> tuple[list[LoadedScenario], list[ScenarioError]]:
    """Every valid scenario under `paths` and every error found (in file order)."""
    report = validation_report(paths)
    return report.scenarios, report.errors


def load_paths(paths: Iterable[Path]) -> list[LoadedScenario]:
    """Every scenario under `paths`, `detached`; raise the first `ScenarioError` if any file is invalid."""
    return list(iter_scenarios(paths))


def iter_scenarios(paths: Iterable[Path]) -> Iterator[LoadedScenario]:
    """Every scenario under `paths`, `detached`, file by file as they are read; on reaching an invalid file, raise
    its first `ScenarioError` (the error `load_paths` raises). A run holds no file's parse tree past its checks:
    the trees were two thirds of a loaded run's memory."""
    for report in _file_reports(paths, keep_nodes=False):
        if report.errors:
            raise report.errors[0]
        yield from report.scenarios


def load_scenario_text(text: str, path: Path) -> list[LoadedScenario]:
    """Scenarios given as YAML text (`agentrig.testing`), named by `path`, whose folder resolves relative files; raises
    the first `ScenarioError`. Calls to tools the agent lacks are the caller's check (only it knows the agent)."""
    scenarios, errors = _load_text(text, Path(path))
    if errors:
        raise errors[0]
    return scenarios
