"""The interaction list ceilings (``attribution.ladder.list_ceilings``) take the typed interaction certificate
only: anything else (a plain JSON object, another kind of certificate) is a one-line InputError naming the file
and its ``format``, never a traceback."""

from __future__ import annotations

import pytest

from viewcert.attribution.ladder import list_ceilings
from viewcert.errors import InputError


@pytest.mark.parametrize("cert", [{"format": "viewcert-interaction-benchmark/1", "items": []}, None, "cert.json"])
def test_a_certificate_that_is_not_the_typed_interaction_record_is_one_line(cert):
    with pytest.raises(InputError, match="interaction certificate") as got:
        list_ceilings(cert, "c.json", None)
    assert "\n" not in str(got.value) and got.value.field == "format" and "c.json" in str(got.value)
