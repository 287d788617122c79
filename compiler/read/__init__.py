"""Reading inputs: every transcript shape the compiler meets (text, OpenAI message lists,
JSONL, .traj, tau-bench, few-shot files), read as one tuple of ``Message`` objects and a
line-numbered warning for whatever could not be read. It also holds the exact JSON reader
and writers that every later wing uses, so a payload is decoded once per compile and
rewritten without changing a number or losing a duplicate key.
"""

from compiler.read.formats import formats_many
from compiler.read.items import as_message_dict, read_message_list
from compiler.read.jsonio import (
    CHECKING_DECODER,
    canonical_dumps,
    decode_json,
    dumps,
    encode_basestring,
    escape_surrogates,
    exact_numbers,
    json_text,
    may_be_json,
)
from compiler.read.messages import (
    Message,
    ToolCall,
    content_text,
    message_from_dict,
    message_to_dict,
    owned,
    with_content,
)
from compiler.read.pairing import Pairing, unpaired

__all__ = [
    "CHECKING_DECODER",
    "Message",
    "Pairing",
    "ToolCall",
    "as_message_dict",
    "canonical_dumps",
    "content_text",
    "decode_json",
    "dumps",
    "encode_basestring",
    "escape_surrogates",
    "exact_numbers",
    "formats_many",
    "json_text",
    "may_be_json",
    "message_from_dict",
    "message_to_dict",
    "owned",
    "read_message_list",
    "unpaired",
    "with_content",
]
