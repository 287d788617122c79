"""When a register value and a recorded field value mean the same (``same``): dates in
any spelling, cabins with spaces or underscores, a payment method id against its kind
and card brand, an address on its house number and street only. The records scorer
(``labelling.bench.records``) compares with it."""

from __future__ import annotations

import re
from typing import Any

from labelling.bench.gold import normalise

_STREET_SUFFIXES = {
    "st": "street",
    "ave": "avenue",
    "av": "avenue",
    "rd": "road",
    "dr": "drive",
    "ln": "lane",
    "blvd": "boulevard",
    "ct": "court",
    "pl": "place",
    "pkwy": "parkway",
    "ter": "terrace",
    "cir": "circle",
    "trl": "trail",
    "hwy": "highway",
}
_HOUSE = re.compile(r"^\s*(\d{1,6})\s+([A-Za-z][A-Za-z .'-]*?)\s*$")


def address_key(value: Any) -> tuple[str, str] | None:
    """House number and street of an address line or record, for comparison.

    Example:
        >>> address_key("464 Oak St., Suite 664, San Diego, CA 92135")
        ('464', 'oak street')
        >>> address_key({"address1": "464 Oak Street", "address2": "Suite 664"})
        ('464', 'oak street')
        >>> address_key("somewhere nice") is None
        True
    """
    line = value.get("address1", "") if isinstance(value, dict) else str(value)
    found = _HOUSE.match(line.split(",")[0])
    if not found:
        return None
    words = found.group(2).casefold().replace(".", " ").split()
    if words and words[-1] in _STREET_SUFFIXES:
        words[-1] = _STREET_SUFFIXES[words[-1]]
    return found.group(1), " ".join(words)


def street_line_only(value: str) -> bool:
    """Whether an address stops at the street line (no city, state or ZIP).

    Example:
        >>> street_line_only("464 Oak Street, Suite 664"), street_line_only("1 A St, Austin, TX")
        (True, False)
    """
    rest = [p.strip() for p in value.split(",")[1:]]
    return all(re.match(r"(?i)(apt|apartment|suite|unit|#)", p) for p in rest)


_BRANDS = {
    "visa": "visa",
    "mastercard": "mastercard",
    "master card": "mastercard",
    "amex": "amex",
    "american express": "amex",
    "discover": "discover",
}


_KINDS = (
    ("gift card", "gift_card"),
    ("paypal", "paypal"),
    ("credit card", "credit_card"),
    ("debit card", "credit_card"),
)


def payment_key(value: Any) -> tuple[str, str | None] | None:
    """(kind, brand or None) of a spoken payment method or a stored method id.

    Example:
        >>> payment_key("gift card balance"), payment_key("PayPal account")
        (('gift_card', None), ('paypal', None))
        >>> payment_key("Visa"), payment_key(("credit_card_4421486", "visa"))
        (('credit_card', 'visa'), ('credit_card', 'visa'))
        >>> payment_key("cash") is None
        True
    """
    if isinstance(value, tuple):
        method_id, brand = value
        kind = re.sub(r"_\d+$", "", method_id)
        return kind, (brand or None) if kind == "credit_card" else None
    text = " ".join(str(value).casefold().replace("-", " ").split())
    for spoken, brand in _BRANDS.items():
        if re.search(rf"\b{spoken}\b", text):
            return "credit_card", brand
    for spoken, kind in _KINDS:
        if spoken in text:
            return kind, None
    return None


# the slots whose values are street addresses, compared by house number and street
ADDRESS_SLOTS = frozenset({"delivery_address", "profile_address"})


def same(slot: str, value: str, recorded: Any) -> bool:
    """Whether a register value and a recorded field value mean the same.

    Example:
        >>> same("flight_date", "May 20th", "2024-05-20"), same("cabin_class", "basic economy",
        ...     "basic_economy")
        (True, True)
        >>> same("payment_method", "credit card", ("credit_card_1", "mastercard"))
        True
        >>> same("payment_method", "Visa", ("credit_card_1", "mastercard"))
        False
        >>> same("delivery_address", "760 Elm Ave", {"address1": "760 Elm Avenue"})
        True
        >>> same("profile_address", "667 Highland Dr, Apt 8", {"address1": "667 Highland Drive"})
        True
    """
    if recorded is None:
        return False
    if slot in ADDRESS_SLOTS:
        mine = address_key(value)
        return mine is not None and mine == address_key(recorded)
    if slot == "payment_method":
        mine, theirs = payment_key(value), payment_key(recorded)
        if mine is None or theirs is None or mine[0] != theirs[0]:
            return False
        return mine[1] is None or mine[1] == theirs[1]
    return normalise(slot, value) == normalise(slot, str(recorded))
