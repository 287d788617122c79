"""``cache_friendly``: runs of log lines in one form (pip's "Requirement already
satisfied" lines) written once as the form and a row per line, at first sight, losing
nothing; safety lines and file views left as they are.
"""

from compiler import compile_messages, load_schema
from compiler.compact.checkpoints import identifiers
from compiler.compact.line_forms import expand, shared_forms

CODING = load_schema("coding")
SITE = "/root/miniconda3/envs/marshmallow__3.13/lib/python3.9/site-packages"
PACKAGES = [
    ("pytest", ""),
    ("pytz", ""),
    ("mccabe<0.7.0,>=0.6.0", " (from flake8==4.0.1)"),
    ("attrs>=19.2.0", " (from flake8-bugbear==21.9.2)"),
    ("toml", " (from mypy==0.910)"),
    ("cfgv>=2.0.0", " (from pre-commit~=2.4)"),
]
PIP = "\n".join(
    ["Obtaining file:///repo", "  Preparing editable metadata (pyproject.toml): started"]
    + [
        f"Requirement already satisfied: {name} in {SITE}{came} ({n}.1)"
        for n, (name, came) in enumerate(PACKAGES)
    ]
    + ["Successfully installed marshmallow-3.13.0"]
)
TRAILER = "\n\n(Open file: n/a)\n(Current directory: /repo)\nbash-$"


def test_a_run_of_pip_lines_is_written_as_its_form_and_rows_and_expands_back():
    formed = shared_forms(PIP)
    assert f'each read "Requirement already satisfied: {{1}} in {SITE} {{2}}"' in formed
    assert "\nmccabe<0.7.0,>=0.6.0 (from flake8==4.0.1) (2.1)\n" in formed
    assert formed.count(SITE) == 1
    assert expand(formed) == PIP


def test_it_keeps_line_endings_and_lines_that_end_with_the_shared_words():
    lines = [f"Compiling mod{n} in /srv/build/output/objects" for n in range(10)]
    log = "\r\n".join(lines)  # every line but the last ends with a carriage return
    formed = shared_forms(log)
    assert formed.startswith('[the 10 lines below each read "Compiling {1} in /srv/build/')
    assert formed.endswith("\nmod8\r\nmod9")
    assert expand(formed) == log


def test_every_identifier_stays():
    assert set(identifiers(PIP)) <= set(identifiers(shared_forms(PIP)))


def test_a_line_with_a_safety_signal_stays_as_it_is():
    lines = PIP.split("\n")
    lines[7] = lines[7] + " contact admin@example.com"
    formed = shared_forms("\n".join(lines))
    assert "each read" in formed
    assert lines[7] in formed.split("\n")
    assert expand(formed) == "\n".join(lines)


def test_lines_it_is_told_to_keep_are_not_formed():
    lines = PIP.split("\n")
    assert shared_forms(PIP, keep=[(0, len(lines))]) is None


def _history(*outputs):
    history = [{"role": "user", "content": "Fix the rounding bug." + TRAILER}]
    for number, output in enumerate(outputs):
        history += [{"role": "assistant", "content": f"Step {number}.\n```\nrun {number}\n```"}]
        history += [{"role": "user", "content": output + TRAILER}]
    return [*history, {"role": "assistant", "content": "Done."}]


def _texts(history):
    out, _ = compile_messages(history, schema=CODING, cache=False, mode="cache_friendly")
    return [m.get("content") for m in out if m["role"] != "system"]


def test_a_pip_log_is_formed_at_first_sight_and_each_compile_starts_with_the_one_before():
    view = "[File: /repo/a.py (9 lines total)]\n" + "\n".join(
        f"{n}:    value = compute({n}, into=/srv/build/output/objects)" for n in range(1, 8)
    )
    history = _history("344", PIP, view, "345")
    texts = _texts(history)
    assert "each read" in texts[4] and texts[4].count(SITE) == 1
    assert texts[6].startswith(view)  # a file view's lines are never formed
    for n in range(2, len(history)):
        shorter, longer = _texts(history[:n]), _texts(history[: n + 1])
        assert longer[: len(shorter)] == shorter
