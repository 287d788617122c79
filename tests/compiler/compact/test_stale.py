"""Stale reads through the whole compiler: a record shown again supersedes the older payload."""

import json

import pytest

import compiler
from compiler.compact.lossless import decode

ORDER = {
    "order_id": "#W100",
    "user_id": "ana_1",
    "address": {"address1": "1 Elm Street", "city": "Austin", "zip": "73301"},
    "items": [
        {"name": "Lamp", "item_id": "11", "price": 31.5, "options": {"color": "red"}},
        {"name": "Kettle", "item_id": "12", "price": 40.0, "options": {"size": "1 l"}},
    ],
    "status": "pending",
    "payment_history": [{"transaction_type": "payment", "amount": 71.5}],
}


HEATER = {"name": "Heater", "note": "RECALLED unit"}


def _call(call_id: str, name: str, arguments: dict) -> dict:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _history(first: dict, second: dict) -> list[dict]:
    return [
        {"role": "user", "content": "Please cancel order #W100, I ordered it twice."},
        _call("c1", "get_order_details", {"order_id": "#W100"}),
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(first)},
        {"role": "assistant", "content": "Found it. Shall I cancel it? Say yes to go ahead."},
        {"role": "user", "content": "yes"},
        _call("c2", "cancel_pending_order", {"order_id": "#W100", "reason": "ordered by mistake"}),
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps(second)},
        {"role": "assistant", "content": "Done, the order is cancelled."},
    ]


def _tool_contents(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_a_record_returned_again_by_another_tool_replaces_the_older_payload():
    cancelled = {**ORDER, "status": "cancelled", "cancel_reason": "ordered by mistake"}
    out, telemetry = compiler.compile_messages(_history(ORDER, cancelled), cache=False)
    older, newer = _tool_contents(out)
    assert older.startswith('[stale read: record order_id="#W100" was shown again at turn 6;')
    assert "truncated=true" in older and "1 Elm Street" not in older
    assert "1 Elm Street" in newer and "ordered by mistake" in newer  # the current state
    shapes = [entry["shape"] for entry in telemetry["compacted_payloads"]]
    assert shapes[0] == "stale_read" and "stale_read" not in shapes[1:]


def test_a_narrower_view_of_the_same_record_replaces_nothing():
    narrow = {"order_id": "#W100", "status": "cancelled"}
    out, _ = compiler.compile_messages(_history(ORDER, narrow), cache=False)
    older, newer = _tool_contents(out)
    assert not older.startswith("[stale read")
    assert "1 Elm Street" in older and json.loads(newer) == narrow


def test_safety_rows_the_later_payload_does_not_repeat_are_kept():
    with_warning = {**ORDER, "items": [*ORDER["items"], HEATER]}
    later = {**ORDER, "status": "cancelled"}  # the recalled heater is not in it any more
    out, telemetry = compiler.compile_messages(_history(with_warning, later), cache=False)
    older = _tool_contents(out)[0]
    assert older.startswith("[stale read:")
    assert older.splitlines()[1:] == ['items: {"name":"Heater","note":"RECALLED unit"}']
    entry = next(e for e in telemetry["compacted_payloads"] if e["shape"] == "stale_read")
    assert entry["safety_rows_kept"] == 1


def test_a_safety_row_repeated_later_is_not_kept_twice():
    with_warning = {**ORDER, "items": [*ORDER["items"], HEATER]}
    later = {**with_warning, "status": "cancelled"}
    out, _ = compiler.compile_messages(_history(with_warning, later), cache=False)
    older, newer = _tool_contents(out)
    assert older.startswith("[stale read:") and "RECALLED" not in older
    assert "RECALLED unit" in newer


def test_records_with_different_ids_do_not_replace_each_other():
    other = {**ORDER, "order_id": "#W200"}
    out, _ = compiler.compile_messages(_history(ORDER, other), cache=False)
    assert not any(c.startswith("[stale read") for c in _tool_contents(out))


def test_the_shorter_of_notice_and_shape_wins():
    # a short record: its notice would be longer than the payload, so it is left alone
    small = {"order_id": "#W1", "status": "pending"}
    history = _history(small, {**small, "status": "cancelled"})
    out, _ = compiler.compile_messages(history, cache=False)
    assert json.loads(_tool_contents(out)[0]) == small


def test_cache_friendly_mode_leaves_stale_records_in_place():
    cancelled = {**ORDER, "status": "cancelled"}
    history = _history(ORDER, cancelled)
    out, _ = compiler.compile_messages(history, mode="cache_friendly", cache=False)
    # re-encoded losslessly at first sight, never elided: each decodes to what was read
    assert [decode(t) for t in _tool_contents(out)] == [ORDER, cancelled]


# --- payloads the agent has not answered yet ------------------------------------------

VARIANTS = {
    "variants": [
        {"item_id": str(7770000 + i), "color": f"colour {i}", "finish": "brushed steel, matte"}
        for i in range(12)
    ]
}


def _reads(count: int) -> list[dict]:
    history = [{"role": "user", "content": "Which colours does the lamp come in?"}]
    for i in range(count):
        history.append(_call(f"v{i}", "get_product_details", {"product_id": str(i)}))
        history.append({"role": "tool", "tool_call_id": f"v{i}", "content": json.dumps(VARIANTS)})
    return history


def test_a_payload_the_agent_has_not_answered_stays_whole():
    history = _reads(1)
    out, telemetry = compiler.compile_messages(history, cache=False)
    assert json.loads(_tool_contents(out)[0]) == VARIANTS  # every item id still there
    assert telemetry["tool_payloads_compacted"] == 0


def test_once_the_agent_has_spoken_the_payload_is_compacted():
    history = [*_reads(1), {"role": "assistant", "content": "It comes in twelve colours."}]
    out, telemetry = compiler.compile_messages(history, cache=False)
    assert "truncated=true" in _tool_contents(out)[0]
    assert telemetry["tool_payloads_compacted"] == 1


def test_at_most_four_unanswered_payloads_stay_whole():
    out, _ = compiler.compile_messages(_reads(6), cache=False)
    whole = [c for c in _tool_contents(out) if "truncated=true" not in c]
    assert len(whole) == 4 and whole == _tool_contents(_reads(6))[2:]


def test_an_unanswered_read_repeated_unanswered_is_still_stale():
    history = _reads(1)
    again = _call("v9", "get_product_details", {"product_id": "0"})
    history += [again, {"role": "tool", "tool_call_id": "v9", "content": json.dumps(VARIANTS)}]
    older, newer = _tool_contents(compiler.compile_messages(history, cache=False)[0])
    assert older.startswith("[stale read:") and json.loads(newer) == VARIANTS


# --- files shown in an editor window (SWE-agent) ------------------------------------


def _view(path: str, first: int, last: int, total: int = 400) -> str:
    lines = [f"[File: {path} ({total} lines total)]", f"({first - 1} more lines above)"]
    lines += [f"{n}:    value_{n} = compute({n})" for n in range(first, last + 1)]
    lines += [f"({total - last} more lines below)", "(Open file: /repo/src/app.py)"]
    return "\n".join([*lines, "(Current directory: /repo)", "bash-$"])


def _refused(first: int, last: int) -> str:
    return "\n".join(
        [
            "Your proposed edit has introduced new syntax error(s). Please read this error "
            "message carefully and then retry editing the file.",
            "",
            "ERRORS:",
            f"- E999 IndentationError: unexpected indent (attempt at line {first})",
            "",
            "This is how your edit would have looked if applied",
            "-" * 48,
            _view("/repo/src/app.py", first, last, total=401),
            "-" * 48,
            "Your changes have NOT been applied. Please fix your edit command and try again.",
        ]
    )


def _session(*payloads: tuple[str, dict, str]) -> list[dict]:
    history = [{"role": "user", "content": "Fix the rounding bug in src/app.py."}]
    for n, (name, arguments, text) in enumerate(payloads):
        history.append(_call(f"e{n}", name, arguments))
        history.append({"role": "tool", "tool_call_id": f"e{n}", "content": text})
    return [*history, {"role": "assistant", "content": "Done: the value is rounded now."}]


def test_an_edit_result_replaces_the_view_it_changed_whatever_the_call_or_path_form():
    opened = _view("src/app.py", 101, 200)  # relative path, the output names /repo
    edited = "Text replaced.\n" + _view("/repo/src/app.py", 103, 202, total=401)
    history = _session(("open", {"path": "src/app.py"}, opened), ("edit", {"s": "x"}, edited))
    older, newer = _tool_contents(compiler.compile_messages(history, cache=False)[0])
    head = "[stale read: file /repo/src/app.py was shown again at turn 4 (lines 103-202);"
    assert older.startswith(head)
    kept = older.split("\n")[1:]  # the two lines the later window does not show
    assert [line.split(":")[0] for line in kept] == ["101", "102"]
    assert newer == edited


def test_the_notice_names_the_lines_a_later_view_does_not_show():
    # a view of 1-100 replaced by one of 51-150 is not "shown again" whole: lines 1-50
    # are in no view left, so the notice names them
    top, lower = _view("/repo/src/app.py", 1, 100), _view("/repo/src/app.py", 51, 150)
    history = _session(("open", {"line": 1}, top), ("goto", {"line": 100}, lower))
    older, newer = _tool_contents(compiler.compile_messages(history, cache=False)[0])
    assert "was shown again at turn 4 (lines 51-150)" in older
    assert older.endswith("; its lines 1-50, which that view does not show, are omitted too]")
    assert newer == lower


def test_a_few_lines_a_later_view_does_not_show_are_kept():
    top, lower = _view("/repo/src/app.py", 1, 100), _view("/repo/src/app.py", 4, 103)
    history = _session(("open", {"line": 1}, top), ("goto", {"line": 4}, lower))
    older, _ = _tool_contents(compiler.compile_messages(history, cache=False)[0])
    assert [line.split(":")[0] for line in older.split("\n")[1:]] == ["1", "2", "3"]


def test_a_view_of_another_part_of_the_file_replaces_nothing():
    top, bottom = _view("/repo/src/app.py", 1, 100), _view("/repo/src/app.py", 61, 160)
    history = _session(("open", {"line": 1}, top), ("goto", {"line": 110}, bottom))
    assert _tool_contents(compiler.compile_messages(history, cache=False)[0]) == [top, bottom]


def test_a_refused_edit_leaves_the_file_view_and_keeps_its_lint_errors():
    real = _view("/repo/src/app.py", 101, 200)
    history = _session(
        ("open", {"line": 150}, real),
        ("edit", {"try": 1}, _refused(140, 160)),
        ("edit", {"try": 2}, _refused(141, 161)),
    )
    view, first_try, last_try = _tool_contents(compiler.compile_messages(history, cache=False)[0])
    assert view == real  # the edits were not applied: the file is as this view shows it
    assert first_try.startswith("[stale read: an edit that was not applied, file /repo/src/app.py")
    assert "- E999 IndentationError: unexpected indent (attempt at line 140)" in first_try
    assert last_try == _refused(141, 161)


def test_a_real_view_replaces_a_refused_edit():
    history = _session(
        ("edit", {"try": 1}, _refused(140, 160)),
        ("open", {"line": 150}, _view("/repo/src/app.py", 101, 200)),
    )
    refused, _ = _tool_contents(compiler.compile_messages(history, cache=False)[0])
    assert refused.startswith("[stale read: an edit that was not applied")


def _shell(command: str) -> dict:
    return {"role": "assistant", "content": f"Let's look.\n```\n{command}\n```"}


def _output(listing: list[str], directory: str) -> dict:
    footer = f"(Open file: n/a)\n(Current directory: {directory})\nbash-$"
    return {"role": "user", "content": "\n".join(listing) + "\n" + footer}


def test_the_same_command_run_in_another_directory_replaces_nothing():
    root = [f"file_{i}.py" for i in range(60)]
    inner = [f"module_{i}.py" for i in range(60)]
    messages = [
        {"role": "user", "content": "Fix the bug in the parser."},
        _shell("ls"),
        _output(root, "/repo"),
        _shell("cd src"),
        _output([], "/repo/src"),
        _shell("ls"),
        _output(inner, "/repo/src"),
        {"role": "assistant", "content": "The parser is in module_7.py."},
        {"role": "user", "content": "ok"},
    ]
    out, _ = compiler.compile_messages(messages, cache=False)
    assert "[stale read" not in out[2]["content"]
    assert "file_0.py" in out[2]["content"]


def test_the_same_command_run_again_in_the_same_directory_replaces_the_older_output():
    listing = [f"file_{i}.py" for i in range(60)]
    messages = [
        {"role": "user", "content": "Fix the bug in the parser."},
        _shell("ls"),
        _output(listing, "/repo"),
        {"role": "assistant", "content": "Let me check again."},
        {"role": "user", "content": "ok"},
        _shell("ls"),
        _output(listing, "/repo"),
        {"role": "assistant", "content": "Same files."},
        {"role": "user", "content": "ok"},
    ]
    out, _ = compiler.compile_messages(messages, cache=False)
    notice = "[stale read: command ls in /repo was shown again at turn 6;"
    assert out[2]["content"].startswith(notice)


def _two_lookups(first_tool: str, second_tool: str, *, same: bool = False) -> list[dict]:
    # no field carries a safety signal (an email would be kept as PII whatever happens)
    user = {"id": 7, "name": "Alice Smith", "plan": "gold", "notes": "morning calls " * 12}
    order = {**user, "name": "Order for Bob", "plan": "express", "status": "shipped"}
    later = {**user, "status": "active"} if same else order
    return [
        {"role": "user", "content": "Look up my account (user 7) and order 7."},
        _call("c1", first_tool, {"id": 7}),
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(user)},
        {"role": "assistant", "content": "Found your account."},
        _call("c2", second_tool, {"id": 7, "detail": True}),  # no repeated call
        {"role": "tool", "tool_call_id": "c2", "content": json.dumps(later)},
        {"role": "assistant", "content": "Found the order."},
        {"role": "user", "content": "Which plan am I on?"},
    ]


def test_a_bare_id_shared_by_records_from_different_tools_replaces_nothing():
    # user 7 and order 7: the order's fields include the user's, yet it is another record,
    # so the user's name and plan stay
    history = _two_lookups("get_user", "get_order")
    out, tel = compiler.compile_messages(history, cache=False)
    assert out[2]["content"] == history[2]["content"]
    assert tel["tool_payloads_compacted"] == 0


def test_a_bare_id_read_again_from_the_same_tool_is_a_stale_read():
    history = _two_lookups("get_user", "get_user", same=True)
    out, _ = compiler.compile_messages(history, cache=False)
    assert out[2]["content"].startswith("[stale read: record id=7 from get_user was shown again")


def _asked_twice(first: str, second: str, tool: str = "get_order_details") -> list[dict]:
    return [
        {"role": "user", "content": "check order #W1"},
        _call("c1", tool, {"order_id": "#W1"}),
        {"role": "tool", "tool_call_id": "c1", "content": first},
        _call("c2", tool, {"order_id": "#W1"}),
        {"role": "tool", "tool_call_id": "c2", "content": second},
        {"role": "assistant", "content": "Here it is."},
        {"role": "user", "content": "ok"},
    ]


_ORDER = json.dumps({"order_id": "#W1", "status": "pending", "note": "leave at the door " * 8})


@pytest.mark.parametrize(
    "second", ["Error: 503 Service Unavailable, please retry", "", "{}", "null"]
)
def test_a_failed_or_empty_answer_to_the_same_call_replaces_nothing(second):
    # the only copy of the order went, and the notice said it "was shown again"
    out, tel = compiler.compile_messages(_asked_twice(_ORDER, second), cache=False)
    assert out[2]["content"] == _ORDER
    assert tel["tool_payloads_compacted"] == 0


def _page(first: int) -> str:
    return json.dumps({"page": [f"flight HAT{n:03d}" for n in range(first, first + 9)]})


def test_an_answer_to_the_same_call_that_shows_other_things_replaces_nothing():
    history = _asked_twice(_page(0), _page(50), "next_page")
    out, _ = compiler.compile_messages(history, cache=False)
    assert out[2]["content"] == _page(0)


def test_a_later_answer_to_the_same_call_replaces_a_failed_one_and_a_refreshed_one():
    refreshed = _ORDER.replace("pending", "cancelled")
    failed = "Error: 503 Service Unavailable\n" + "  at upstream gateway (retry later)\n" * 8
    for first in (failed, _ORDER):
        out, _ = compiler.compile_messages(_asked_twice(first, refreshed), cache=False)
        assert out[2]["content"].startswith("[stale read: call get_order_details")


@pytest.mark.parametrize(
    ("tail", "lines"), [("\nb", 2), ("\nb\n", 2), ("\n\nb\n\n", 4), ("", 1), ("\n", 1)]
)
def test_a_stale_notice_counts_the_lines_a_reader_would_see(tail, lines):
    from compiler.compact.stale import elide

    text = "x" * 300 + tail  # long enough that the notice is shorter than the text
    assert f"({lines} lines, {len(text)} chars" in elide(text, replaced_by=3, key="k").text


def test_a_file_view_with_a_line_number_of_thousands_of_digits_compiles():
    view = "[File: /a.py (3 lines total)]\n" + "7" * 4301 + ":x\n"
    call = {"id": "c1", "type": "function", "function": {"name": "open", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "open it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": view},
        {"role": "assistant", "content": "done"},
    ]
    out, _ = compiler.compile_messages(messages, cache=False)
    assert out[2]["content"] == view


def test_a_stale_json_array_keeps_the_whole_item_a_safety_row_belongs_to():
    products = [{"sku": f"SKU-{i}", "name": f"Granola bar {i}", "stock": 10 + i} for i in range(12)]
    before = [dict(p) for p in products]
    before[7]["allergens"] = ["peanut"]
    after = [{**p, "allergens": []} if p["sku"] == "SKU-7" else p for p in products]
    messages = [{"role": "user", "content": "find granola"}]
    for n, payload in enumerate((before, after)):
        call = {
            "id": f"c{n}",
            "type": "function",
            "function": {"name": "search", "arguments": "{}"},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": json.dumps(payload, indent=2)},
            {"role": "assistant", "content": "noted"},
        ]
    out, _ = compiler.compile_messages([*messages, {"role": "user", "content": "ok"}], cache=False)
    notice = out[2]["content"]
    assert notice.startswith("[stale read:") and "(12 rows," in notice
    assert notice.splitlines()[1:] == [json.dumps(before[7], separators=(",", ":"))]
