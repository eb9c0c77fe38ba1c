"""API keys on the dashboard (admins only): each key's share of the workers (its weight and its own cap of
work in flight) beside the work it has waiting and running, and a form to change the share."""

from __future__ import annotations

import math

from flask import flash, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as WerkzeugResponse

from api.admin.views import BIGINT_MAX, bp
from api.deps import database, settings
from services import keys as key_service
from services.errors import Invalid, ServiceError
from services.reads import dashboard


@bp.get("/keys")
def key_shares() -> str:
    shares = dashboard.key_shares(database())
    return render_template(
        "admin/keys.html",
        keys=shares.keys,
        unfinished=shares.unfinished,
        window=settings().max_in_flight_per_key,
        weight_range=key_service.WEIGHT_RANGE,
    )


@bp.post(f"/keys/<int(max={BIGINT_MAX}):key_id>")
def set_key_share(key_id: int) -> WerkzeugResponse:
    try:
        cap = _number("max_in_flight") if request.form.get("max_in_flight", "").strip() else None
        if cap is not None and not cap.is_integer():
            raise Invalid({"max_in_flight": ["must be a whole number"]})
        share = key_service.Share(_number("weight"), int(cap) if cap is not None else None)
        row = key_service.set_key_share(database(), key_id, share)
        cap_shown = row.max_in_flight or "-"
        flash(f"key {row.id} ({row.name}): weight {row.weight:g}, max in flight {cap_shown}", "ok")
    except ServiceError as refused:
        flash(_field_messages(refused.errors) or refused.message, "error")
    return redirect(url_for("admin.key_shares"))


def _number(name: str) -> float:
    """The form's field as a finite number; Invalid naming the field otherwise."""
    text = request.form.get(name, "").strip()
    try:
        value = float(text)
    except ValueError:
        shown = "".join(c if c.isprintable() else "?" for c in text[:20])
        raise Invalid({name: [f'not a number: "{shown}"' if text else "a number is needed"]}) from None
    if not math.isfinite(value):
        raise Invalid({name: ["must be a finite number"]})
    return value


def _field_messages(errors: dict[str, list[str]] | None) -> str:
    return "; ".join(f"{name}: {' '.join(why)}" for name, why in (errors or {}).items())
