"""``cache_friendly``: a file view's lines that an earlier view shows verbatim become a
pointer to that turn when first seen, the same in every later compile; with checkpoints
(a ``cached_rate``) only a recent view is pointed at, and it is never cut by one.
"""

import re

from compiler import compile_messages, load_schema
from compiler.compact.checkpoints import RECENT_CALLS

CODING = load_schema("coding")
TRAILER = "\n\n(Open file: {open})\n(Current directory: /repo)\nbash-$"


def _run(command):
    return {"role": "assistant", "content": f"Let me look.\n```\n{command}\n```"}


def _view(path, first, last, changed=(), extra=""):
    lines = "".join(
        f"{n}:    value_{n} = compute({n}, scale={3 if n in changed else 2}){extra}\n"
        for n in range(first, last + 1)
    )
    text = f"[File: {path} (200 lines total)]\n({first - 1} more lines above)\n{lines}"
    return {"role": "user", "content": text.rstrip("\n") + TRAILER.format(open=path)}


def _session(*views):
    history = [{"role": "user", "content": "Fix the rounding bug." + TRAILER.format(open="n/a")}]
    for number, view in enumerate(views):
        history += [_run(f"step {number}"), view]
    return [*history, {"role": "assistant", "content": "Done."}]


def _texts(history, **options):
    out, _ = compile_messages(history, schema=CODING, cache=False, mode="cache_friendly", **options)
    return [m.get("content") for m in out if m["role"] != "system"]


def test_a_view_repeating_an_earlier_ones_lines_points_at_it_and_keeps_the_changed_line():
    history = _session(_view("/repo/a.py", 1, 20), _view("/repo/a.py", 5, 24, changed={12}))
    text = _texts(history)[4]
    assert "[lines 5-11 same as turn 2]" in text
    assert "12:    value_12 = compute(12, scale=3)" in text
    assert "[lines 13-20 same as turn 2]" in text
    assert "21:    value_21 = compute(21, scale=2)" in text  # new lines stay
    assert "5:    value_5" not in text


def test_each_compile_starts_with_the_compile_of_the_history_one_message_shorter():
    views = [_view("/repo/a.py", 1 + 3 * n, 30 + 3 * n, changed={10 + n}) for n in range(6)]
    history = _session(*views)
    assert any("same as turn" in (text or "") for text in _texts(history))
    for n in range(2, len(history)):
        shorter, longer = _texts(history[:n]), _texts(history[: n + 1])
        assert longer[: len(shorter)] == shorter


def test_a_line_carrying_a_safety_signal_is_shown_again():
    signal = " # contact admin@example.com"
    history = _session(
        _view("/repo/a.py", 1, 20, extra=signal), _view("/repo/a.py", 1, 20, extra=signal)
    )
    assert "same as turn" not in _texts(history)[4]


def test_another_files_view_is_not_pointed_at():
    history = _session(_view("/repo/a.py", 1, 20), _view("/repo/b.py", 1, 20))
    assert "same as turn" not in _texts(history)[4]


def test_a_view_a_checkpoint_could_have_cut_is_not_pointed_at():
    others = [_view(f"/repo/o{n}.py", 1, 5) for n in range(RECENT_CALLS)]
    history = _session(_view("/repo/a.py", 1, 20), *others, _view("/repo/a.py", 1, 20))
    assert "same as turn" not in _texts(history, cached_rate=0.5)[-2]


def test_with_no_checkpoints_a_view_of_any_age_is_pointed_at():
    others = [_view(f"/repo/o{n}.py", 1, 5) for n in range(RECENT_CALLS + 2)]
    history = _session(_view("/repo/a.py", 1, 20), *others, _view("/repo/a.py", 1, 20))
    texts = _texts(history)
    assert texts[-2].startswith("[File: /repo/a.py (200 lines total)]\n(0 more lines above)")
    assert "[lines 1-20 same as turn 2]" in texts[-2]
    assert "1:    value_1" not in texts[-2]
    assert "1:    value_1 = compute(1, scale=2)" in texts[2]  # what it points at stays


def test_a_view_pointed_at_is_never_cut_by_a_checkpoint():
    # a long loop over two files at a cached rate where checkpoints pay: each view of one
    # repeats most of the one before, each of the other is new throughout (a candidate
    # for a cut); the views pointed at read as they do with no checkpoint
    views = []
    for n in range(15):
        views += [
            _view("/repo/a.py", 1, 60, changed={n + 1}),
            _view("/repo/b.py", 1, 60, extra=f" # v{n}"),
        ]
    history = _session(*views)
    texts, uncut = _texts(history, cached_rate=0.5), _texts(history, cached_rate=0.0)
    assert texts != uncut, "a 30-call loop at cached rate 0.5 should pay for a cut"
    pointed = {int(turn) for text in texts for turn in re.findall(r"same as turn (\d+)", text)}
    assert pointed
    assert [texts[turn] for turn in sorted(pointed)] == [uncut[turn] for turn in sorted(pointed)]


def test_a_view_naming_the_file_from_the_current_directory_points_at_one_naming_it_in_full():
    relative = _view("src/a.py", 1, 20)
    relative["content"] = relative["content"].replace(
        "(Current directory: /repo)", "(Current directory: /repo)"
    )
    history = _session(relative, _view("/repo/src/a.py", 1, 20))
    assert "[lines 1-20 same as turn 2]" in _texts(history)[4]


def test_a_relative_path_shown_from_another_directory_is_not_pointed_at():
    moved = _view("src/a.py", 1, 20)
    moved["content"] = moved["content"].replace(
        "(Current directory: /repo)", "(Current directory: /other)"
    )
    history = _session(moved, _view("/repo/src/a.py", 1, 20))
    assert "same as turn" not in _texts(history)[4]


def _with_cursor(view, at):
    mark = f"{at}:    value_{at}"
    start, end = "<<<<< START CURSOR >>>>>", "<<<<< END CURSOR >>>>>"
    line = next(line for line in view["content"].split("\n") if line.startswith(mark))
    return {**view, "content": view["content"].replace(line, f"{start}\n{line}\n{end}")}


def test_a_view_with_cursor_marks_points_around_them_and_keeps_them():
    history = _session(_view("/repo/a.py", 1, 20), _with_cursor(_view("/repo/a.py", 1, 20), 10))
    text = _texts(history)[4]
    assert "[lines 1-9 same as turn 2]" in text
    assert "<<<<< START CURSOR >>>>>\n10:    value_10" in text  # a run of one stays
    assert "<<<<< END CURSOR >>>>>\n[lines 11-20 same as turn 2]" in text


def test_a_view_with_cursor_marks_is_pointed_at():
    history = _session(_with_cursor(_view("/repo/a.py", 1, 20), 2), _view("/repo/a.py", 1, 20))
    assert "[lines 1-20 same as turn 2]" in _texts(history)[4]  # the marks are not lines


NOT_APPLIED = (
    "Your proposed edit has introduced new syntax error(s).\n\nERRORS:\n"
    "- E999 IndentationError: unexpected indent\n\n"
    "This is how your edit would have looked if applied\n{would}\n\n"
    "This is the original code before your edit\n{was}\n"
    "Your changes have NOT been applied. Please fix your edit command and try again."
)


def _body(view):
    return view["content"].split("\n\n(Open file")[0]


def _preview(would, was):
    text = NOT_APPLIED.format(would=_body(would), was=_body(was))
    return {"role": "user", "content": text + TRAILER.format(open="/repo/a.py")}


def test_an_edit_preview_points_both_its_windows_at_an_earlier_view_and_keeps_its_errors():
    before = _view("/repo/a.py", 1, 20)
    preview = _preview(_view("/repo/a.py", 1, 20, changed={8}), before)
    text = _texts(_session(before, preview))[4]
    assert "- E999 IndentationError: unexpected indent" in text
    assert "Your changes have NOT been applied" in text
    assert "[lines 1-7 same as turn 2]\n8:    value_8 = compute(8, scale=3)" in text
    assert "[lines 9-20 same as turn 2]" in text  # the window as the edit would leave it
    assert "(0 more lines above)\n[lines 1-20 same as turn 2]" in text  # the original


def test_an_edit_preview_is_never_pointed_at():
    # its windows show a file that never was, and the file, under the same numbers
    before = _view("/repo/b.py", 1, 20)
    preview = _preview(_view("/repo/a.py", 1, 20, changed={8}), _view("/repo/a.py", 1, 20))
    history = _session(before, preview, _view("/repo/a.py", 1, 20))
    assert "same as turn" not in _texts(history)[6]


def test_each_compile_starts_with_the_one_before_over_previews_cursors_and_relative_paths():
    a = [_view("/repo/a.py", 1 + 2 * n, 25 + 2 * n, changed={9 + n}) for n in range(4)]
    relative = _view("a.py", 3, 30)
    history = _session(
        a[0],
        _with_cursor(a[1], 12),
        _preview(a[2], a[1]),
        relative,
        a[3],
        _view("/repo/b.py", 1, 20),
    )
    texts = _texts(history)
    assert sum("same as turn" in (text or "") for text in texts) >= 4
    for n in range(2, len(history)):
        shorter, longer = _texts(history[:n]), _texts(history[: n + 1])
        assert longer[: len(shorter)] == shorter


def test_the_pointer_is_written_in_the_first_compile_that_sees_the_view():
    history = _session(_view("/repo/a.py", 1, 20), _view("/repo/a.py", 1, 20, changed={12}))
    first_seen = _texts(history[:-1])[-1]  # the view is the last message, not answered yet
    assert "[lines 1-11 same as turn 2]" in first_seen
    assert first_seen == _texts(history)[4]


def _inserted(path, first, last, at, new):
    """A view of ``path`` after ``new`` lines were inserted before line ``at``."""
    view = _view(path, first, last)
    lines = view["content"].split("\n")
    out = []
    for line in lines:
        match = re.match(r"(\d+):(.*)", line)
        if match is None:
            out.append(line)
            continue
        number, text = int(match.group(1)), match.group(2)
        if number == at:
            out += [f"{at + k}:    inserted_{k} = True" for k in range(new)]
        out.append(f"{number + new}:{text}" if number >= at else line)
    return {**view, "content": "\n".join(out)}


def _expanded(texts, turn):
    """A compiled view with every pointer written back as the lines it stands for, read
    from the compiled text of the turn it names."""
    out = []
    for line in texts[turn].split("\n"):
        match = re.fullmatch(
            r"\[lines (\d+)-(\d+) same as (?:lines (\d+)-\d+ of )?turn (\d+)\]", line
        )
        if match is None:
            out.append(line)
            continue
        first, last, source, there = (int(g) if g else None for g in match.groups())
        source = first if source is None else source
        shown = {
            int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d+):(.*)$", texts[there], re.M)
        }
        out += [f"{first + k}:{shown[source + k]}" for k in range(last - first + 1)]
    return "\n".join(out)


def test_lines_an_edit_moved_point_at_their_old_numbers():
    history = _session(_view("/repo/a.py", 1, 30), _inserted("/repo/a.py", 1, 30, at=10, new=2))
    texts = _texts(history)
    assert "[lines 1-9 same as turn 2]" in texts[4]
    assert "10:    inserted_0 = True\n11:    inserted_1 = True" in texts[4]
    assert "[lines 12-32 same as lines 10-30 of turn 2]" in texts[4]


def test_every_pointer_writes_back_the_very_lines_it_stands_for():
    views = [
        _view("/repo/a.py", 1, 30),
        _inserted("/repo/a.py", 1, 30, at=10, new=2),
        _with_cursor(_view("/repo/a.py", 5, 40, changed={20}), 22),
        _inserted("/repo/a.py", 3, 35, at=20, new=1),
    ]
    history = _session(*views)
    texts = _texts(history)
    for turn in (4, 6, 8):
        body = history[turn]["content"].split("\n\n(Open file")[0]
        assert _expanded(texts, turn).split("\n\n(Open file")[0] == body


def test_a_short_line_begins_no_run_under_shifted_numbers():
    # the moved lines are blank or short: where each came from cannot be told
    view = _view("/repo/a.py", 1, 3)
    short = "\n".join(f"{n}:    )" for n in range(4, 12))
    before = {
        **view,
        "content": view["content"].replace(
            "3:    value_3 = compute(3, scale=2)", "3:    value_3 = compute(3, scale=2)\n" + short
        ),
    }
    moved = "\n".join(f"{n}:    )" for n in range(6, 14))
    after = {
        **view,
        "content": view["content"].replace(
            "3:    value_3 = compute(3, scale=2)",
            "3:    value_3 = compute(3, scale=2)\n4:    x = 1\n5:    y = 2\n" + moved,
        ),
    }
    texts = _texts(_session(before, after))
    assert "of turn" not in texts[4]


def test_a_warning_line_inside_a_long_repeated_body_is_shown_again_and_breaks_the_run():
    # the body is read whole for a safety signal first (a shortcut): one line carrying a
    # signal must still keep the whole from counting as clean
    warned = _view("/repo/a.py", 1, 30)
    warned["content"] = warned["content"].replace(
        "15:    value_15 = compute(15, scale=2)", "15:    value_15 = compute(15)  # warning: unsafe"
    )
    again = {**warned}
    text = _texts(_session(warned, again))[4]
    assert "[lines 1-14 same as turn 2]" in text
    assert "15:    value_15 = compute(15)  # warning: unsafe" in text
    assert "[lines 16-30 same as turn 2]" in text
