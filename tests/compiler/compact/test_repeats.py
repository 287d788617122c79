"""What a payload repeats of another one still in front of the model is cut, and said so.

Four rules run after the stale reads and shapes are decided (``plan_repeats.RepeatCut``): a
file view's lines that a later view shows again, SWE-agent's review advice after every
edit but the latest, a JSON value an earlier visible payload shows verbatim, and the
SWE-agent status lines that repeat what was stated above. Each case below has a twin in
which the rule must not fire.
"""

import json

from compiler import compile_messages, load_schema

CODING = load_schema("coding")
LOGISTICS = load_schema("logistics")
TRAILER = "\n\n(Open file: {open})\n(Current directory: /repo)\nbash-$"
REVIEW = (
    "File updated. Please review the changes and make sure they are correct (correct "
    "indentation, no duplicate lines, etc). Edit the file again if necessary."
)
ADDRESS = {"address1": "157 Oak Street", "address2": "Suite 258", "city": "Phoenix", "zip": "85033"}


def _task(open_file="n/a"):
    return {"role": "user", "content": "Fix the rounding bug." + TRAILER.format(open=open_file)}


def _run(command):
    return {"role": "assistant", "content": f"Let me look.\n```\n{command}\n```"}


def _shell(output, open_file="n/a"):
    return {"role": "user", "content": output + TRAILER.format(open=open_file)}


def _view(path, first, last, total=200, after=""):
    lines = "".join(f"{n}:    value_{n} = compute({n}, scale=2)\n" for n in range(first, last + 1))
    text = f"[File: {path} ({total} lines total)]\n({first - 1} more lines above)\n{lines}{after}"
    return _shell(text.rstrip("\n"), open_file=path)


def _compile(messages, **options):
    options.setdefault("schema", CODING)
    return compile_messages(messages, cache=False, **options)


def _texts(out):
    """The contents of the compiled turns, the state header left out (these histories
    have no system message of their own), so each sits at its input index."""
    return [m.get("content") for m in out if m["role"] != "system"]


# --- status lines ---------------------------------------------------------------


def _session(*observations, task=None):
    """A SWE-agent session: the task, each observation after a command, and a last one
    (which keeps its status lines), then the agent's closing turn."""
    history = [task or _task()]
    for number, observation in enumerate([*observations, _shell("closing")]):
        history += [_run(f"step {number}"), observation]
    return [*history, {"role": "assistant", "content": "Done."}]


def test_it_drops_status_lines_that_repeat_the_last_ones_stated_and_counts_them():
    history = _session(_shell("344"), _shell("345"))
    out, tel = _compile(history)
    assert _texts(out)[2] == "344" and _texts(out)[4] == "345"
    assert _texts(out)[6] == history[6]["content"]  # the latest payload keeps its own
    assert tel["status_lines_dropped"] == 6
    assert tel["tool_payloads_compacted"] == 2
    assert {p["shape"] for p in tel["compacted_payloads"]} == {"status_lines"}


def test_it_keeps_an_open_file_line_that_differs_from_the_last_one_stated():
    out, tel = _compile(_session(_shell("344", open_file="/repo/a.py")))
    assert _texts(out)[2] == "344\n\n(Open file: /repo/a.py)"
    assert tel["status_lines_dropped"] == 2


def test_it_drops_the_open_file_line_that_names_the_file_the_view_shows():
    out, _ = _compile(_session(_view("/repo/a.py", 1, 3)))
    assert _texts(out)[2].endswith("\n3:    value_3 = compute(3, scale=2)")


def test_it_keeps_a_status_line_that_carries_a_safety_signal():
    # "warnings.py" matches the safety scan: a matching line is kept, as compaction keeps it
    out, tel = _compile(
        _session(_shell("1", "/repo/warnings.py"), _shell("2", "/repo/warnings.py"))
    )
    assert _texts(out)[4] == "2\n\n(Open file: /repo/warnings.py)"
    assert tel["status_lines_dropped"] == 4


def test_it_keeps_the_first_status_lines_in_front_of_the_model():
    task = {"role": "user", "content": "Fix the rounding bug."}  # without status lines
    out, tel = _compile(_session(_shell("344"), _shell("345"), task=task))
    assert _texts(out)[2] == _shell("344")["content"]
    assert _texts(out)[4] == "345"
    assert tel["status_lines_dropped"] == 3


def test_it_keeps_the_status_lines_of_the_first_user_turn_and_of_the_latest_message():
    history = _session(_shell("344"))[:-1]  # ends with a payload, not yet answered
    out, tel = _compile(history)
    assert _texts(out)[:2] == [m["content"] for m in history[:2]]
    assert _texts(out)[-1] == history[-1]["content"]
    assert tel["status_lines_dropped"] == 3


def test_it_counts_no_status_line_stated_only_in_a_stale_read():
    # the first view of a.py is replaced by the second: its "(Open file: /repo/a.py)"
    # is no longer in front of the model, so the shell output after it keeps its own
    history = _session(
        _view("/repo/a.py", 1, 30), _shell("ok", "/repo/a.py"), _view("/repo/a.py", 1, 30)
    )
    out, _ = _compile(history)
    assert _texts(out)[2].startswith("[stale read: file /repo/a.py")
    assert _texts(out)[4] == "ok\n\n(Open file: /repo/a.py)"


def test_cache_friendly_mode_leaves_out_repeated_status_lines_at_first_sight_only():
    # decided from the payload and what came before it: the latest payload loses its
    # repeats too, and a later turn never changes what an earlier compile sent
    history = _session(_shell("344"), _shell("345"))
    out, tel = _compile(history, mode="cache_friendly")
    texts = _texts(out)
    assert texts[:2] == [m["content"] for m in history[:2]]  # the task keeps its own
    assert (texts[2], texts[4]) == ("344", "345")
    assert tel["status_lines_dropped"] == 9  # 344, 345 and the closing output
    shorter, _ = _compile(history[:5], mode="cache_friendly")
    assert _texts(shorter) == texts[:5]


# --- SWE-agent's review advice ---------------------------------------------------------------


def test_it_omits_the_review_advice_of_every_edit_result_but_the_latest():
    out, _ = _compile(_session(_shell(REVIEW, "/repo/a.py"), _shell(REVIEW, "/repo/a.py")))
    assert _texts(out)[2] == "File updated. (review checklist omitted)\n\n(Open file: /repo/a.py)"
    assert _texts(out)[4] == REVIEW


def test_it_keeps_the_review_advice_of_the_only_edit_result_once_answered():
    out, tel = _compile(_session(_shell(REVIEW, "/repo/a.py")))
    assert _texts(out)[2] == REVIEW + "\n\n(Open file: /repo/a.py)"
    assert tel["status_lines_dropped"] == 2


# --- repeated JSON values ----------------------------------------------------------


def _call(call_id, name, arguments):
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _answer(call_id, value):
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(value)}


def _shop(*payloads, answered=True):
    history = [{"role": "user", "content": "Where does order #W1 ship to?"}]
    for number, (name, value) in enumerate(payloads):
        history += [_call(f"c{number}", name, {"n": number}), _answer(f"c{number}", value)]
    return (
        [*history, {"role": "assistant", "content": "It ships to Phoenix."}]
        if answered
        else history
    )


USER = {"user_id": "ana_1", "name": "Ana", "address": ADDRESS}
ORDER = {"order_id": "#W1", "user_id": "ana_1", "address": ADDRESS, "status": "pending"}


def test_it_points_a_json_value_an_earlier_visible_payload_shows_at_that_turn():
    out, tel = _compile(
        _shop(("get_user_details", USER), ("get_order_details", ORDER)), schema=LOGISTICS
    )
    assert json.loads(_texts(out)[4]) == {**ORDER, "address": "[same as turn 2]"}
    assert json.loads(_texts(out)[2])["address"] == ADDRESS
    assert tel["compacted_payloads"] == [
        {
            "turn": 4,
            "shape": "repeated_value",
            "chars_before": 163,
            "chars_after": 84,
            "rows_dropped": 0,
            "safety_rows_kept": 0,
        }
    ]


def test_it_points_at_a_value_shown_earlier_with_its_keys_in_another_order():
    shuffled = dict(reversed(list(ADDRESS.items())))
    history = _shop(
        ("get_user_details", USER), ("get_order_details", {**ORDER, "address": shuffled})
    )
    out, _ = _compile(history, schema=LOGISTICS)
    assert json.loads(_texts(out)[4])["address"] == "[same as turn 2]"


def test_it_points_at_no_value_equal_in_python_but_written_otherwise():
    # 1 == 1.0 == True for Python, but JSON writes each its own way
    for number in (1.0, True):
        user = {**USER, "address": {**ADDRESS, "floor": 1}}
        order = {**ORDER, "address": {**ADDRESS, "floor": number}}
        out, _ = _compile(
            _shop(("get_user_details", user), ("get_order_details", order)), schema=LOGISTICS
        )
        assert json.loads(_texts(out)[4]) == order, number


def test_it_points_at_a_value_holding_a_nan_shown_earlier():
    # NaN equals nothing in Python, not even itself: the value is still the same text
    address = {**ADDRESS, "lat": float("nan")}
    user, order = {**USER, "address": address}, {**ORDER, "address": address}
    out, _ = _compile(
        _shop(("get_user_details", user), ("get_order_details", order)), schema=LOGISTICS
    )
    assert json.loads(_texts(out)[4])["address"] == "[same as turn 2]"


def test_it_points_at_no_payload_a_later_read_made_stale():
    # the first order read is replaced by the third: the user record between them must
    # not point at it, since that text is no longer in front of the model
    cancelled = {**ORDER, "status": "cancelled"}
    history = _shop(
        ("get_order_details", ORDER), ("get_user_details", USER), ("get_order_details", cancelled)
    )
    out, _ = _compile(history, schema=LOGISTICS)
    assert _texts(out)[2].startswith("[stale read: record order_id=")
    assert json.loads(_texts(out)[4]) == USER
    assert json.loads(_texts(out)[6])["address"] == "[same as turn 4]"


def test_it_leaves_a_payload_not_yet_answered_whole():
    history = _shop(("get_user_details", USER), ("get_order_details", ORDER), answered=False)
    out, _ = _compile(history, schema=LOGISTICS)
    assert json.loads(_texts(out)[4]) == ORDER


def test_it_leaves_whole_a_payload_not_yet_answered_that_is_not_the_latest_message():
    history = _shop(("get_user_details", USER))
    history += [_call("c7", "get_order_details", {"n": 7}), _answer("c7", ORDER)]
    history += [_call("c8", "get_order_details", {"n": 8}), _answer("c8", {"order_id": "#W2"})]
    out, _ = _compile(history, schema=LOGISTICS)
    assert json.loads(_texts(out)[5]) == ORDER


def test_it_points_at_no_value_in_cache_friendly_mode():
    history = _shop(("get_user_details", USER), ("get_order_details", ORDER))
    out, _ = _compile(history, schema=LOGISTICS, mode="cache_friendly")
    assert json.loads(_texts(out)[4]) == ORDER


# --- the history cache ------------------------------------------------------------------


def test_every_prefix_gives_the_same_bytes_with_the_history_cache_as_without():
    coding = _session(
        _view("/repo/a.py", 1, 40),
        _shell(REVIEW, "/repo/a.py"),
        _view("/repo/a.py", 10, 15),
        _shell("344"),
    )
    shop = _shop(
        ("get_user_details", USER), ("get_order_details", ORDER), ("get_order_details", ORDER)
    )
    for history, schema in ((coding, CODING), (shop, LOGISTICS)):
        for end in range(1, len(history) + 1):
            cached = compile_messages(history[:end], schema=schema)
            fresh = compile_messages(history[:end], schema=schema, cache=False)
            cached[1].pop("compile_time_ms"), fresh[1].pop("compile_time_ms")
            assert json.dumps(cached) == json.dumps(fresh), end


def test_it_points_at_nothing_where_writing_the_payload_back_would_make_it_longer():
    # 1E15 written back by a float is 1000000000000000.0: the pointer would cost more
    numbers = ", ".join(f'"k{i}": 1E15' for i in range(15))
    order = '{"order_id": "#W1", "address": ' + json.dumps(ADDRESS) + ', "m": {' + numbers + "}}"
    history = _shop(("get_user_details", USER))
    history[-1:-1] = [_call("c9", "get_order_details", {"n": 9})]
    history.insert(-1, {"role": "tool", "tool_call_id": "c9", "content": order})
    out, tel = _compile(history, schema=LOGISTICS)
    assert _texts(out)[4] == order
    assert all(c["chars_after"] < c["chars_before"] for c in tel["compacted_payloads"])
