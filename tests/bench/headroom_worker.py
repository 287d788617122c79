"""headroom-ai's ``compress`` as a line worker, for ``tests/bench/billed.py``.

    HEADROOM_OFFLINE=1 /work/venvs/headroom/bin/python tests/bench/headroom_worker.py

headroom-ai lives in its own virtualenv (its dependencies are not the project's), so the
benchmark runs it here, in a subprocess: the first line written is ``{"ready": VERSION}``;
then each line read is a JSON list of chat messages and each line written is
``{"messages": [...]}`` (``compress(messages, model=MODEL).messages``, its documented
entry point, with its default settings) or ``{"error": "..."}``.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata

MODEL = "gpt-4o"


def main() -> None:
    out, sys.stdout = sys.stdout, sys.stderr  # whatever the library prints stays off the answers
    from headroom import compress

    out.write(json.dumps({"ready": metadata.version("headroom-ai")}) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            result = compress(json.loads(line), model=MODEL)
            answer = {"messages": result.messages}
        except Exception as exc:  # reported by the benchmark beside the transcript
            answer = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
