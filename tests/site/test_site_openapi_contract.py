"""schemathesis over ``/api/openapi.json``: every answer is what the document says.

Requests generated from the document, valid and invalid, go through the whole site
(WSGI, every middleware) and each answer is checked against the document: a
documented status, the documented body, no 5xx, invalid requests refused, and valid
ones accepted. "Valid" is the document's word on a body's shape: a valid body may still
hold a transcript the compiler cannot read or messages none of which is a message
(``unparseable_transcript``, ``no_messages``), which no schema can say; those 422s are
allowed, any other refusal of a valid body fails. The number of examples is bounded so
the run stays under a minute.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import positive_data_acceptance

pytestmark = pytest.mark.django_db(transaction=True)  # the WSGI app closes what is not autocommit

EXAMPLES = 60
BEYOND_A_SCHEMA = {"unparseable_transcript", "no_messages"}


def valid_bodies_are_accepted(ctx, response, case):
    """A request valid by the document is answered 2xx, or refused only for what its
    content means (``BEYOND_A_SCHEMA``), never for its shape."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if 200 <= response.status_code < 300:
        return None
    code = response.json().get("error") if response.status_code == 422 else None
    assert code in BEYOND_A_SCHEMA, (
        f"a body the document allows was refused: {response.status_code} {response.text[:300]}"
    )
    return None


@pytest.fixture
def api_schema(settings):
    from playground.wsgi import application

    settings.RATELIMIT_ENABLE = False  # many requests a second from one client
    return schemathesis.openapi.from_wsgi("/api/openapi.json", application)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@hypothesis_settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)
def test_every_answer_is_what_the_openapi_document_says(case):
    case.call_and_validate(
        excluded_checks=[positive_data_acceptance], additional_checks=[valid_bodies_are_accepted]
    )
